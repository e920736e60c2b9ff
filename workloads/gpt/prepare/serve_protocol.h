// The protocol between a fixed judge (trusted/evaluate, trusted/gradcheck)
// and the candidate's model server (build/serve): framed binary messages on
// two pipes, the judge writing requests and reading answers. Both sides
// include this header; only the judge decides what is asked.
//
// A message is a 16-byte header (magic, type, payload size) and the payload.
// Numbers are in the host's byte order (both ends run on one machine).
// Requests and their answers:
//   kInfo            -                                 -> ModelInfo
//   kLogits          int32 batch, int32 T, batch*T bytes -> batch*T*kVocab float32
//   kMake            ModelSize (5 x int32), uint64 seed -> ModelInfo   (--gradcheck only)
//   kSetParam        uint32 tensor, that tensor's float32s -> -         (--gradcheck only)
//   kForwardBackward int32 batch, int32 T, inputs, targets -> float64 loss, every
//                    tensor's float32 gradient in ModelInfo order       (--gradcheck only)
//   kQuit            -                                 -> -, then the server exits 0
// Any request may instead be answered by kError with a message (UTF-8).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_api.h"

namespace gpt {

inline constexpr uint32_t kRequestMagic = 0x51545047;  // "GPTQ"
inline constexpr uint32_t kAnswerMagic = 0x41545047;   // "GPTA"
/// No message may be larger: a bound on what either side allocates.
inline constexpr uint64_t kMaxMessageBytes = uint64_t{1} << 30;

enum class MessageType : uint32_t {
  kInfo = 1,
  kLogits = 2,
  kMake = 3,
  kSetParam = 4,
  kForwardBackward = 5,
  kQuit = 6,
  kError = 7,
};

/// "logits", "make", ... for messages.
const char* MessageName(uint32_t type);

struct MessageHeader {
  uint32_t magic = 0;
  uint32_t type = 0;
  uint64_t size = 0;
};
static_assert(sizeof(MessageHeader) == 16);

/// What a model server says about the model it serves.
struct ModelInfo {
  ModelSize size;
  int max_batch = 0;
  int max_context = 0;
  std::vector<TensorInfo> tensors;
  size_t TotalValues() const;
};

/// Appends plain values to a payload.
class Packer {
 public:
  template <typename T>
  void Put(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void PutBytes(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  void PutString(const std::string& s);
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

/// Reads plain values from a payload; every read is bounds-checked, and a
/// failed read makes ok() false for good.
class Unpacker {
 public:
  explicit Unpacker(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  bool Get(T* v) {
    return GetBytes(v, sizeof *v);
  }
  bool GetBytes(void* p, size_t n);
  /// A view of the next n bytes (nullptr if there are fewer).
  const char* Take(size_t n);
  bool GetString(std::string* s, size_t max_len);
  bool ok() const { return ok_; }
  size_t left() const { return bytes_.size() - at_; }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

void PackModelSize(const ModelSize& size, Packer* p);
bool UnpackModelSize(Unpacker* u, ModelSize* size);
std::string PackModelInfo(const ModelInfo& info);
/// Parses and checks a ModelInfo payload; false with a reason.
bool UnpackModelInfo(const std::string& payload, ModelInfo* info, std::string* err);

/// Writes one message (header + payload) to `fd`. With `deadline_ms` >= 0
/// (CLOCK_MONOTONIC milliseconds) the write gives up at that time, and if
/// `watch_fd` >= 0 becomes readable before the message is written, the write
/// stops with that reason (a peer that answers before it has read the whole
/// request is not following the protocol). EPIPE is an error, not a signal,
/// only if the caller ignores SIGPIPE.
bool WriteMessage(int fd, uint32_t magic, MessageType type, const std::string& payload,
                  int64_t deadline_ms, int watch_fd, std::string* err);

/// Reads one message's header; `eof` is set (and false returned) on a clean
/// end of stream before the first byte.
bool ReadHeader(int fd, MessageHeader* header, int64_t deadline_ms, bool* eof, std::string* err);
/// Reads exactly `n` bytes of payload.
bool ReadPayload(int fd, uint64_t n, std::string* payload, int64_t deadline_ms, std::string* err);

/// CLOCK_MONOTONIC in milliseconds, for deadlines.
int64_t NowMs();

}  // namespace gpt
