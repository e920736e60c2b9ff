// Constraint expressions over search parameters, e.g.
//   N_EMBD % N_HEAD == 0
//   N_EMBD / N_HEAD >= 16 && (ACT == "gelu" || DEPTH <= 8)
// Operators, loosest first: || (or), && (and), == != < <= > >=, + -, * / %,
// unary - and ! (not). Operands: numbers, "strings", true/false, parameter
// names, parentheses and the functions abs(x), min(a, b), max(a, b), log2(x).
// Arithmetic is on doubles (`/` is real division, `%` is fmod); booleans are
// 1 and 0. An undefined result (division by zero, a string in arithmetic)
// makes the expression false, so a constraint never admits such a point.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ratchet {

/// A value in an expression: a number or a string.
struct ExprValue {
  bool is_string = false;
  double number = 0;
  std::string text;
  static ExprValue Number(double v) { return {false, v, ""}; }
  static ExprValue String(std::string s) { return {true, 0, std::move(s)}; }
};

class Expr {
 public:
  /// Maps a name to a variable index, or -1 if it is unknown.
  using Resolver = std::function<int(const std::string& name)>;

  /// Parses `text`; names are resolved now, so an unknown name is an error
  /// ("unknown parameter 'N_HED' in constraint '...'").
  static bool Parse(const std::string& text, const Resolver& resolve, Expr* out, std::string* err);

  /// Evaluates with `vars[i]` the value of variable i.
  ExprValue Eval(const std::vector<ExprValue>& vars) const;
  /// True when the value is a finite non-zero number or a non-empty string.
  bool Holds(const std::vector<ExprValue>& vars) const;

  const std::string& text() const { return text_; }
  /// Indices of the variables the expression reads.
  std::vector<int> Variables() const;

 private:
  friend class ExprParser;
  struct Node {
    enum class Kind { kNumber, kString, kVar, kUnary, kBinary, kCall };
    Kind kind = Kind::kNumber;
    std::string op;  // operator or function name
    double number = 0;
    std::string text;
    int var = -1;
    std::vector<int> args;  // node indices
  };
  ExprValue EvalNode(int node, const std::vector<ExprValue>& vars) const;
  std::vector<Node> nodes_;
  int root_ = -1;
  std::string text_;
};

}  // namespace ratchet
