#include "serve_client.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "protocol.h"

namespace gpt {
namespace {

constexpr uint64_t kMaxErrorText = 4096;
constexpr int kQuitGraceMs = 5000;

std::string Preview(const void* p, size_t n) {
  std::string s;
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n && i < 16; ++i) {
    s += b[i] >= 32 && b[i] < 127 ? std::string(1, static_cast<char>(b[i]))
                                  : "\\x" + std::string(1, "0123456789abcdef"[b[i] >> 4]) +
                                        "0123456789abcdef"[b[i] & 15];
  }
  return "'" + s + "'";
}

}  // namespace

ServeClient::ServeClient(int write_fd, int read_fd, std::string name, int timeout_ms)
    : write_fd_(write_fd), read_fd_(read_fd), name_(std::move(name)), timeout_ms_(timeout_ms) {}

bool ServeClient::Call(MessageType type, const std::string& payload, int64_t answer_size,
                       std::string* answer, std::string* err) {
  const std::string what = std::string("the ") + MessageName(static_cast<uint32_t>(type)) +
                           " request (number " + std::to_string(++requests_) + ")";
  const int64_t deadline = NowMs() + timeout_ms_;
  std::string why;
  if (!WriteMessage(write_fd_, kRequestMagic, type, payload, deadline, read_fd_, &why)) {
    *err = name_ + " did not take " + what + ": " + why;
    return false;
  }
  MessageHeader h;
  bool eof = false;
  if (!ReadHeader(read_fd_, &h, deadline, &eof, &why)) {
    *err = eof ? name_ + " closed its output instead of answering " + what +
                     " (did it exit? its stderr says why)"
           : why == "timed out" ? name_ + " gave no answer to " + what + " within " +
                                      std::to_string(timeout_ms_ / 1000) + " s"
                                : name_ + " broke off its answer to " + what + ": " + why;
    return false;
  }
  if (h.magic != kAnswerMagic) {
    *err = name_ + " wrote something that is not an answer to " + what + ": " +
           Preview(&h, sizeof h) + " (it must write nothing else on its stdout)";
    return false;
  }
  if (h.type == static_cast<uint32_t>(MessageType::kError)) {
    std::string text;
    if (h.size <= kMaxErrorText && ReadPayload(read_fd_, h.size, &text, deadline, &why)) {
      *err = name_ + " refused " + what + ": " + text;
    } else {
      *err = name_ + " refused " + what + " with an unreadable message";
    }
    return false;
  }
  if (h.type != static_cast<uint32_t>(type)) {
    *err = name_ + " answered " + what + " with a " + MessageName(h.type) + " message";
    return false;
  }
  if ((answer_size >= 0 && h.size != static_cast<uint64_t>(answer_size)) ||
      h.size > kMaxMessageBytes) {
    *err = name_ + " answered " + what + " with " + std::to_string(h.size) + " bytes" +
           (answer_size >= 0 ? ", not " + std::to_string(answer_size) : ", over the limit");
    return false;
  }
  if (!ReadPayload(read_fd_, h.size, answer, deadline, &why)) {
    *err = name_ + " broke off its answer to " + what + ": " + why;
    return false;
  }
  // Nothing may follow an answer until the next request.
  pollfd p{read_fd_, POLLIN, 0};
  if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0) {
    char extra[16];
    const ssize_t n = read(read_fd_, extra, sizeof extra);
    if (n > 0) {
      *err = name_ + " wrote past the protocol after answering " + what + ": " +
             Preview(extra, static_cast<size_t>(n));
      return false;
    }
  }
  return true;
}

bool ServeClient::Info(ModelInfo* info, std::string* err) {
  std::string answer, why;
  if (!Call(MessageType::kInfo, "", -1, &answer, err)) return false;
  if (!UnpackModelInfo(answer, info, &why)) {
    *err = name_ + " sent " + why;
    return false;
  }
  return true;
}

bool ServeClient::Make(const ModelSize& size, uint64_t seed, ModelInfo* info, std::string* err) {
  Packer p;
  PackModelSize(size, &p);
  p.Put(seed);
  std::string answer, why;
  if (!Call(MessageType::kMake, p.bytes(), -1, &answer, err)) return false;
  if (!UnpackModelInfo(answer, info, &why)) {
    *err = name_ + " sent " + why;
    return false;
  }
  return true;
}

bool ServeClient::Logits(const uint8_t* tokens, int batch, int T, std::vector<float>* logits,
                         std::string* err) {
  Packer p;
  p.Put(static_cast<int32_t>(batch));
  p.Put(static_cast<int32_t>(T));
  p.PutBytes(tokens, static_cast<size_t>(batch) * T);
  const size_t n = static_cast<size_t>(batch) * T * kVocab;
  std::string answer;
  if (!Call(MessageType::kLogits, p.bytes(), static_cast<int64_t>(n * sizeof(float)), &answer,
            err)) {
    return false;
  }
  logits->resize(n);
  std::copy_n(answer.data(), answer.size(), reinterpret_cast<char*>(logits->data()));
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite((*logits)[i])) {
      const size_t row = i / kVocab;
      *err = name_ + " gave a non-finite logit (sequence " + std::to_string(row / T) +
             " of the batch, position " + std::to_string(row % T) + ")";
      return false;
    }
  }
  return true;
}

bool ServeClient::SetParam(uint32_t index, const std::vector<float>& values, std::string* err) {
  Packer p;
  p.Put(index);
  p.PutBytes(values.data(), values.size() * sizeof(float));
  std::string answer;
  return Call(MessageType::kSetParam, p.bytes(), 0, &answer, err);
}

bool ServeClient::ForwardBackward(const uint8_t* inputs, const uint8_t* targets, int batch, int T,
                                  size_t total_values, double* loss, std::vector<float>* grads,
                                  std::string* err) {
  Packer p;
  p.Put(static_cast<int32_t>(batch));
  p.Put(static_cast<int32_t>(T));
  p.PutBytes(inputs, static_cast<size_t>(batch) * T);
  p.PutBytes(targets, static_cast<size_t>(batch) * T);
  std::string answer;
  const int64_t size = static_cast<int64_t>(sizeof(double) + total_values * sizeof(float));
  if (!Call(MessageType::kForwardBackward, p.bytes(), size, &answer, err)) return false;
  Unpacker u(answer);
  u.Get(loss);
  grads->resize(total_values);
  u.GetBytes(grads->data(), total_values * sizeof(float));
  return true;
}

bool ServeClient::Quit(std::string* err) {
  std::string answer;
  if (!Call(MessageType::kQuit, "", 0, &answer, err)) return false;
  // After its last answer the server has nothing more to say.
  pollfd p{read_fd_, POLLIN, 0};
  if (poll(&p, 1, kQuitGraceMs) == 1 && (p.revents & POLLIN) != 0) {
    char extra[16];
    const ssize_t n = read(read_fd_, extra, sizeof extra);
    if (n > 0) {
      *err =
          name_ + " wrote past the protocol after quit: " + Preview(extra, static_cast<size_t>(n));
      return false;
    }
  }
  return true;
}

}  // namespace gpt
