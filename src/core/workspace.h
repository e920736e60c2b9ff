// The file-system port for the loop directory: what the engine reads and
// writes besides git. The real implementation is src/vcs/workspace_fs.h.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ratchet {

class Workspace {
 public:
  virtual ~Workspace() = default;
  /// The loop directory (absolute).
  virtual const std::string& root() const = 0;
  /// SHA-256 (hex) of every regular file under root() whose relative path
  /// matches one of `globs` (see core/glob.h), tracked or not, .git and
  /// .ratchet excluded. Key: relative path.
  virtual bool HashFiles(const std::vector<std::string>& globs,
                         std::map<std::string, std::string>* hashes, std::string* err) = 0;
  virtual bool ReadFile(const std::string& rel_path, std::string* content, std::string* err) = 0;
  /// Writes atomically (temporary file, fsync, rename). Creates parent folders.
  virtual bool WriteFile(const std::string& rel_path, const std::string& content,
                         std::string* err) = 0;
  /// Appends (creating the file and its folders if needed).
  virtual bool AppendFile(const std::string& rel_path, const std::string& content,
                          std::string* err) = 0;
  virtual bool MakeDirs(const std::string& rel_path, std::string* err) = 0;
  virtual bool Exists(const std::string& rel_path) = 0;
  /// Removes a file or a whole folder (not following links), making folders a
  /// step made unwritable writable first. A path that does not exist is fine.
  virtual bool RemoveAll(const std::string& rel_path, std::string* err) = 0;
  /// The same file system rooted at root()/rel_path (a working copy), for
  /// proposers that edit files; `rel_path` must be a folder.
  virtual std::unique_ptr<Workspace> Subtree(const std::string& rel_path) = 0;
};

}  // namespace ratchet
