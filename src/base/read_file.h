#pragma once
// Reading a whole file into memory: the one place for the stream idiom and
// its error check, so that "could not read" is never mistaken for "empty".

#include <string>

namespace ratchet {

/// The bytes of the file at `path` (a link is followed). False when it cannot
/// be opened or a read fails; `*content` is then unspecified, and `*err`
/// (when given) says "cannot read PATH: why".
bool ReadWholeFile(const std::string& path, std::string* content, std::string* err = nullptr);

}  // namespace ratchet
