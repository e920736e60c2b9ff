// The key that authenticates the ledger's journal (journal.h). It lives
// outside every loop directory, in the user's configuration, which no
// sandboxed step can see (its $HOME is a scratch folder): $RATCHET_KEY_FILE
// if set, else $XDG_CONFIG_HOME/ratchet/ledger.key, else
// $HOME/.config/ratchet/ledger.key. Made once, 32 random bytes, mode 0600.
#pragma once

#include <string>

namespace ratchet {

struct LedgerKey {
  std::string bytes;  // empty when there is no key (see note)
  std::string path;   // where it is (or would be)
  std::string id;     // the first 16 hex digits of its SHA-256: names the key, reveals nothing
  std::string note;   // why there is no key, when there is none
};

/// The key at the configured path. create: make it when missing (a writer);
/// otherwise a missing key is no key, with a note. False only on I/O trouble
/// with a key that exists (unreadable, wrong size).
bool LoadLedgerKey(bool create, LedgerKey* key, std::string* err);

}  // namespace ratchet
