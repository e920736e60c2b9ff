// The files of the ledger that ratchet holds open while a loop runs
// (.ratchet/ledger.db, its -wal and -shm, and the loop's lock), told to a
// StateGuard so it keeps them by inode and restores their bytes in place.
#pragma once

#include <cstdint>
#include <string>

#include "core/state_guard.h"

namespace ratchet {

class LedgerFiles : public HeldFiles {
 public:
  bool Held(const std::string& rel) const override;
  /// ledger.db-shm: SQLite's shared-memory index changes whenever a reader
  /// (`ratchet status`) looks.
  bool WrittenByReaders(const std::string& rel) const override;
  /// The -shm index must match the restored database and log, so it goes
  /// back with either; the lock stands alone.
  std::string RestoredWith(const std::string& rel) const override;
  bool Read(const std::string& path, uint64_t dev, uint64_t ino, std::string* content) override;
  bool WriteInPlace(const std::string& path, uint64_t dev, uint64_t ino, const std::string& content,
                    unsigned mode) override;
};

}  // namespace ratchet
