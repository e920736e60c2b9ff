#include "vcs/stale_locks.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <system_error>
#include <thread>

namespace ratchet {
namespace {

namespace fs = std::filesystem;

bool IsLockFile(const fs::directory_entry& entry) {
  std::error_code ec;
  return entry.is_regular_file(ec) && entry.path().extension() == ".lock";
}

}  // namespace

std::vector<std::string> FindGitLocks(const std::string& git_dir) {
  std::vector<std::string> locks;
  std::error_code ec;
  for (fs::directory_iterator it(git_dir, ec), end; !ec && it != end; it.increment(ec))
    if (IsLockFile(*it)) locks.push_back(it->path().string());
  ec.clear();
  for (fs::recursive_directory_iterator it(fs::path(git_dir) / "refs", ec), end; !ec && it != end;
       it.increment(ec))
    if (IsLockFile(*it)) locks.push_back(it->path().string());
  std::sort(locks.begin(), locks.end());
  return locks;
}

bool RemoveStaleGitLocks(const std::vector<std::string>& git_dirs, double settle_seconds,
                         std::vector<std::string>* removed, std::string* err) {
  auto find_all = [&] {
    std::vector<std::string> locks;
    for (const auto& dir : git_dirs) {
      auto found = FindGitLocks(dir);
      locks.insert(locks.end(), found.begin(), found.end());
    }
    std::sort(locks.begin(), locks.end());
    locks.erase(std::unique(locks.begin(), locks.end()), locks.end());
    return locks;
  };
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(settle_seconds);
  const std::vector<std::string> at_start = find_all();
  std::vector<std::string> left = at_start;
  // Poll: a lock that a live git command holds disappears within the wait.
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::vector<std::string> now = find_all();
    left.clear();
    // Only a lock that was there from the start has waited its full time.
    std::set_intersection(at_start.begin(), at_start.end(), now.begin(), now.end(),
                          std::back_inserter(left));
  }
  for (const auto& lock : left) {
    std::error_code ec;
    if (!fs::remove(lock, ec) && ec) {
      *err = "cannot remove the stale git lock " + lock + ": " + ec.message();
      return false;
    }
    if (!ec) removed->push_back(lock);
  }
  return true;
}

}  // namespace ratchet
