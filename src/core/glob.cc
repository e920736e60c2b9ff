#include "core/glob.h"

#include <cstdint>

namespace ratchet {
namespace {

/// Splits on '/', dropping empty and "." segments so that "./a//b/" is "a/b".
std::vector<std::string_view> Segments(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('/', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view seg = s.substr(start, end - start);
    if (!seg.empty() && seg != ".") out.push_back(seg);
    start = end + 1;
  }
  return out;
}

/// Matches a bracket class starting at pat[p] == '['. Returns false in
/// *well_formed when there is no closing ']' (the '[' is then a literal).
bool MatchClass(std::string_view pat, size_t p, char c, size_t* next, bool* well_formed) {
  size_t i = p + 1;
  bool negate = false;
  if (i < pat.size() && (pat[i] == '!' || pat[i] == '^')) {
    negate = true;
    ++i;
  }
  bool matched = false;
  bool first = true;
  while (i < pat.size()) {
    if (pat[i] == ']' && !first) {
      *next = i + 1;
      *well_formed = true;
      return matched != negate;
    }
    first = false;
    char lo = pat[i];
    if (lo == '\\' && i + 1 < pat.size()) lo = pat[++i];
    char hi = lo;
    // A '-' between two characters makes a range; before ']' it is a literal.
    if (i + 2 < pat.size() && pat[i + 1] == '-' && pat[i + 2] != ']') {
      hi = pat[i + 2];
      if (hi == '\\' && i + 3 < pat.size()) {
        hi = pat[i + 3];
        ++i;
      }
      i += 2;
    }
    if (static_cast<unsigned char>(lo) <= static_cast<unsigned char>(c) &&
        static_cast<unsigned char>(c) <= static_cast<unsigned char>(hi)) {
      matched = true;
    }
    ++i;
  }
  *well_formed = false;
  return false;
}

/// Matches one non-star token of `pat` at p against c; *next is the token's end.
bool MatchOne(std::string_view pat, size_t p, char c, size_t* next) {
  switch (pat[p]) {
    case '?':
      *next = p + 1;
      return true;
    case '[': {
      bool well_formed = false;
      bool m = MatchClass(pat, p, c, next, &well_formed);
      if (well_formed) return m;
      *next = p + 1;
      return c == '[';
    }
    case '\\':
      if (p + 1 < pat.size()) {
        *next = p + 2;
        return c == pat[p + 1];
      }
      break;
    default:
      break;
  }
  *next = p + 1;
  return c == pat[p];
}

/// One segment (no '/') against one pattern segment. Every token but '*'
/// consumes exactly one character, so backtracking to the last star suffices.
bool MatchSegment(std::string_view pat, std::string_view str) {
  size_t p = 0, s = 0;
  size_t star_p = std::string_view::npos, star_s = 0;
  while (s < str.size()) {
    if (p < pat.size() && pat[p] == '*') {
      while (p < pat.size() && pat[p] == '*') ++p;
      star_p = p;
      star_s = s;
      continue;
    }
    size_t next = 0;
    if (p < pat.size() && MatchOne(pat, p, str[s], &next)) {
      p = next;
      ++s;
      continue;
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    s = ++star_s;
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

bool IsDoubleStar(std::string_view seg) { return seg == "**"; }

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view path) {
  const std::vector<std::string_view> pat = Segments(pattern);
  const std::vector<std::string_view> segs = Segments(path);
  if (pat.empty() || segs.empty()) return false;
  const size_t P = pat.size(), S = segs.size();
  // memo[i * (S + 1) + j]: 0 unknown, 1 false, 2 true. Several `**` make the
  // naive recursion exponential; the table keeps it at P * S.
  std::vector<uint8_t> memo((P + 1) * (S + 1), 0);
  auto match = [&](auto& self, size_t i, size_t j) -> bool {
    // Every pattern segment used: the pattern matched `path` or a directory
    // above it, and a directory match covers everything below.
    if (i == P) return true;
    uint8_t& m = memo[i * (S + 1) + j];
    if (m != 0) return m == 2;
    bool r;
    if (IsDoubleStar(pat[i])) {
      r = self(self, i + 1, j) || (j < S && self(self, i, j + 1));
    } else {
      r = j < S && MatchSegment(pat[i], segs[j]) && self(self, i + 1, j + 1);
    }
    m = r ? 2 : 1;
    return r;
  };
  return match(match, 0, 0);
}

bool MatchesAny(const std::vector<std::string>& globs, std::string_view path) {
  for (const std::string& g : globs)
    if (GlobMatch(g, path)) return true;
  return false;
}

bool GlobMayMatchBelow(std::string_view pattern, std::string_view dir) {
  const std::vector<std::string_view> pat = Segments(pattern);
  if (pat.empty()) return false;
  const std::vector<std::string_view> segs = Segments(dir);
  for (size_t i = 0;; ++i) {
    // Either `dir` is used up (the rest of the pattern may match below it) or
    // the pattern is (it matched `dir` or a directory above it).
    if (i == segs.size() || i == pat.size()) return true;
    if (IsDoubleStar(pat[i])) return true;
    if (!MatchSegment(pat[i], segs[i])) return false;
  }
}

bool AnyMayMatchBelow(const std::vector<std::string>& globs, std::string_view dir) {
  for (const std::string& g : globs)
    if (GlobMayMatchBelow(g, dir)) return true;
  return false;
}

}  // namespace ratchet
