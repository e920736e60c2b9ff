// Finding a loop directory and what is in it, for every subcommand.
#pragma once

#include <memory>
#include <string>

#include "base/error.h"
#include "base/read_file.h"  // ReadWholeFile, for the commands
#include "core/config.h"

namespace ratchet {

class SqliteLedger;

struct LoopPaths {
  std::string dir;     // absolute
  std::string config;  // dir/ratchet.toml
  std::string state;   // dir/.ratchet
  std::string ledger;  // dir/.ratchet/ledger.db
  std::string live;    // dir/.ratchet/live.json
  std::string lock;    // dir/.ratchet/lock
};

/// Makes `arg` absolute and checks it is a directory.
bool ResolveLoop(const std::string& arg, LoopPaths* paths, std::string* err);
/// Reads and parses dir/ratchet.toml (errors name file, line and column).
bool LoadLoopConfig(const LoopPaths& paths, LoopConfig* config, std::string* err);
/// Opens the ledger read-only: kNotFound, with what to do, when the loop has
/// none yet; otherwise SqliteLedger::Open's kinds (kCorruption: damaged).
Error OpenLedgerReadOnly(const LoopPaths& paths, std::unique_ptr<SqliteLedger>* ledger);
bool FileExists(const std::string& path);

/// Prints "ratchet: <message>" on stderr and returns 1 (for `return Fail(...)`).
int Fail(const std::string& message, int code = 1);  // prints it; returns code

}  // namespace ratchet
