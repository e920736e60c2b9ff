#include "serve_protocol.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "protocol.h"

namespace gpt {
namespace {

// Waits until `fd` is ready for `events` or `watch_fd` has input; 0 when fd
// is ready, 1 when watch_fd became readable first, -1 on timeout or error.
int Wait(int fd, short events, int watch_fd, int64_t deadline_ms, std::string* err) {
  for (;;) {
    pollfd fds[2] = {{fd, events, 0}, {watch_fd, POLLIN, 0}};
    int timeout = -1;
    if (deadline_ms >= 0) {
      const int64_t left = deadline_ms - NowMs();
      if (left <= 0) {
        *err = "timed out";
        return -1;
      }
      timeout = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    const int n = poll(fds, watch_fd >= 0 ? 2 : 1, timeout);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *err = std::string("poll: ") + std::strerror(errno);
      return -1;
    }
    if (n == 0) continue;  // the deadline check above ends the loop
    if (watch_fd >= 0 && (fds[1].revents & POLLIN) != 0) return 1;
    // A watched stream that only hung up has nothing to say: stop watching
    // it (poll would report the hang-up again at once, forever).
    if (watch_fd >= 0 && fds[1].revents != 0) watch_fd = -1;
    if (fds[0].revents != 0) return 0;
  }
}

bool WriteAll(int fd, const char* p, size_t n, int64_t deadline_ms, int watch_fd,
              std::string* err) {
  while (n > 0) {
    if (deadline_ms >= 0 || watch_fd >= 0) {
      const int w = Wait(fd, POLLOUT, watch_fd, deadline_ms, err);
      if (w < 0) return false;
      if (w == 1) {
        *err = "the peer wrote before it had read the whole request";
        return false;
      }
    }
    const ssize_t k = write(fd, p, n);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k < 0) {
      *err = errno == EPIPE ? "the peer stopped reading (did it exit?)"
                            : std::string("write: ") + std::strerror(errno);
      return false;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// Reads exactly n bytes; *got says how many arrived before an error or EOF.
bool ReadAll(int fd, char* p, size_t n, int64_t deadline_ms, size_t* got, std::string* err) {
  *got = 0;
  while (*got < n) {
    if (deadline_ms >= 0 && Wait(fd, POLLIN, -1, deadline_ms, err) < 0) return false;
    const ssize_t k = read(fd, p + *got, n - *got);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k < 0) {
      *err = std::string("read: ") + std::strerror(errno);
      return false;
    }
    if (k == 0) {
      *err = "end of stream";
      return false;
    }
    *got += static_cast<size_t>(k);
  }
  return true;
}

}  // namespace

const char* MessageName(uint32_t type) {
  switch (static_cast<MessageType>(type)) {
    case MessageType::kInfo:
      return "info";
    case MessageType::kLogits:
      return "logits";
    case MessageType::kMake:
      return "make";
    case MessageType::kSetParam:
      return "set-param";
    case MessageType::kForwardBackward:
      return "forward-backward";
    case MessageType::kQuit:
      return "quit";
    case MessageType::kError:
      return "error";
  }
  return "unknown";
}

size_t ModelInfo::TotalValues() const {
  size_t n = 0;
  for (const TensorInfo& t : tensors) n += t.size();
  return n;
}

void Packer::PutString(const std::string& s) {
  Put(static_cast<uint32_t>(s.size()));
  PutBytes(s.data(), s.size());
}

bool Unpacker::GetBytes(void* p, size_t n) {
  const char* src = Take(n);
  if (src != nullptr) std::memcpy(p, src, n);
  return src != nullptr;
}

const char* Unpacker::Take(size_t n) {
  if (!ok_ || n > left()) {
    ok_ = false;
    return nullptr;
  }
  const char* p = bytes_.data() + at_;
  at_ += n;
  return p;
}

bool Unpacker::GetString(std::string* s, size_t max_len) {
  uint32_t n = 0;
  if (!Get(&n) || n > max_len) {
    ok_ = false;
    return false;
  }
  const char* p = Take(n);
  if (p != nullptr) s->assign(p, n);
  return p != nullptr;
}

void PackModelSize(const ModelSize& s, Packer* p) {
  for (int v : {s.depth, s.width, s.heads, s.context, s.batch}) p->Put(static_cast<int32_t>(v));
}

bool UnpackModelSize(Unpacker* u, ModelSize* s) {
  int32_t v[5];
  for (int32_t& x : v) {
    if (!u->Get(&x) || x < 1 || x > kMaxModelDim) return false;
  }
  *s = ModelSize{v[0], v[1], v[2], v[3], v[4]};
  return true;
}

std::string PackModelInfo(const ModelInfo& info) {
  Packer p;
  PackModelSize(info.size, &p);
  p.Put(static_cast<int32_t>(info.max_batch));
  p.Put(static_cast<int32_t>(info.max_context));
  p.Put(static_cast<uint32_t>(info.tensors.size()));
  for (const TensorInfo& t : info.tensors) {
    p.PutString(t.name);
    p.Put(static_cast<int32_t>(t.rows));
    p.Put(static_cast<int32_t>(t.cols));
  }
  return std::move(p.bytes());
}

bool UnpackModelInfo(const std::string& payload, ModelInfo* info, std::string* err) {
  Unpacker u(payload);
  *info = ModelInfo();
  int32_t max_batch = 0, max_context = 0;
  uint32_t n = 0;
  if (!UnpackModelSize(&u, &info->size) || !u.Get(&max_batch) || !u.Get(&max_context) ||
      !u.Get(&n) || max_batch < 1 || max_batch > kMaxModelDim || max_context < 1 ||
      max_context > kMaxModelDim || n > kMaxTensors) {
    *err = "a malformed model description (sizes out of range)";
    return false;
  }
  info->max_batch = max_batch;
  info->max_context = max_context;
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    TensorInfo t;
    int32_t rows = 0, cols = 0;
    if (!u.GetString(&t.name, kMaxTensorName) || !u.Get(&rows) || !u.Get(&cols) || rows < 1 ||
        cols < 1 || rows > kMaxModelDim || cols > kMaxModelDim) {
      *err = "a malformed model description (tensor " + std::to_string(i) + ")";
      return false;
    }
    t.rows = rows;
    t.cols = cols;
    total += t.size();
    info->tensors.push_back(std::move(t));
  }
  if (u.left() != 0 || total * sizeof(float) > kMaxMessageBytes) {
    *err = u.left() != 0 ? "a model description with trailing bytes"
                         : "a model description larger than the protocol allows";
    return false;
  }
  return true;
}

int64_t NowMs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

bool WriteMessage(int fd, uint32_t magic, MessageType type, const std::string& payload,
                  int64_t deadline_ms, int watch_fd, std::string* err) {
  MessageHeader h{magic, static_cast<uint32_t>(type), payload.size()};
  return WriteAll(fd, reinterpret_cast<const char*>(&h), sizeof h, deadline_ms, watch_fd, err) &&
         WriteAll(fd, payload.data(), payload.size(), deadline_ms, watch_fd, err);
}

bool ReadHeader(int fd, MessageHeader* header, int64_t deadline_ms, bool* eof, std::string* err) {
  size_t got = 0;
  *eof = false;
  if (ReadAll(fd, reinterpret_cast<char*>(header), sizeof *header, deadline_ms, &got, err)) {
    return true;
  }
  if (got == 0 && *err == "end of stream") *eof = true;
  if (got > 0) *err += " after " + std::to_string(got) + " bytes of a message header";
  return false;
}

bool ReadPayload(int fd, uint64_t n, std::string* payload, int64_t deadline_ms, std::string* err) {
  payload->resize(n);
  size_t got = 0;
  if (ReadAll(fd, payload->data(), n, deadline_ms, &got, err)) return true;
  *err += " after " + std::to_string(got) + " of " + std::to_string(n) + " payload bytes";
  return false;
}

}  // namespace gpt
