#include "core/scope.h"

#include <algorithm>

#include "core/glob.h"

namespace ratchet {

std::string CheckScope(const std::vector<FileChange>& changes, const LoopConfig& config) {
  for (const FileChange& change : changes) {
    if (!change.problem.empty())
      return change.path + " " + change.problem + "; a candidate holds regular files only";
    if (MatchesAny(config.protected_files, change.path))
      return "changed protected file " + change.path;
    if (!MatchesAny(config.edit_files, change.path)) {
      const char* verb = change.kind == FileChange::Kind::kAdded     ? "created "
                         : change.kind == FileChange::Kind::kDeleted ? "deleted "
                                                                     : "changed ";
      return std::string(verb) + change.path + ", which is not in edit.files";
    }
    if (change.kind == FileChange::Kind::kDeleted &&
        std::find(config.edit_files.begin(), config.edit_files.end(), change.path) !=
            config.edit_files.end())
      return "deleted " + change.path + ", which edit.files names (edit it, do not delete it)";
  }
  return "";
}

std::string CompareProtectedHashes(const std::map<std::string, std::string>& recorded,
                                   const std::map<std::string, std::string>& now) {
  for (const auto& [path, hash] : recorded) {
    auto it = now.find(path);
    if (it == now.end()) return "protected file " + path + " was removed";
    if (it->second != hash) return "protected file " + path + " changed";
  }
  for (const auto& [path, hash] : now) {
    if (!recorded.count(path)) return "protected file " + path + " appeared";
  }
  return "";
}

}  // namespace ratchet
