#include "propose/search/binding.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/durable_file.h"
#include "base/read_file.h"

namespace ratchet {

namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// mask[i] is true when byte i is code: not inside a comment or a string.
std::vector<bool> CodeMask(const std::string& s, Syntax syntax) {
  std::vector<bool> mask(s.size(), true);
  size_t i = 0;
  const size_t n = s.size();
  auto mark_to = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < n; ++k) mask[k] = false;
  };
  while (i < n) {
    const char c = s[i];
    if (syntax == Syntax::kCpp && c == '/' && i + 1 < n && s[i + 1] == '/') {
      const size_t e = s.find('\n', i);
      mark_to(i, e == std::string::npos ? n : e);
      i = (e == std::string::npos) ? n : e;
    } else if (syntax == Syntax::kCpp && c == '/' && i + 1 < n && s[i + 1] == '*') {
      const size_t e = s.find("*/", i + 2);
      const size_t stop = (e == std::string::npos) ? n : e + 2;
      mark_to(i, stop);
      i = stop;
    } else if (syntax != Syntax::kCpp && c == '#') {
      const size_t e = s.find('\n', i);
      mark_to(i, e == std::string::npos ? n : e);
      i = (e == std::string::npos) ? n : e;
    } else if (syntax == Syntax::kPython && (c == '"' || c == '\'') &&
               s.compare(i, 3, std::string(3, c)) == 0) {
      const size_t e = s.find(std::string(3, c), i + 3);
      const size_t stop = (e == std::string::npos) ? n : e + 3;
      mark_to(i, stop);
      i = stop;
    } else if (c == '"' || (c == '\'' && !(syntax == Syntax::kCpp && i > 0 &&
                                           std::isalnum(static_cast<unsigned char>(s[i - 1]))))) {
      // A string (or a C char) ends at its unescaped quote or at the line's end.
      // In C++ a quote after a digit is a digit separator (1'000), not a char.
      size_t k = i + 1;
      while (k < n && s[k] != c && s[k] != '\n') k += (s[k] == '\\') ? 2 : 1;
      const size_t stop = std::min(n, (k < n && s[k] == c) ? k + 1 : k);
      mark_to(i, stop);
      i = stop;
    } else {
      ++i;
    }
  }
  return mask;
}

// Parses a number at s[p]: sign, decimal or hex digits, exponent, C suffix.
bool ParseNumber(const std::string& s, size_t p, Syntax syntax, BoundLiteral* lit) {
  size_t i = p;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t digits_begin = i;
  bool integer = true, hex = false;
  if (i + 1 < s.size() && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    hex = true;
    i += 2;
    const size_t h = i;
    while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == h) return false;
  } else {
    size_t mantissa = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++mantissa;
    if (i < s.size() && s[i] == '.') {
      integer = false;
      ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++mantissa;
    }
    if (mantissa == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      size_t k = i + 1;
      if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
      const size_t e = k;
      while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
      if (k == e) return false;
      integer = false;
      i = k;
    }
  }
  const size_t number_end = i;
  if (syntax == Syntax::kCpp) {
    while (i < s.size() && std::strchr("fFlLuUzZ", s[i]) != nullptr && s[i] != '\0') ++i;
    if (hex && i > number_end) return false;  // 0x1f: the f was a digit
  }
  if (i < s.size() && (IsIdentChar(s[i]) || s[i] == '.')) return false;
  const std::string number = s.substr(p, number_end - p);
  lit->kind = BoundLiteral::Kind::kNumber;
  lit->begin = p;
  lit->end = i;
  lit->text = s.substr(p, i - p);
  lit->suffix = s.substr(number_end, i - number_end);
  lit->integer = integer;
  if (hex) {
    const double mag = static_cast<double>(
        std::stoull(s.substr(digits_begin + 2, number_end - digits_begin - 2), nullptr, 16));
    lit->number = (s[p] == '-') ? -mag : mag;
  } else {
    lit->number = std::strtod(number.c_str(), nullptr);
  }
  return true;
}

bool ParseString(const std::string& s, size_t p, BoundLiteral* lit) {
  const char q = s[p];
  std::string value;
  size_t i = p + 1;
  while (i < s.size() && s[i] != q && s[i] != '\n') {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char e = s[i + 1];
      value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      i += 2;
    } else {
      value += s[i++];
    }
  }
  if (i >= s.size() || s[i] != q) return false;
  lit->kind = BoundLiteral::Kind::kString;
  lit->begin = p;
  lit->end = i + 1;
  lit->text = s.substr(p, i + 1 - p);
  lit->value = value;
  lit->quote = q;
  return true;
}

bool ParseWord(const std::string& s, size_t p, const char* word, BoundLiteral* lit) {
  const size_t len = std::strlen(word);
  if (s.compare(p, len, word) != 0) return false;
  if (p + len < s.size() && IsIdentChar(s[p + len])) return false;
  lit->begin = p;
  lit->end = p + len;
  lit->text = word;
  return true;
}

// Parses the literal at s[p] for `syntax`; kOther when it is none.
BoundLiteral ParseLiteral(const std::string& s, size_t p, Syntax syntax) {
  BoundLiteral lit;
  lit.begin = lit.end = p;
  if (p >= s.size()) return lit;
  if (ParseNumber(s, p, syntax, &lit)) return lit;
  if ((s[p] == '"' || s[p] == '\'') && ParseString(s, p, &lit)) return lit;
  const char* const kTrue = syntax == Syntax::kPython ? "True" : "true";
  const char* const kFalse = syntax == Syntax::kPython ? "False" : "false";
  if (ParseWord(s, p, kTrue, &lit) || ParseWord(s, p, kFalse, &lit)) {
    lit.kind = BoundLiteral::Kind::kBool;
    lit.number = (lit.text == kTrue) ? 1 : 0;
    return lit;
  }
  if (syntax == Syntax::kPlain) {
    // A bare word: everything up to blank, comment or line end.
    size_t i = p;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && s[i] != '#') ++i;
    if (i > p) {
      lit.kind = BoundLiteral::Kind::kString;
      lit.end = i;
      lit.text = lit.value = s.substr(p, i - p);
      lit.quote = 0;
    }
  }
  return lit;
}

size_t SkipBlanks(const std::string& s, size_t p) {
  while (p < s.size() && IsBlank(s[p])) ++p;
  return p;
}

size_t LineEnd(const std::string& s, size_t p) {
  const size_t e = s.find('\n', p);
  return e == std::string::npos ? s.size() : e;
}

// True when only blanks, then a comment or the line's end, follow p.
bool RestIsEmpty(const std::string& s, const std::vector<bool>& mask, size_t p) {
  p = SkipBlanks(s, p);
  return p >= s.size() || s[p] == '\n' || s[p] == '\r' || !mask[p];
}

// One occurrence of the constant that is an assignment.
struct Occurrence {
  int line = 0;
  BoundLiteral literal;  // kOther when the right-hand side is not a literal
  std::string rhs;       // the right-hand side as written, for messages
};

// Checks whether the identifier at [pos, pos+len) is assigned there; if so
// fills *occ (with the literal when the right side is one).
bool ClassifyOccurrence(const std::string& s, const std::vector<bool>& mask, size_t pos, size_t len,
                        Syntax syntax, Occurrence* occ) {
  const size_t line_begin = (pos == 0) ? 0 : s.rfind('\n', pos - 1) + 1;  // npos+1 == 0
  const std::string prefix = s.substr(line_begin, pos - line_begin);
  size_t p = pos + len;
  bool define = false, brace = false;
  if (syntax == Syntax::kCpp) {
    // #define NAME value
    size_t k = SkipBlanks(prefix, 0);
    if (k < prefix.size() && prefix[k] == '#') {
      k = SkipBlanks(prefix, k + 1);
      if (prefix.compare(k, 6, "define") != 0) return false;
      k += 6;
      if (k >= prefix.size() || !IsBlank(prefix[k]) || SkipBlanks(prefix, k) != prefix.size()) {
        return false;
      }
      if (p >= s.size() || !IsBlank(s[p])) return false;
      define = true;
    } else {
      // Declaration specifiers and a type only: `static constexpr double `.
      for (char c : prefix) {
        if (!(IsIdentChar(c) || IsBlank(c) || c == ':' || c == '<' || c == '>' || c == '*' ||
              c == '&' || c == ',')) {
          return false;
        }
      }
      if (prefix.find(',') != std::string::npos) return false;
    }
  } else {
    size_t k = SkipBlanks(prefix, 0);
    if (syntax == Syntax::kPlain && prefix.compare(k, 6, "export") == 0) {
      k = SkipBlanks(prefix, k + 6);
    }
    if (k != prefix.size()) return false;
  }
  if (!define) {
    p = SkipBlanks(s, p);
    if (syntax == Syntax::kPython && p < s.size() && s[p] == ':') {
      // An annotation: NAME: float = 0.1
      while (p < s.size() && s[p] != '=' && s[p] != '\n') ++p;
    }
    if (p >= s.size()) return false;
    if (s[p] == '=' && (p + 1 >= s.size() || s[p + 1] != '=')) {
      ++p;
    } else if (syntax == Syntax::kCpp && s[p] == '{') {
      brace = true;
      ++p;
    } else {
      return false;
    }
  }
  p = SkipBlanks(s, p);
  occ->line = static_cast<int>(std::count(s.begin(), s.begin() + pos, '\n')) + 1;
  const size_t end = LineEnd(s, p);
  occ->rhs = s.substr(p, end - p);
  BoundLiteral lit = ParseLiteral(s, p, syntax);
  bool ok = lit.kind != BoundLiteral::Kind::kOther;
  if (ok) {
    size_t after = SkipBlanks(s, lit.end);
    if (syntax == Syntax::kCpp && !define) {
      if (brace) {
        ok = after < s.size() && s[after] == '}';
        after = SkipBlanks(s, after + 1);
      }
      ok = ok && after < s.size() && s[after] == ';';
    } else if (syntax == Syntax::kPython && after < s.size() && s[after] == ';') {
      ok = true;
    } else {
      ok = RestIsEmpty(s, mask, lit.end);
    }
  }
  if (ok) {
    occ->literal = lit;
    occ->literal.line = occ->line;
  } else {
    occ->literal = BoundLiteral();
    occ->literal.line = occ->line;
  }
  // Trim the statement's end from the message: `= 64 * N_HEAD;` -> `64 * N_HEAD`.
  while (!occ->rhs.empty() &&
         (occ->rhs.back() == ';' || occ->rhs.back() == '\r' || IsBlank(occ->rhs.back()))) {
    occ->rhs.pop_back();
  }
  return true;
}

std::string FormatG(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string Quote(const std::string& value, char q) {
  if (q == 0) return value;
  std::string out(1, q);
  for (char c : value) {
    if (c == q || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += q;
  return out;
}

}  // namespace

Syntax SyntaxForPath(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  static const char* kCpp[] = {".c",   ".cc",  ".cpp", ".cxx", ".c++", ".h",   ".hh",
                               ".hpp", ".hxx", ".cu",  ".cuh", ".inl", ".ipp", ".m"};
  for (const char* e : kCpp) {
    if (ext == e) return Syntax::kCpp;
  }
  if (ext == ".py" || ext == ".pyi") return Syntax::kPython;
  return Syntax::kPlain;
}

bool FindConstant(const std::string& content, const std::string& file, const std::string& name,
                  Syntax syntax, BoundLiteral* out, std::string* err) {
  const std::vector<bool> mask = CodeMask(content, syntax);
  std::vector<Occurrence> found;
  for (size_t pos = content.find(name); pos != std::string::npos;
       pos = content.find(name, pos + 1)) {
    if (!mask[pos]) continue;
    if (pos > 0 && IsIdentChar(content[pos - 1])) continue;
    const size_t end = pos + name.size();
    if (end < content.size() && IsIdentChar(content[end])) continue;
    Occurrence occ;
    if (ClassifyOccurrence(content, mask, pos, name.size(), syntax, &occ)) found.push_back(occ);
  }
  if (found.empty()) {
    const char* example = syntax == Syntax::kCpp      ? "constexpr double NAME = 0.1;"
                          : syntax == Syntax::kPython ? "NAME = 0.1"
                                                      : "NAME = 0.1";
    *err = file + ": constant " + name + " not found (expected one assignment such as `" + example +
           "`)";
    return false;
  }
  if (found.size() > 1) {
    std::string lines;
    for (const Occurrence& o : found) {
      lines += (lines.empty() ? "" : ", ") + std::to_string(o.line);
    }
    *err = file + ": constant " + name + " is assigned " + std::to_string(found.size()) +
           " times (lines " + lines + "); the search binds exactly one assignment";
    return false;
  }
  if (found[0].literal.kind == BoundLiteral::Kind::kOther) {
    *err = file + ":" + std::to_string(found[0].line) + ": " + name + " = " + found[0].rhs +
           " is not a plain literal (a number, a quoted string or a boolean)";
    return false;
  }
  *out = found[0].literal;
  return true;
}

bool LiteralToValue(const SearchSpace& space, size_t i, const BoundLiteral& literal,
                    const std::string& file, Syntax syntax, double* value, std::string* err) {
  (void)syntax;
  const ParamSpec& p = space.param(i);
  const std::string where =
      file + ":" + std::to_string(literal.line) + ": " + p.constant + " = " + literal.text;
  if (p.type == ParamSpec::Type::kChoice) {
    for (size_t k = 0; k < p.choices.size(); ++k) {
      const Literal& c = p.choices[k];
      bool match = false;
      switch (c.kind) {
        case Literal::Kind::kNumber:
          match = literal.kind == BoundLiteral::Kind::kNumber && literal.number == c.number;
          break;
        case Literal::Kind::kString:
          match = literal.kind == BoundLiteral::Kind::kString && literal.value == c.text;
          break;
        case Literal::Kind::kBool:
          match = literal.kind == BoundLiteral::Kind::kBool && literal.number == c.number;
          break;
      }
      if (match) {
        *value = static_cast<double>(k);
        return true;
      }
    }
    std::string allowed;
    for (const Literal& c : p.choices) allowed += (allowed.empty() ? "" : ", ") + c.Display();
    *err = where + " is not one of the declared values (" + allowed + ")";
    return false;
  }
  if (literal.kind != BoundLiteral::Kind::kNumber) {
    *err = where + " does not fit type " + ParamTypeName(p.type) + " (expected a number)";
    return false;
  }
  if (p.type == ParamSpec::Type::kInt && !literal.integer) {
    *err = where + " does not fit type int (expected an integer literal)";
    return false;
  }
  const double v = literal.number;
  if (v < p.low || v > p.high) {
    *err = where + " is outside the declared range [" + FormatG(p.low, 17) + ", " +
           FormatG(p.high, 17) + "]; widen the range or change the file";
    return false;
  }
  if (p.type == ParamSpec::Type::kInt && space.Snap(i, v) != v) {
    *err = where + " is not one of the parameter's values (" +
           (p.pow2 ? std::string("powers of two") : "step " + std::to_string(p.step)) + " from " +
           FormatG(space.IntLevel(i, 0), 17) + ")";
    return false;
  }
  // A float keeps its full precision here: it is the incumbent as written,
  // not a proposal, so rounding it would invent a point nobody ran.
  *value = v;
  return true;
}

std::string ValueToLiteral(const SearchSpace& space, size_t i, double value,
                           const BoundLiteral& existing, Syntax syntax) {
  const ParamSpec& p = space.param(i);
  auto with_suffix = [&](std::string text, bool is_float) {
    // Keep a C suffix that is valid for the new literal: f/L on floats,
    // u/L/z on integers.
    const char* allowed = is_float ? "fFlL" : "uUlLzZ";
    bool keep = !existing.suffix.empty();
    for (char c : existing.suffix) keep = keep && std::strchr(allowed, c) != nullptr;
    return keep ? text + existing.suffix : text;
  };
  switch (p.type) {
    case ParamSpec::Type::kFloat: {
      std::string text = FormatG(value, p.digits);
      const bool plain_int = text.find_first_of(".eEn") == std::string::npos;  // n: nan/inf
      // Keep a float spelled as a float, so `constexpr double X = 1;` does
      // not turn into an integer in C++ or Python.
      if (plain_int && (syntax != Syntax::kPlain || !existing.integer)) text += ".0";
      return with_suffix(text, true);
    }
    case ParamSpec::Type::kInt:
      return with_suffix(FormatG(value, 17), false);
    case ParamSpec::Type::kChoice:
      break;
  }
  const Literal& c = p.choices[static_cast<size_t>(value)];
  switch (c.kind) {
    case Literal::Kind::kNumber:
      return c.text;
    case Literal::Kind::kBool:
      if (syntax == Syntax::kPython) return c.number != 0 ? "True" : "False";
      return c.number != 0 ? "true" : "false";
    case Literal::Kind::kString:
      break;
  }
  char q = existing.kind == BoundLiteral::Kind::kString ? existing.quote : '"';
  if (q == 0 && (c.text.empty() || c.text.find_first_of(" \t#\"'") != std::string::npos)) {
    q = '"';  // a bare word cannot hold this value
  }
  return Quote(c.text, q);
}

std::string ReplaceLiterals(const std::string& content,
                            std::vector<std::pair<BoundLiteral, std::string>> edits) {
  std::sort(edits.begin(), edits.end(),
            [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  std::string out;
  size_t at = 0;
  for (const auto& [lit, text] : edits) {
    out.append(content, at, lit.begin - at);
    out += text;
    at = lit.end;
  }
  out.append(content, at, std::string::npos);
  return out;
}

namespace {

}  // namespace

FileReader DirectoryReader(const std::string& dir) {
  return [dir](const std::string& rel, std::string* content, std::string* err) {
    return ReadWholeFile(dir + "/" + rel, content, err);
  };
}

FileWriter DirectoryWriter(const std::string& dir) {
  return [dir](const std::string& rel, const std::string& content, std::string* err) {
    return ReplaceFile(dir + "/" + rel, content, err);
  };
}

namespace {

bool SafeRelative(const std::string& rel) {
  if (rel.empty() || rel[0] == '/') return false;
  for (const auto& part : std::filesystem::path(rel)) {
    if (part == "..") return false;
  }
  return true;
}

}  // namespace

bool Binding::Load(const SearchSpace& space, const FileReader& read, Binding* out,
                   std::string* err) {
  *out = Binding();
  out->space_ = &space;
  out->current_.assign(space.size(), 0);
  for (size_t i = 0; i < space.size(); ++i) {
    const ParamSpec& p = space.param(i);
    if (!SafeRelative(p.file)) {
      *err = "parameter '" + p.name + "': file '" + p.file +
             "' must be a relative path inside the loop directory";
      return false;
    }
    auto [it, inserted] = out->files_.try_emplace(p.file);
    File& f = it->second;
    if (inserted) {
      f.syntax = SyntaxForPath(p.file);
      if (!read(p.file, &f.content, err)) {
        *err = "parameter '" + p.name + "': " + *err;
        return false;
      }
    }
    Slot slot;
    slot.param = i;
    if (!FindConstant(f.content, p.file, p.constant, f.syntax, &slot.literal, err) ||
        !LiteralToValue(space, i, slot.literal, p.file, f.syntax, &out->current_[i], err)) {
      return false;
    }
    f.slots.push_back(slot);
  }
  return true;
}

bool Binding::Write(const Point& point, const FileWriter& write, std::vector<std::string>* changed,
                    std::string* err) {
  for (auto& [rel, f] : files_) {
    std::vector<std::pair<BoundLiteral, std::string>> edits;
    for (const Slot& s : f.slots) {
      if (point[s.param] == current_[s.param]) continue;
      edits.emplace_back(s.literal,
                         ValueToLiteral(*space_, s.param, point[s.param], s.literal, f.syntax));
    }
    if (edits.empty()) continue;
    std::string content = ReplaceLiterals(f.content, edits);
    if (!write(rel, content, err)) return false;
    f.content = std::move(content);
    // Offsets moved: find the literals again in the new content.
    for (Slot& s : f.slots) {
      if (!FindConstant(f.content, rel, space_->param(s.param).constant, f.syntax, &s.literal,
                        err)) {
        return false;
      }
    }
    if (changed) changed->push_back(rel);
  }
  current_ = point;
  return true;
}

}  // namespace ratchet
