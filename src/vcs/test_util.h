// Helpers for tests that work on real directories and real git (header only;
// src/store tests use it too).
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ratchet::testing {

/// A fresh directory under $TMPDIR (or /tmp), removed with its content.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ratchet-test-XXXXXX";
    char* made = mkdtemp(tmpl.data());
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

struct CmdResult {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

/// Runs `cmd` with /bin/sh, capturing its output.
inline CmdResult Shell(const std::string& cmd) {
  CmdResult r;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  int status = pclose(f);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline void WriteText(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Makes git (CLI and libgit2) see no user or system configuration, and gives
/// the CLI an identity through the environment only, so that tests do not
/// depend on the machine they run on. Call before any git runs.
inline void IsolateGitConfig() {
  static TempDir* home = new TempDir();  // lives for the whole test binary
  setenv("HOME", home->path().c_str(), 1);
  setenv("XDG_CONFIG_HOME", (home->path() + "/.config").c_str(), 1);
  setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
  setenv("GIT_AUTHOR_NAME", "Test Author", 1);
  setenv("GIT_AUTHOR_EMAIL", "author@example.com", 1);
  setenv("GIT_COMMITTER_NAME", "Test Author", 1);
  setenv("GIT_COMMITTER_EMAIL", "author@example.com", 1);
}

}  // namespace ratchet::testing
