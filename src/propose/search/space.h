// The search space: typed parameters bound to constants in editable files,
// and constraints between them. A point holds one double per parameter: the
// value of a float or int parameter, or the index of a choice.
//
// Parameter types (declared in [propose.search], see space_config.h):
//   float   low..high, linear or log scale; values are rounded to `digits`
//           significant digits, so what is written to the file is the point.
//   int     low..high on a grid of `step` (low, low+step, ...), or powers of
//           two in low..high (`pow2`); log scale optional.
//   choice  a list of literals (numbers, strings, booleans).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "propose/search/expr.h"

namespace ratchet {

/// One value of a choice parameter, as declared.
struct Literal {
  enum class Kind { kNumber, kString, kBool };
  Kind kind = Kind::kNumber;
  double number = 0;  // kNumber; 1/0 for kBool
  std::string text;   // kString: the string itself; kNumber: as written ("64", "0.5")
  static Literal Number(double v, std::string text);
  static Literal String(std::string s);
  static Literal Bool(bool b);
  bool operator==(const Literal& other) const;
  /// For messages and descriptions: 64, relu, true.
  std::string Display() const;
};

struct ParamSpec {
  enum class Type { kFloat, kInt, kChoice };
  std::string name;      // unique in the space
  std::string file;      // editable file that holds the constant (relative path)
  std::string constant;  // the constant's name in the file (default: name)
  Type type = Type::kFloat;
  double low = 0, high = 1;      // float and int
  bool log = false;              // float and int: search on a log scale
  int64_t step = 1;              // int: grid step
  bool pow2 = false;             // int: powers of two only
  int digits = 4;                // float: significant digits written
  std::vector<Literal> choices;  // choice
};

const char* ParamTypeName(ParamSpec::Type type);

using Point = std::vector<double>;

class SearchSpace {
 public:
  /// Validates the parameters (bounds, steps, duplicate names) and parses
  /// the constraints over their names. Messages name the parameter.
  static bool Create(std::vector<ParamSpec> params, std::vector<std::string> constraints,
                     SearchSpace* out, std::string* err);

  size_t size() const { return params_.size(); }
  const ParamSpec& param(size_t i) const { return params_[i]; }
  const std::vector<ParamSpec>& params() const { return params_; }
  /// Index of the parameter named `name`, or -1.
  int Find(const std::string& name) const;
  const std::vector<Expr>& constraints() const { return constraints_; }

  bool IsChoice(size_t i) const { return params_[i].type == ParamSpec::Type::kChoice; }
  /// Number of distinct values of an int or choice parameter (0 for float).
  size_t Levels(size_t i) const;
  /// The k-th value of an int parameter (k < Levels(i)).
  double IntLevel(size_t i, size_t k) const;

  /// Float/int: the value's position in [0, 1] on the parameter's scale.
  double ToUnit(size_t i, double value) const;
  /// Float/int: the value at position u (clamped to [0, 1]), snapped.
  double FromUnit(size_t i, double u) const;
  /// Rounds a float to its digits (within bounds) or an int to its grid.
  double Snap(size_t i, double value) const;

  /// In bounds, on the grid, a valid choice index (constraints not checked).
  bool Contains(const Point& point) const;
  /// Every constraint holds.
  bool Feasible(const Point& point) const;
  /// The first constraint that does not hold, or "" when all hold.
  std::string Violated(const Point& point) const;

  /// "0.031", "5", "relu": the value as shown to people.
  std::string Format(size_t i, double value) const;
  /// "MATRIX_LR=0.031 DEPTH=5" (every parameter, or those where mask is true).
  std::string Describe(const Point& point, const std::vector<bool>* mask = nullptr) const;
  /// {"MATRIX_LR":0.031,"DEPTH":5,"ACT":"relu"}
  std::string ToJson(const Point& point) const;
  /// Reads a JSON object of values by name. Parameters it does not name keep
  /// their value from `base` (which must have size() entries, or be empty
  /// for "every parameter is required"). Floats are snapped to their digits;
  /// out-of-range values, unknown names and non-members of a choice fail.
  bool FromJson(const std::string& json, const Point& base, Point* out, std::string* err) const;
  /// Checks one JSON scalar as a value of parameter i and converts it to
  /// the point's encoding (floats snapped, ints on the grid, choice index).
  bool ValueFromJson(size_t i, const nlohmann::json& value, double* out, std::string* err) const;
  nlohmann::json ValueToJson(size_t i, double value) const;

  /// The value as an expression operand (numbers, strings; booleans as 1/0).
  ExprValue AsExprValue(size_t i, double value) const;

 private:
  std::vector<ParamSpec> params_;
  std::vector<Expr> constraints_;
};

}  // namespace ratchet
