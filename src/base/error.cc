#include "base/error.h"

namespace ratchet {

bool Error::Report(std::string* err) const {
  if (ok()) return true;
  *err = message_;
  return false;
}

const char* KindName(Error::Kind kind) {
  switch (kind) {
    case Error::Kind::kNone: return "ok";
    case Error::Kind::kInvalidArgument: return "invalid argument";
    case Error::Kind::kNotFound: return "not found";
    case Error::Kind::kCorruption: return "corruption";
    case Error::Kind::kNotSupported: return "not supported";
    case Error::Kind::kIO: return "I/O error";
    case Error::Kind::kBusy: return "busy";
    case Error::Kind::kExhausted: return "exhausted";
  }
  return "unknown";
}

}  // namespace ratchet
