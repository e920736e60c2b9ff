#pragma once
// RATCHET_CHECK(condition, what): an invariant of ratchet's own code. When it
// does not hold ratchet has a bug, and going on could write a wrong ledger
// row or move the branch wrongly, so it stops at once (abort), naming the
// place. Unlike assert, NDEBUG does not remove it: release builds keep it.
// Stopping is safe because the ledger is written before every side effect:
// the next `ratchet run` recovers as from any crash, and ends the steps left
// running. Never for input (a config, a ledger row, a proposer's answer):
// those are errors the caller reports.

namespace ratchet {

/// Prints "ratchet: internal error at FILE:LINE: what (CONDITION does not
/// hold)" to stderr and aborts.
[[noreturn]] void CheckFailed(const char* condition, const char* what, const char* file, int line);

}  // namespace ratchet

#define RATCHET_CHECK(condition, what) \
  ((condition) ? static_cast<void>(0)  \
               : ::ratchet::CheckFailed(#condition, what, __FILE__, __LINE__))
