// The judge's end of the model-server protocol (serve_protocol.h): typed
// requests over two descriptors, each answer checked (magic, type, exact
// size, finite numbers) before anything uses it. Whatever the server does
// wrong -- exits, hangs, refuses, answers the wrong size, writes past the
// protocol, gives NaN -- becomes an error that says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "serve_protocol.h"

namespace gpt {

class ServeClient {
 public:
  /// Writes requests to `write_fd`, reads answers from `read_fd`; gives each
  /// answer `timeout_ms`. `name` goes into messages ("the model server").
  ServeClient(int write_fd, int read_fd, std::string name, int timeout_ms = 60000);

  bool Info(ModelInfo* info, std::string* err);
  bool Make(const ModelSize& size, uint64_t seed, ModelInfo* info, std::string* err);
  /// `logits` gets (batch, T, kVocab) values, all finite.
  bool Logits(const uint8_t* tokens, int batch, int T, std::vector<float>* logits,
              std::string* err);
  bool SetParam(uint32_t index, const std::vector<float>& values, std::string* err);
  /// `grads` gets `total_values` gradients (every tensor, in Info order).
  bool ForwardBackward(const uint8_t* inputs, const uint8_t* targets, int batch, int T,
                       size_t total_values, double* loss, std::vector<float>* grads,
                       std::string* err);
  /// Ends the conversation; fails if the server writes anything after it.
  bool Quit(std::string* err);

  /// Requests sent so far.
  int requests() const { return requests_; }

 private:
  // One request and its answer of exactly `answer_size` bytes (or any size
  // up to the limit when answer_size < 0).
  bool Call(MessageType type, const std::string& payload, int64_t answer_size, std::string* answer,
            std::string* err);

  int write_fd_, read_fd_;
  std::string name_;
  int timeout_ms_;
  int requests_ = 0;
};

}  // namespace gpt
