// Where the outer loop keeps its mechanisms, in the loop directory:
//   .ratchet/mechanisms/index.json        the names, in the order they came
//   .ratchet/mechanisms/<name>/manifest.json   origin, command, hooks, state and why
//   .ratchet/mechanisms/<name>/check.json      the check before use (external ones)
//   .ratchet/mechanisms/<name>/effect.json     calls, experiments acted on, keeps, gain
//   .ratchet/mechanisms/<name>/mechanism, author-prompt.md, author.log, stderr.log
//                                              (written by a coding agent)
// Without a workspace (benchmarks) nothing is kept.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/workspace.h"

namespace ratchet {

/// What ratchet reads back from a manifest.json. The folder is one a coding
/// agent wrote in, so the file is read as untrusted input: a missing,
/// damaged or wrongly typed field is left at its default, never thrown.
struct MechanismManifest {
  std::string origin;  // "builtin", "config", "agent"
  std::string state;   // "on", "off", "retired"
  std::string reason;
  int trials = 0;
  std::vector<std::string> command;  // empty unless every element is a string
};

class MechanismStore {
 public:
  explicit MechanismStore(Workspace* workspace) : workspace_(workspace) {}
  bool enabled() const { return workspace_ != nullptr; }

  /// ".ratchet/mechanisms/<name>" (relative), and its absolute path.
  static std::string Dir(const std::string& name);
  std::string AbsDir(const std::string& name) const;

  /// Writes a file of the mechanism's folder (and adds the name to the index).
  bool Write(const std::string& name, const std::string& file, const std::string& content,
             std::string* err);
  /// False when the file is not there or cannot be read.
  bool Read(const std::string& name, const std::string& file, std::string* content);
  bool Exists(const std::string& name, const std::string& file);
  /// The manifest (defaults when missing or damaged).
  MechanismManifest Manifest(const std::string& name);

  /// The names in the index, oldest first.
  std::vector<std::string> Names();

 private:
  bool AddToIndex(const std::string& name, std::string* err);
  Workspace* workspace_;
};

}  // namespace ratchet
