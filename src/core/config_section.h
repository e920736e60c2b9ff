// A table of ratchet.toml read strictly. Each part of ratchet that owns a
// section ([propose.search], [propose.agent], [outer], [review], ...) reads
// its keys through this class; keys it never asks for are reported as unknown,
// and every error names the file, line and column.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ratchet {

class ConfigSection {
 public:
  ConfigSection();  // an absent section: every lookup returns nullopt
  ~ConfigSection();
  ConfigSection(const ConfigSection&);
  ConfigSection& operator=(const ConfigSection&);

  /// Parses a whole TOML document; on a syntax error returns false with
  /// "FILE:LINE:COL: message".
  static bool Parse(const std::string& text, const std::string& file, ConfigSection* root,
                    std::string* err);

  bool present() const;
  /// Dotted path of this table, e.g. "propose.search" ("" for the root).
  const std::string& path() const;
  /// "FILE:LINE:COL" of this table (or of `key` in it, when given and present).
  std::string Where(const std::string& key = "") const;

  bool Has(const std::string& key) const;
  /// True when `key` holds a non-empty array whose items are all tables
  /// (`slots = [{...}, ...]` or [[slots]]); reads nothing, records nothing.
  bool HasTableArray(const std::string& key) const;
  /// Typed lookups. A missing key gives nullopt; a key of the wrong type
  /// records an error (see ok()/error()) and gives nullopt.
  std::optional<std::string> String(const std::string& key);
  std::optional<double> Number(const std::string& key);  // integer or float
  std::optional<int64_t> Integer(const std::string& key);
  std::optional<bool> Bool(const std::string& key);
  /// A string or an array of strings.
  std::optional<std::vector<std::string>> StringList(const std::string& key);
  /// A scalar or an array of scalars (strings, integers, floats, booleans),
  /// each written as JSON: "\"relu\"", "64", "0.5", "true" (search choices).
  std::optional<std::vector<std::string>> ScalarList(const std::string& key);
  /// Seconds, from a number or a string like "90s", "5m", "1h30m", "250ms".
  /// Negative or zero durations are errors.
  std::optional<double> Duration(const std::string& key);
  /// Bytes, from an integer or "64MB", "512KiB", ...
  std::optional<uint64_t> Size(const std::string& key);
  /// A sub-table (absent if missing; error if not a table).
  ConfigSection Table(const std::string& key);
  /// A sub-table owned by another part of ratchet: claimed here (so this
  /// table's Finish() does not report it) and checked by its owner's Finish().
  ConfigSection Extension(const std::string& key);
  /// An array of tables ([[gate]]); error if the key is another type.
  std::vector<ConfigSection> TableArray(const std::string& key);
  /// A table of string values (e.g. [run.env]).
  std::optional<std::vector<std::pair<std::string, std::string>>> StringMap(
      const std::string& key);
  /// Keys present in this table, in document order.
  std::vector<std::string> Keys() const;

  /// Records an error about `key` (or the table when key is ""), prefixed
  /// with its position: "ratchet.toml:12:5: [run] budget: must be positive".
  void Fail(const std::string& key, const std::string& message);
  /// Marks `key` as read without reading it (owned by another part).
  void Claim(const std::string& key);

  /// Checks this table and every sub-table read through it: errors recorded
  /// so far, then keys never asked for ("unknown key 'bugdet' in [run];
  /// allowed: build, command, ..."). True when all is well.
  bool Finish(std::string* err);
  bool ok() const;
  const std::string& error() const;  // the first error, "" if none

  struct Impl;  // opaque: toml++ stays inside config_section.cc

 private:
  std::shared_ptr<Impl> impl_;
};

/// Parses "90s", "5m", "1h30m", "250ms", "2d" or a plain number of seconds.
bool ParseDuration(const std::string& text, double* seconds, std::string* err);
/// Parses "64MB", "512KiB", "1G" or a plain number of bytes.
bool ParseSize(const std::string& text, uint64_t* bytes, std::string* err);

}  // namespace ratchet
