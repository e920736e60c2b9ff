// ConfigSection over toml++. toml++ is used only in this file, so its heavy
// headers stay out of the rest of the build.
#include "core/config_section.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <toml++/toml.h>

namespace ratchet {

struct ConfigSection::Impl {
  std::shared_ptr<toml::table> doc;  // keeps the parsed document alive
  const toml::table* table = nullptr;
  std::string path;  // "run", "propose.search", "gate[2]"
  std::string file;
  toml::source_position position;  // of the table header (or first key)
  std::set<std::string> asked;     // keys looked up, present or not
  std::vector<std::string> errors;
  std::vector<ConfigSection> children;  // sub-tables checked by Finish()
};

namespace {

std::string At(const std::string& file, const toml::source_position& pos) {
  std::ostringstream out;
  out << file;
  if (pos.line > 0) out << ":" << pos.line << ":" << pos.column;
  return out.str();
}

std::string TableLabel(const std::string& path) {
  return path.empty() ? "the top level" : "[" + path + "]";
}

const char* TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

}  // namespace

ConfigSection::ConfigSection() : impl_(std::make_shared<Impl>()) {}
ConfigSection::~ConfigSection() = default;
ConfigSection::ConfigSection(const ConfigSection&) = default;
ConfigSection& ConfigSection::operator=(const ConfigSection&) = default;

bool ConfigSection::Parse(const std::string& text, const std::string& file, ConfigSection* root,
                          std::string* err) {
  auto doc = std::make_shared<toml::table>();
  try {
    *doc = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    *err = At(file, e.source().begin) + ": " + std::string(e.description());
    return false;
  }
  *root = ConfigSection();
  root->impl_->doc = doc;
  root->impl_->table = doc.get();
  root->impl_->file = file;
  root->impl_->position = {1, 1};
  return true;
}

bool ConfigSection::present() const { return impl_->table != nullptr; }
const std::string& ConfigSection::path() const { return impl_->path; }

std::string ConfigSection::Where(const std::string& key) const {
  if (!key.empty() && impl_->table) {
    if (const toml::node* node = impl_->table->get(key)) {
      // toml++ gives a key's value position; the key itself is on that line.
      return At(impl_->file, node->source().begin);
    }
  }
  return At(impl_->file, impl_->position);
}

bool ConfigSection::Has(const std::string& key) const {
  return impl_->table && impl_->table->contains(key);
}

bool ConfigSection::HasTableArray(const std::string& key) const {
  const toml::node* node = impl_->table ? impl_->table->get(key) : nullptr;
  const toml::array* array = node ? node->as_array() : nullptr;
  return array && !array->empty() && array->is_array_of_tables();
}

void ConfigSection::Fail(const std::string& key, const std::string& message) {
  std::string prefix = Where(key) + ": " + TableLabel(impl_->path);
  if (!key.empty()) prefix += " " + key;
  impl_->errors.push_back(prefix + ": " + message);
}

void ConfigSection::Claim(const std::string& key) { impl_->asked.insert(key); }

namespace {

// Looks up `key`, marking it asked; null when absent.
const toml::node* Lookup(ConfigSection::Impl& impl, const std::string& key) {
  impl.asked.insert(key);
  return impl.table ? impl.table->get(key) : nullptr;
}

}  // namespace

std::optional<std::string> ConfigSection::String(const std::string& key) {
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return std::nullopt;
  if (auto v = node->value<std::string>(); v && node->is_string()) return *v;
  Fail(key, std::string("expected a string, got ") + TypeName(*node));
  return std::nullopt;
}

std::optional<double> ConfigSection::Number(const std::string& key) {
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return std::nullopt;
  if (node->is_integer() || node->is_floating_point()) {
    double v = *node->value<double>();
    if (!std::isfinite(v)) {
      Fail(key, "must be a finite number");
      return std::nullopt;
    }
    return v;
  }
  Fail(key, std::string("expected a number, got ") + TypeName(*node));
  return std::nullopt;
}

std::optional<int64_t> ConfigSection::Integer(const std::string& key) {
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return std::nullopt;
  if (node->is_integer()) return *node->value<int64_t>();
  Fail(key, std::string("expected an integer, got ") + TypeName(*node));
  return std::nullopt;
}

std::optional<bool> ConfigSection::Bool(const std::string& key) {
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return std::nullopt;
  if (node->is_boolean()) return *node->value<bool>();
  Fail(key, std::string("expected true or false, got ") + TypeName(*node));
  return std::nullopt;
}

std::optional<std::vector<std::string>> ConfigSection::StringList(const std::string& key) {
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return std::nullopt;
  if (node->is_string()) return std::vector<std::string>{*node->value<std::string>()};
  if (const toml::array* array = node->as_array()) {
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
      if (!item.is_string()) {
        Fail(key, std::string("expected a list of strings, found ") + TypeName(item) +
                      " in it");
        return std::nullopt;
      }
      out.push_back(*item.value<std::string>());
    }
    return out;
  }
  Fail(key, std::string("expected a string or a list of strings, got ") + TypeName(*node));
  return std::nullopt;
}

namespace {

// A TOML scalar as JSON text; false for tables, arrays, dates and non-finite floats.
bool ScalarAsJson(const toml::node& node, std::string* out) {
  if (node.is_string()) {
    std::string json = "\"";
    const std::string text = *node.value<std::string>();
    for (char c : text) {
      if (c == '"' || c == '\\') {
        json += '\\';
        json += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x",
                      static_cast<unsigned>(static_cast<unsigned char>(c)));
        json += buf;
      } else {
        json += c;
      }
    }
    *out = json + "\"";
    return true;
  }
  if (node.is_integer()) {
    *out = std::to_string(*node.value<int64_t>());
    return true;
  }
  if (node.is_boolean()) {
    *out = *node.value<bool>() ? "true" : "false";
    return true;
  }
  if (node.is_floating_point() && std::isfinite(*node.value<double>())) {
    // The shortest text that reads back as the same double, kept a float.
    const double v = *node.value<double>();
    char buf[32];
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, v);
      if (std::strtod(buf, nullptr) == v) break;
    }
    *out = buf;
    if (out->find_first_of(".e") == std::string::npos) *out += ".0";
    return true;
  }
  return false;
}

}  // namespace

std::optional<std::vector<std::string>> ConfigSection::ScalarList(const std::string& key) {
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return std::nullopt;
  std::vector<std::string> out(1);
  if (ScalarAsJson(*node, &out[0])) return out;
  const toml::array* array = node->as_array();
  if (!array) {
    Fail(key, std::string("expected a list of strings, numbers or booleans, got ") +
                  TypeName(*node));
    return std::nullopt;
  }
  out.clear();
  for (const toml::node& item : *array) {
    std::string json;
    if (!ScalarAsJson(item, &json)) {
      Fail(key, std::string("expected a list of strings, numbers or booleans, found ") +
                    TypeName(item) + " in it");
      return std::nullopt;
    }
    out.push_back(json);
  }
  return out;
}

std::optional<double> ConfigSection::Duration(const std::string& key) {
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return std::nullopt;
  double seconds = 0;
  std::string err;
  if (node->is_integer() || node->is_floating_point()) {
    seconds = *node->value<double>();
  } else if (node->is_string()) {
    if (!ParseDuration(*node->value<std::string>(), &seconds, &err)) {
      Fail(key, err);
      return std::nullopt;
    }
  } else {
    Fail(key, std::string("expected a duration like \"90s\", \"5m\" or \"1h30m\", got ") +
                  TypeName(*node));
    return std::nullopt;
  }
  if (!(seconds > 0) || !std::isfinite(seconds)) {
    Fail(key, "must be a positive duration, like \"90s\" or \"5m\"");
    return std::nullopt;
  }
  return seconds;
}

std::optional<uint64_t> ConfigSection::Size(const std::string& key) {
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return std::nullopt;
  uint64_t bytes = 0;
  std::string err;
  if (node->is_integer()) {
    int64_t v = *node->value<int64_t>();
    if (v <= 0) {
      Fail(key, "must be a positive size, like \"64MB\"");
      return std::nullopt;
    }
    return static_cast<uint64_t>(v);
  }
  if (node->is_string() && ParseSize(*node->value<std::string>(), &bytes, &err)) return bytes;
  Fail(key, node->is_string() ? err
                              : std::string("expected a size like \"64MB\", got ") +
                                    TypeName(*node));
  return std::nullopt;
}

namespace {

ConfigSection::Impl ChildImpl(const ConfigSection::Impl& parent, const toml::table* table,
                              const std::string& path) {
  ConfigSection::Impl child;
  child.doc = parent.doc;
  child.table = table;
  child.path = path;
  child.file = parent.file;
  child.position = table->source().begin;
  return child;
}

std::string Join(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

}  // namespace

ConfigSection ConfigSection::Extension(const std::string& key) {
  ConfigSection child;
  const toml::node* node = Lookup(*impl_, key);
  if (!node) {
    child.impl_->path = Join(impl_->path, key);
    child.impl_->file = impl_->file;
    return child;
  }
  if (const toml::table* table = node->as_table()) {
    *child.impl_ = ChildImpl(*impl_, table, Join(impl_->path, key));
  } else {
    Fail(key, std::string("expected a table, got ") + TypeName(*node));
  }
  return child;
}

ConfigSection ConfigSection::Table(const std::string& key) {
  ConfigSection child = Extension(key);
  if (child.present()) impl_->children.push_back(child);
  return child;
}

std::vector<ConfigSection> ConfigSection::TableArray(const std::string& key) {
  std::vector<ConfigSection> out;
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return out;
  const toml::array* array = node->as_array();
  if (!array || !array->is_array_of_tables()) {
    Fail(key, std::string("expected an array of tables ([[") + Join(impl_->path, key) +
                  "]]), got " + TypeName(*node));
    return out;
  }
  int index = 0;
  for (const toml::node& item : *array) {
    ++index;
    ConfigSection child;
    *child.impl_ = ChildImpl(*impl_, item.as_table(),
                             Join(impl_->path, key) + "[" + std::to_string(index) + "]");
    impl_->children.push_back(child);
    out.push_back(child);
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> ConfigSection::StringMap(
    const std::string& key) {
  const toml::node* node = Lookup(*impl_, key);
  if (!node) return std::nullopt;
  const toml::table* table = node->as_table();
  if (!table) {
    Fail(key, std::string("expected a table of strings, got ") + TypeName(*node));
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : *table) {
    if (v.is_string()) {
      out.emplace_back(std::string(k.str()), *v.value<std::string>());
    } else if (v.is_integer() || v.is_floating_point() || v.is_boolean()) {
      // Numbers and booleans are written as TOML would print them.
      std::ostringstream text;
      if (v.is_integer()) text << *v.value<int64_t>();
      else if (v.is_boolean()) text << (*v.value<bool>() ? "true" : "false");
      else text << *v.value<double>();
      out.emplace_back(std::string(k.str()), text.str());
    } else {
      Fail(key, "value of " + std::string(k.str()) + " must be a string, got " + TypeName(v));
      return std::nullopt;
    }
  }
  return out;
}

std::vector<std::string> ConfigSection::Keys() const {
  std::vector<std::pair<toml::source_position, std::string>> keyed;
  if (impl_->table) {
    for (const auto& [k, v] : *impl_->table) keyed.emplace_back(k.source().begin, std::string(k.str()));
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first.line, a.first.column) < std::pair(b.first.line, b.first.column);
  });
  std::vector<std::string> out;
  for (auto& [pos, k] : keyed) out.push_back(std::move(k));
  return out;
}

bool ConfigSection::Finish(std::string* err) {
  std::vector<std::string> errors = impl_->errors;
  if (impl_->table) {
    std::string allowed;
    for (const std::string& k : impl_->asked) allowed += (allowed.empty() ? "" : ", ") + k;
    for (const std::string& key : Keys()) {
      if (impl_->asked.count(key)) continue;
      const toml::node* node = impl_->table->get(key);
      toml::source_position pos = node->source().begin;
      // A sub-table's position is its [header] line; a value's is the value.
      errors.push_back(At(impl_->file, pos) + ": unknown key '" + key + "' in " +
                       TableLabel(impl_->path) +
                       (allowed.empty() ? "" : "; allowed: " + allowed));
    }
  }
  for (ConfigSection& child : impl_->children) {
    std::string child_err;
    if (!child.Finish(&child_err)) errors.push_back(child_err);
  }
  if (errors.empty()) return true;
  *err = errors.front();
  for (size_t i = 1; i < errors.size(); ++i) *err += "\n" + errors[i];
  return false;
}

bool ConfigSection::ok() const { return impl_->errors.empty(); }

const std::string& ConfigSection::error() const {
  static const std::string kNone;
  return impl_->errors.empty() ? kNone : impl_->errors.front();
}

bool ParseDuration(const std::string& text, double* seconds, std::string* err) {
  const std::string bad = "'" + text + "' is not a duration; write e.g. \"90s\", \"5m\", \"1h30m\"";
  size_t i = 0;
  double total = 0;
  bool any = false;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == text.size()) break;
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text.substr(i), &used);
    } catch (...) {
      *err = bad;
      return false;
    }
    i += used;
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit = text.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit.empty() || unit == "s" || unit == "sec") scale = 1;
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "m" || unit == "min") scale = 60;
    else if (unit == "h") scale = 3600;
    else if (unit == "d") scale = 86400;
    else {
      *err = bad;
      return false;
    }
    if (unit.empty() && i < text.size()) {
      *err = bad;
      return false;
    }
    total += value * scale;
    any = true;
  }
  if (!any) {
    *err = bad;
    return false;
  }
  *seconds = total;
  return true;
}

bool ParseSize(const std::string& text, uint64_t* bytes, std::string* err) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  std::string unit = text.substr(used);
  unit.erase(std::remove_if(unit.begin(), unit.end(), ::isspace), unit.end());
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") scale = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") scale = 1024.0 * 1024 * 1024;
  if (used == 0 || scale == 0 || !(value > 0)) {
    *err = "'" + text + "' is not a positive size; write e.g. \"64MB\" or \"512KB\"";
    return false;
  }
  *bytes = static_cast<uint64_t>(value * scale);
  return true;
}

}  // namespace ratchet
