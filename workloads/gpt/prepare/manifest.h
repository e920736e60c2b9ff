// The data manifest: prepare writes each split with its size and SHA-256;
// every later step (trainer, evaluator) reads a split only through
// ReadVerified, which refuses a file that no longer matches.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpt {

inline constexpr char kManifestName[] = "manifest.txt";

struct ManifestEntry {
  std::string file;  // name inside the data directory, e.g. "val.bin"
  uint64_t size = 0;
  std::string sha256;  // lower-case hex
};

struct Manifest {
  std::string source;  // where the text came from, for people
  std::vector<ManifestEntry> files;
  const ManifestEntry* Find(const std::string& file) const;
};

/// Writes `files` (name, content) into `dir` (created if missing), then the
/// manifest last, each through a temporary file and a rename, so an
/// interrupted run never leaves a manifest that describes missing data.
bool WriteDataDir(const std::string& dir, const std::string& source,
                  const std::vector<std::pair<std::string, std::string>>& files, std::string* err);

/// Parses `dir`/manifest.txt.
bool ReadManifest(const std::string& dir, Manifest* manifest, std::string* err);

/// Reads `dir`/`file` and checks it against the manifest (listed, same size,
/// same SHA-256). On a mismatch the message says which and how to repair.
bool ReadVerified(const std::string& dir, const std::string& file, std::string* content,
                  std::string* err);

}  // namespace gpt
