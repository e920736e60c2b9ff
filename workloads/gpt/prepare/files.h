// Whole-file reads and atomic writes, with messages that name the file.
#pragma once

#include <string>

namespace gpt {

/// Reads all of `path` into `content`.
bool ReadWholeFile(const std::string& path, std::string* content, std::string* err);

/// Writes `content` to `path` through a temporary file and a rename, so that
/// readers never see a half-written file.
bool WriteAtomically(const std::string& path, const std::string& content, std::string* err);

}  // namespace gpt
