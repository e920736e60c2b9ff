// Where `ratchet init` finds templates/ and the workload sources their
// MANIFEST files name: ratchet's data folder.
#pragma once

#include <filesystem>
#include <string>

namespace ratchet {

/// The data folder, first of:
///  1. $RATCHET_HOME, when set (taken as it is);
///  2. the source tree this binary was built from, when the binary is the
///     one in its build tree and the source tree still has templates/;
///  3. <binary's folder>/../share/ratchet (what `cmake --install` writes),
///     when it has templates/;
///  4. the source tree, when it still has templates/ (a binary copied away).
/// Empty when none fits, with *err naming the places looked at.
std::filesystem::path FindRatchetHome(std::string* err);

}  // namespace ratchet
