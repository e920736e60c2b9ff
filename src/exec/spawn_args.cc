#include "exec/spawn_args.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace ratchet {
namespace {

// errno of running `path` (0 if it can be run), checked the way execve would.
int CheckRunnable(const std::string& path_in,
                  const std::function<std::string(const std::string&)>& to_host) {
  std::string path = path_in;
  if (to_host) {
    if (!path.starts_with('/')) return ENOENT;  // relative to an unknown directory
    path = to_host(path);
    if (path.empty()) return ENOENT;
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return errno;
  if (!S_ISREG(st.st_mode)) return EACCES;
  if (access(path.c_str(), X_OK) != 0) return errno;
  return 0;
}

std::string Join(const std::string& dir, const std::string& name) {
  if (dir.empty() || name.starts_with('/')) return name;
  return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

}  // namespace

bool FindProgram(const std::string& name, const std::string& path_env, const std::string& cwd,
                 std::string* found, std::string* err,
                 const std::function<std::string(const std::string&)>& to_host) {
  auto fail = [&](int e) {
    *err = "cannot run '" + name + "': " + std::strerror(e);
    return false;
  };
  if (name.empty()) return fail(ENOENT);
  if (name.find('/') != std::string::npos) {
    if (int e = CheckRunnable(Join(cwd, name), to_host)) return fail(e);
    *found = name;  // execve resolves it after the chdir
    return true;
  }
  // Like execvp: the first runnable candidate wins; if none, report EACCES
  // when some candidate existed but could not be run, else ENOENT.
  const std::string path = path_env.empty() ? "/bin:/usr/bin" : path_env;
  int error = ENOENT;
  size_t begin = 0;
  for (;;) {
    size_t end = path.find(':', begin);
    std::string dir = path.substr(begin, end == std::string::npos ? end : end - begin);
    std::string candidate = Join(dir.empty() ? "." : dir, name);
    int e = CheckRunnable(Join(cwd, candidate), to_host);
    if (e == 0) {
      *found = candidate;
      return true;
    }
    if (e == EACCES) error = EACCES;
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return fail(error);
}

bool LooksSecret(const std::string& name) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "RATCHET_KEY_FILE") return true;
  for (const char* word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"})
    if (upper.find(word) != std::string::npos) return true;
  return false;
}

std::vector<std::string> MergeEnvironment(
    char* const* base, const std::vector<std::pair<std::string, std::string>>& add,
    bool drop_secrets) {
  std::vector<std::string> env;
  for (char* const* e = base; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (drop_secrets && eq && LooksSecret(std::string(*e, static_cast<size_t>(eq - *e)))) continue;
    env.emplace_back(*e);
  }
  for (const auto& [key, value] : add) {
    std::string entry = key + "=" + value;
    bool replaced = false;
    for (std::string& existing : env) {
      if (existing.size() > key.size() && existing[key.size()] == '=' &&
          existing.compare(0, key.size(), key) == 0) {
        existing = entry;
        replaced = true;
      }
    }
    if (!replaced) env.push_back(std::move(entry));
  }
  return env;
}

bool FindEnv(const std::vector<std::string>& env, const std::string& key, std::string* value) {
  for (const std::string& e : env) {
    if (e.size() > key.size() && e[key.size()] == '=' && e.compare(0, key.size(), key) == 0) {
      *value = e.substr(key.size() + 1);
      return true;
    }
  }
  return false;
}

CStringArray::CStringArray(std::vector<std::string> strings) : strings_(std::move(strings)) {
  ptrs_.reserve(strings_.size() + 1);
  for (std::string& s : strings_) ptrs_.push_back(s.data());
  ptrs_.push_back(nullptr);
}

}  // namespace ratchet
