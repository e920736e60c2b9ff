// Binding: the search parameters live as literals of named constants in the
// editable files. This file finds the one assignment of a constant, reads its
// literal, and rewrites only that literal, keeping every other byte.
//
// Recognised assignments (NAME is the constant; comments and strings are
// skipped when looking for it, and are kept intact on the line):
//   C, C++, CUDA (.c .cc .cpp .cxx .h .hh .hpp .cu .cuh ...):
//     constexpr double NAME = 0.04;   static const int NAME = 4;
//     const float NAME = 1e-3f;       inline constexpr int NAME{4};
//     NAME = 4;                       #define NAME 4
//   Python (.py, .pyi):     NAME = 0.04  # comment     NAME: float = 0.04
//   any other text file:    NAME = value    NAME=value    export NAME=value
// Literals: numbers (sign, exponent, C suffixes such as f, L, u kept),
// strings in single or double quotes (the quote style is kept), booleans
// (true/false; True/False in Python), and in plain files a bare word.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "propose/search/space.h"

namespace ratchet {

enum class Syntax { kCpp, kPython, kPlain };
/// The syntax of a file, from its extension.
Syntax SyntaxForPath(const std::string& path);

/// The literal of one constant's assignment.
struct BoundLiteral {
  enum class Kind { kNumber, kString, kBool, kOther };
  Kind kind = Kind::kOther;
  size_t begin = 0, end = 0;  // byte range of the literal in the content
  int line = 0;               // 1-based
  std::string text;           // as written
  double number = 0;          // kNumber, kBool (1/0)
  bool integer = false;       // kNumber written without '.' or exponent
  std::string suffix;         // kNumber: C suffix (f, L, u, ...)
  std::string value;          // kString: the string's value
  char quote = 0;             // kString: '"', '\'' or 0 for a bare word
};

/// Finds the single assignment of `name` in `content` of `file`. Fails with
/// "train.cpp: constant MATRIX_LR not found" or "... assigned 2 times (lines
/// 3, 9)"; a right-hand side that is not a plain literal fails naming the line.
bool FindConstant(const std::string& content, const std::string& file, const std::string& name,
                  Syntax syntax, BoundLiteral* out, std::string* err);

/// The value of parameter `i` that `literal` holds, checked against its type
/// and range: "train.cpp:12: DEPTH = 4.5 is not an integer".
bool LiteralToValue(const SearchSpace& space, size_t i, const BoundLiteral& literal,
                    const std::string& file, Syntax syntax, double* value, std::string* err);

/// A literal for `value` in the style of `existing` (quote, suffix, bool
/// spelling), e.g. 0.031 for a double, 0.031f for a float, 5 for an int.
std::string ValueToLiteral(const SearchSpace& space, size_t i, double value,
                           const BoundLiteral& existing, Syntax syntax);

/// Reads or writes a file by its path relative to the loop directory.
using FileReader =
    std::function<bool(const std::string& rel, std::string* content, std::string* err)>;
using FileWriter =
    std::function<bool(const std::string& rel, const std::string& content, std::string* err)>;
/// Plain file access under `dir`; writes replace the file atomically
/// (temporary file and rename, permissions kept).
FileReader DirectoryReader(const std::string& dir);
FileWriter DirectoryWriter(const std::string& dir);

/// Every parameter of a space bound to its file.
class Binding {
 public:
  /// Reads each parameter's file, finds its constant and reads the current
  /// point. Any missing, repeated or ill-typed constant fails.
  static bool Load(const SearchSpace& space, const FileReader& read, Binding* out,
                   std::string* err);

  /// The values in the files when loaded (the incumbent's point).
  const Point& current() const { return current_; }

  /// Rewrites the literals of every parameter whose value differs from
  /// current(), one write per changed file. `changed` (may be null)
  /// receives the relative paths written.
  bool Write(const Point& point, const FileWriter& write, std::vector<std::string>* changed,
             std::string* err);

 private:
  struct Slot {
    size_t param = 0;
    BoundLiteral literal;
  };
  struct File {
    std::string content;
    Syntax syntax = Syntax::kPlain;
    std::vector<Slot> slots;
  };
  const SearchSpace* space_ = nullptr;
  std::map<std::string, File> files_;
  Point current_;
};

/// Pure form of Binding::Write for one file: replaces each (literal, text)
/// pair's byte range, keeping everything else.
std::string ReplaceLiterals(const std::string& content,
                            std::vector<std::pair<BoundLiteral, std::string>> edits);

}  // namespace ratchet
