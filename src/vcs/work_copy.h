// Working copies: plain folders holding exactly one commit's files, made and
// read by ratchet itself (see core/repo.h). They have no .git, so nothing a
// step runs there can reach the repository; and they are read with lstat
// and hashed by content, so an index entry, an ignore rule, a timestamp or a
// git configuration a step prepared changes nothing about what is committed.
#pragma once

#include <string>

#include "core/repo.h"

struct git_repository;

namespace ratchet {

/// Writes the tree of commit `sha` into `dir` (created, with missing parents
/// refused: `dir` must not exist). Files are created with O_EXCL and links
/// with symlink(2), so nothing already there can redirect a write.
bool CheckoutCopy(git_repository* repo, const std::string& sha, const std::string& dir,
                  std::string* err);

/// Compares everything under `dir` with commit `base`, as CopyScan says.
/// Regular files are hashed as git blobs; those that differ are read once
/// and kept in the scan. Entries that are not regular files or symlinks, and
/// new or changed symlinks, get a FileChange::problem.
bool ScanCopy(git_repository* repo, const std::string& dir, const std::string& base,
              CopyScan* scan, std::string* err);

/// The commit of `scan` (see Repo::CommitScan), authored by `name` <`email`>.
bool CommitScan(git_repository* repo, const CopyScan& scan, const std::string& message,
                const std::string& name, const std::string& email, std::string* sha,
                std::string* err);

/// See Repo::Rebase.
bool RebaseCommit(git_repository* repo, const std::string& base, const std::string& theirs,
                  const std::string& ours, const std::string& message, const std::string& name,
                  const std::string& email, std::string* sha, std::string* conflict,
                  std::string* err);

}  // namespace ratchet
