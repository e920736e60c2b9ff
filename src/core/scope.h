// The scope rule: which changes a candidate may make. Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/repo.h"

namespace ratchet {

/// "" when every change is allowed; otherwise why not (the first offence):
/// an entry that is not a regular file (FileChange::problem: a symbolic
/// link, a fifo...), a change outside edit.files, any change to a protected file, or the
/// deletion of a file that edit.files names literally (not by a glob).
std::string CheckScope(const std::vector<FileChange>& changes, const LoopConfig& config);

/// "" when `now` has the same protected files with the same hashes as
/// `recorded`; otherwise which file was added, removed or changed.
std::string CompareProtectedHashes(const std::map<std::string, std::string>& recorded,
                                   const std::map<std::string, std::string>& now);

}  // namespace ratchet
