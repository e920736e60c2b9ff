// What a command needs before it can be started, prepared in ratchet's own
// process (the supervisor that starts it may not allocate): the program's
// path, the environment, and C arrays for execve.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ratchet {

/// Finds the file that `name` (argv[0]) names, as execvp would: a name with a
/// '/' is used as is (relative to cwd, the directory the command will run in;
/// empty: ours); any other is searched in path_env ("" means "/bin:/usr/bin").
/// On failure fills *err like "cannot run 'foo': No such file or directory".
/// to_host, when given, maps a path as the command will see it to the host
/// file to check ("" when there is none): for a command run in a sandbox.
bool FindProgram(const std::string& name, const std::string& path_env, const std::string& cwd,
                 std::string* found, std::string* err,
                 const std::function<std::string(const std::string&)>& to_host = {});

/// `base` (a NULL-terminated "KEY=VALUE" array such as environ) with `add`
/// applied: a key already there gets the new value, a new key is appended.
std::vector<std::string> MergeEnvironment(
    char* const* base, const std::vector<std::pair<std::string, std::string>>& add,
    bool drop_secrets = false);

/// Whether an environment variable's name looks like it holds a credential
/// (…KEY…, …TOKEN…, …SECRET…, …PASSWORD…, …PASSWD…, …CREDENTIAL…, …AUTH…,
/// any case) or is ratchet's own RATCHET_KEY_FILE.
bool LooksSecret(const std::string& name);

/// Sets *value to the value of key in a "KEY=VALUE" list; false if absent.
bool FindEnv(const std::vector<std::string>& env, const std::string& key, std::string* value);

/// A NULL-terminated char* array over strings it owns, for execve.
class CStringArray {
 public:
  explicit CStringArray(std::vector<std::string> strings);
  CStringArray(const CStringArray&) = delete;
  CStringArray& operator=(const CStringArray&) = delete;
  char* const* get() const { return ptrs_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> ptrs_;
};

}  // namespace ratchet
