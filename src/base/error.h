#pragma once
// A failure that says what kind it is, for the places where a caller must
// tell failures apart, in the manner of LevelDB's Status (and LLVM's Error;
// `Status` is the name of an experiment's end here). Most of ratchet reports
// failure as `bool` plus a message, which is all a caller needs that only
// passes the message on; a function returns an Error instead when some
// caller acts on the kind: a loop held by another run is no failure for
// `--if-idle`, a search with no point left has nothing to propose, a damaged
// ledger is an audit finding while a missing one is bad input.

#include <string>
#include <utility>

namespace ratchet {

class [[nodiscard]] Error {
 public:
  enum class Kind {
    kNone,             // no failure
    kInvalidArgument,  // the request or its input is wrong
    kNotFound,         // what was asked for does not exist
    kCorruption,       // stored data is damaged, or is not what it claims to be
    kNotSupported,     // valid, but beyond what this ratchet can do (a newer format)
    kIO,               // the system failed: open, read, write, lock
    kBusy,             // someone else holds it now; the same call may work later
    kExhausted,        // nothing left to give: every choice has been used
  };

  /// No failure.
  Error() = default;
  static Error InvalidArgument(std::string message) {
    return {Kind::kInvalidArgument, std::move(message)};
  }
  static Error NotFound(std::string message) { return {Kind::kNotFound, std::move(message)}; }
  static Error Corruption(std::string message) { return {Kind::kCorruption, std::move(message)}; }
  static Error NotSupported(std::string message) {
    return {Kind::kNotSupported, std::move(message)};
  }
  static Error IO(std::string message) { return {Kind::kIO, std::move(message)}; }
  static Error Busy(std::string message) { return {Kind::kBusy, std::move(message)}; }
  static Error Exhausted(std::string message) { return {Kind::kExhausted, std::move(message)}; }
  /// A failure of a kind known only at run time (from a library's code);
  /// kNone gives no failure.
  static Error Of(Kind kind, std::string message) {
    return kind == Kind::kNone ? Error() : Error(kind, std::move(message));
  }

  bool ok() const { return kind_ == Kind::kNone; }
  Kind kind() const { return kind_; }
  bool Is(Kind kind) const { return kind_ == kind; }
  /// What failed, for a person: empty when ok().
  const std::string& message() const { return message_; }

  /// For callers on the bool-and-message convention: on failure writes the
  /// message into `*err`; returns ok().
  bool Report(std::string* err) const;

 private:
  Error(Kind kind, std::string message) : kind_(kind), message_(std::move(message)) {}

  Kind kind_ = Kind::kNone;
  std::string message_;
};

/// "ok", "invalid argument", "not found", "corruption", ...
const char* KindName(Error::Kind kind);

}  // namespace ratchet
