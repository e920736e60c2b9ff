// The ledger's journal: an append-only record of every row ratchet wrote
// (experiments, runs, sessions, meta values), each entry chained to the one
// before it by a hash and authenticated by a MAC under a key kept outside
// the loop directory (ledger_key.h). Whoever can write the ledger file can
// change a row, and can even recompute the chain; without the key they
// cannot make the MACs agree, so Verify finds the change, and the journal
// holds what ratchet itself wrote to put the row back.
#pragma once

#include <string>

namespace ratchet {

struct JournalEntry {
  long long seq = 0;  // 1, 2, ... in write order
  double at = 0;
  std::string kind;   // "experiment", "run", "session" or "meta"
  std::string key;    // the row: experiment id, "id/attempt", session id, meta key
  std::string body;   // the row as canonical JSON
  std::string hash;   // JournalHash(previous entry's hash, this entry)
  std::string mac;    // JournalMac(key, hash); "" when written without a key
};

/// SHA-256 (hex) over the previous entry's hash and this entry's seq, kind,
/// key and body, each length-prefixed so that no two entries hash alike.
std::string JournalHash(const std::string& prev_hash, const JournalEntry& entry);

/// HMAC-SHA256 (hex) of `hash` under `key`; "" when `key` is empty.
std::string JournalMac(const std::string& key, const std::string& hash);

}  // namespace ratchet
