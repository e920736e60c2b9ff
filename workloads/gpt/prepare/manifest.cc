#include "manifest.h"

#include <filesystem>
#include <sstream>

#include "files.h"
#include "sha256.h"

namespace gpt {
namespace {

constexpr char kRepairHint[] =
    "the prepared data was changed or is incomplete; prepare it again (make data)";

}  // namespace

const ManifestEntry* Manifest::Find(const std::string& file) const {
  for (const auto& e : files) {
    if (e.file == file) return &e;
  }
  return nullptr;
}

bool WriteDataDir(const std::string& dir, const std::string& source,
                  const std::vector<std::pair<std::string, std::string>>& files, std::string* err) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *err = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  // Remove the old manifest first: until the new one is written, the
  // directory holds no data that claims to be verified.
  std::filesystem::remove(dir + "/" + kManifestName, ec);
  std::string manifest =
      "# gpt workload data: every step that reads a split checks its size and SHA-256 here.\n"
      "format 1\n"
      "source " +
      source + "\n";
  for (const auto& [name, content] : files) {
    if (!WriteAtomically(dir + "/" + name, content, err)) return false;
    manifest +=
        "file " + name + " " + std::to_string(content.size()) + " " + Sha256Hex(content) + "\n";
  }
  return WriteAtomically(dir + "/" + kManifestName, manifest, err);
}

bool ReadManifest(const std::string& dir, Manifest* manifest, std::string* err) {
  const std::string path = dir + "/" + kManifestName;
  std::string text;
  if (!ReadWholeFile(path, &text, err)) {
    *err += " (no prepared data here; run make data, or set GPT_DATA_DIR)";
    return false;
  }
  *manifest = Manifest();
  std::istringstream lines(text);
  std::string line;
  bool format_seen = false;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "format") {
      int version = 0;
      words >> version;
      if (version != 1) {
        *err = where + "unknown manifest format (expected 1)";
        return false;
      }
      format_seen = true;
    } else if (key == "source") {
      manifest->source = line.size() > 7 ? line.substr(7) : "";
    } else if (key == "file") {
      ManifestEntry e;
      std::string rest;
      if (!(words >> e.file >> e.size >> e.sha256) || (words >> rest) || e.sha256.size() != 64) {
        *err = where + "expected 'file NAME SIZE SHA256'";
        return false;
      }
      manifest->files.push_back(e);
    } else {
      *err = where + "unknown line '" + key + "'";
      return false;
    }
  }
  if (!format_seen) {
    *err = path + ": no 'format' line; " + kRepairHint;
    return false;
  }
  return true;
}

bool ReadVerified(const std::string& dir, const std::string& file, std::string* content,
                  std::string* err) {
  Manifest manifest;
  if (!ReadManifest(dir, &manifest, err)) return false;
  const ManifestEntry* entry = manifest.Find(file);
  const std::string path = dir + "/" + file;
  if (entry == nullptr) {
    *err = path + " is not listed in " + dir + "/" + kManifestName + "; " + kRepairHint;
    return false;
  }
  if (!ReadWholeFile(path, content, err)) {
    *err += "; " + std::string(kRepairHint);
    return false;
  }
  if (content->size() != entry->size) {
    *err = path + " has " + std::to_string(content->size()) + " bytes, the manifest says " +
           std::to_string(entry->size) + "; " + kRepairHint;
    return false;
  }
  if (Sha256Hex(*content) != entry->sha256) {
    *err = path + " does not match its SHA-256 in the manifest; " + kRepairHint;
    return false;
  }
  return true;
}

}  // namespace gpt
