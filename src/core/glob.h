// Path globs for ratchet.toml (`edit.files`, `edit.protected`). Pure string
// matching: no system calls, so scope policy is testable without a file system.
//
// Paths and patterns are relative to the loop root with '/' separators.
//   *        any run of characters except '/'
//   ?        one character except '/'
//   [abc]    one of a, b, c; [a-z] a range; [!a] or [^a] anything but a (never '/')
//   **       as a whole segment: any number of directories, zero included
//            (`**/x.py`, `src/**`, `a/**/b`); elsewhere it behaves like `*`
//   \c       the character c literally
// A pattern that matches a directory also matches every path below it, so
// `prepare` and `prepare/` both cover `prepare/data.bin`. A leading "./" and a
// trailing '/' are ignored; empty segments ("a//b") are skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ratchet {

/// True if `path` (or a directory above it) matches `pattern`. An empty
/// pattern matches nothing.
bool GlobMatch(std::string_view pattern, std::string_view path);

/// True if any of `globs` matches `path`.
bool MatchesAny(const std::vector<std::string>& globs, std::string_view path);

/// True if some path at or below directory `dir` could match `pattern`: lets a
/// file walk skip whole directories that no glob can reach. `dir` "" is the root.
bool GlobMayMatchBelow(std::string_view pattern, std::string_view dir);

/// True if GlobMayMatchBelow holds for any of `globs`.
bool AnyMayMatchBelow(const std::vector<std::string>& globs, std::string_view dir);

}  // namespace ratchet
