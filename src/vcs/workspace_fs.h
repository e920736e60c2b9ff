// The real Workspace (core/workspace.h): the loop directory on the local file
// system. Relative paths only; a path that leaves the root is refused.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/workspace.h"

namespace ratchet {

class FsWorkspace : public Workspace {
 public:
  /// `root` is made absolute (against the current directory) and normalised.
  explicit FsWorkspace(const std::string& root);

  const std::string& root() const override { return root_; }
  /// Walks the tree without following symlinks, skipping .git (at any depth:
  /// nested repositories) and the top-level .ratchet, and directories no glob
  /// can reach. A symlink is hashed as "symlink:" + its target path, so it can
  /// neither point outside the root nor collide with a file of that content.
  bool HashFiles(const std::vector<std::string>& globs, std::map<std::string, std::string>* hashes,
                 std::string* err) override;
  bool ReadFile(const std::string& rel_path, std::string* content, std::string* err) override;
  /// Keeps the permission bits of the file it replaces (an executable stays one).
  bool WriteFile(const std::string& rel_path, const std::string& content,
                 std::string* err) override;
  bool AppendFile(const std::string& rel_path, const std::string& content,
                  std::string* err) override;
  bool MakeDirs(const std::string& rel_path, std::string* err) override;
  bool Exists(const std::string& rel_path) override;
  bool RemoveAll(const std::string& rel_path, std::string* err) override;
  std::unique_ptr<Workspace> Subtree(const std::string& rel_path) override;

 private:
  /// root_ + "/" + rel_path, or false if rel_path is absolute or has "..".
  bool Resolve(const std::string& rel_path, std::string* abs, std::string* err) const;
  bool Walk(const std::string& rel_dir, const std::vector<std::string>& globs,
            std::map<std::string, std::string>* hashes, std::string* err) const;

  std::string root_;
};

/// SHA-256 of `data` as 64 lowercase hex digits.
std::string Sha256Hex(const std::string& data);

}  // namespace ratchet
