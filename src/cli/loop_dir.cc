#include "cli/loop_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "store/sqlite_ledger.h"

namespace ratchet {

int Fail(const std::string& message, int code) {
  std::cerr << "ratchet: " << message << "\n";
  return code;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool ResolveLoop(const std::string& arg, LoopPaths* paths, std::string* err) {
  char resolved[PATH_MAX];
  if (!::realpath(arg.c_str(), resolved)) {
    *err = arg + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::stat(resolved, &st) != 0 || !S_ISDIR(st.st_mode)) {
    *err = arg + " is not a directory";
    return false;
  }
  paths->dir = resolved;
  paths->config = paths->dir + "/ratchet.toml";
  paths->state = paths->dir + "/.ratchet";
  paths->ledger = paths->state + "/ledger.db";
  paths->live = paths->state + "/live.json";
  paths->lock = paths->state + "/lock";
  return true;
}

bool LoadLoopConfig(const LoopPaths& paths, LoopConfig* config, std::string* err) {
  if (!FileExists(paths.config)) {
    *err = paths.dir + " has no ratchet.toml (`ratchet init --template toy DIR` makes a loop)";
    return false;
  }
  std::string text;
  if (!ReadWholeFile(paths.config, &text, err)) return false;
  return ParseLoopConfig(text, paths.config, config, err);
}

Error OpenLedgerReadOnly(const LoopPaths& paths, std::unique_ptr<SqliteLedger>* ledger) {
  if (!FileExists(paths.ledger))
    return Error::NotFound(paths.dir + " has no ledger yet: `ratchet run " + paths.dir +
                           "` starts the loop");
  return SqliteLedger::Open(paths.ledger, /*create=*/false, /*read_only=*/true, ledger);
}

}  // namespace ratchet
