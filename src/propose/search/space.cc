#include "propose/search/space.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

namespace ratchet {

namespace {

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string FormatNumber(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

double RoundDigits(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return v;
  return std::stod(FormatNumber(v, digits));
}

bool IsIntegral(double v) { return std::isfinite(v) && std::floor(v) == v; }

// The smallest power of two >= v (v >= 1).
double Pow2Ceil(double v) { return std::exp2(std::ceil(std::log2(v) - 1e-12)); }

}  // namespace

Literal Literal::Number(double v, std::string text) {
  Literal l;
  l.kind = Kind::kNumber;
  l.number = v;
  l.text = text.empty() ? FormatNumber(v, 17) : std::move(text);
  return l;
}
Literal Literal::String(std::string s) {
  Literal l;
  l.kind = Kind::kString;
  l.text = std::move(s);
  return l;
}
Literal Literal::Bool(bool b) {
  Literal l;
  l.kind = Kind::kBool;
  l.number = b ? 1 : 0;
  l.text = b ? "true" : "false";
  return l;
}
bool Literal::operator==(const Literal& other) const {
  if (kind != other.kind) return false;
  return kind == Kind::kString ? text == other.text : number == other.number;
}
std::string Literal::Display() const { return text; }

const char* ParamTypeName(ParamSpec::Type type) {
  switch (type) {
    case ParamSpec::Type::kFloat:
      return "float";
    case ParamSpec::Type::kInt:
      return "int";
    case ParamSpec::Type::kChoice:
      return "choice";
  }
  return "?";
}

bool SearchSpace::Create(std::vector<ParamSpec> params, std::vector<std::string> constraints,
                         SearchSpace* out, std::string* err) {
  *out = SearchSpace();
  if (params.empty()) {
    *err = "the search space has no parameters; declare at least one [[propose.search.param]]";
    return false;
  }
  std::set<std::string> names;
  std::set<std::pair<std::string, std::string>> bindings;
  for (ParamSpec& p : params) {
    auto fail = [&](const std::string& message) {
      *err = "parameter '" + p.name + "': " + message;
      return false;
    };
    if (!IsIdentifier(p.name)) {
      *err = "parameter name '" + p.name + "' is not an identifier (letters, digits, _)";
      return false;
    }
    if (p.constant.empty()) p.constant = p.name;
    if (!IsIdentifier(p.constant))
      return fail("constant '" + p.constant + "' is not an identifier");
    if (!names.insert(p.name).second) return fail("declared twice");
    if (!p.file.empty() && !bindings.insert({p.file, p.constant}).second) {
      return fail("constant " + p.constant + " in " + p.file + " is bound by another parameter");
    }
    switch (p.type) {
      case ParamSpec::Type::kFloat:
        if (!std::isfinite(p.low) || !std::isfinite(p.high) || !(p.low < p.high)) {
          return fail("low must be below high");
        }
        if (p.log && p.low <= 0) return fail("a log scale needs low > 0");
        if (p.digits < 1 || p.digits > 15) return fail("digits must be between 1 and 15");
        break;
      case ParamSpec::Type::kInt:
        if (!IsIntegral(p.low) || !IsIntegral(p.high)) return fail("low and high must be integers");
        if (!(p.low < p.high)) return fail("low must be below high");
        if (p.step < 1) return fail("step must be at least 1");
        if ((p.log || p.pow2) && p.low < 1) return fail("a log or pow2 scale needs low >= 1");
        if (p.pow2 && p.step != 1) return fail("pow2 and step cannot be combined");
        if (p.pow2 && Pow2Ceil(p.low) * 2 > p.high) {
          return fail("pow2 needs at least two powers of two between low and high");
        }
        if (!p.pow2 && p.low + static_cast<double>(p.step) > p.high) {
          return fail("step leaves a single value between low and high");
        }
        break;
      case ParamSpec::Type::kChoice: {
        if (p.choices.size() < 2) return fail("a choice needs at least two values");
        for (size_t a = 0; a < p.choices.size(); ++a) {
          for (size_t b = 0; b < a; ++b) {
            if (p.choices[a] == p.choices[b]) {
              return fail("value " + p.choices[a].Display() + " is listed twice");
            }
          }
        }
        break;
      }
    }
  }
  out->params_ = std::move(params);
  for (const std::string& text : constraints) {
    Expr expr;
    if (!Expr::Parse(
            text, [out](const std::string& n) { return out->Find(n); }, &expr, err)) {
      return false;
    }
    out->constraints_.push_back(std::move(expr));
  }
  return true;
}

int SearchSpace::Find(const std::string& name) const {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

size_t SearchSpace::Levels(size_t i) const {
  const ParamSpec& p = params_[i];
  switch (p.type) {
    case ParamSpec::Type::kFloat:
      return 0;
    case ParamSpec::Type::kChoice:
      return p.choices.size();
    case ParamSpec::Type::kInt:
      if (p.pow2) {
        return static_cast<size_t>(std::floor(std::log2(p.high) + 1e-12) -
                                   std::log2(Pow2Ceil(p.low))) +
               1;
      }
      return static_cast<size_t>((p.high - p.low) / static_cast<double>(p.step)) + 1;
  }
  return 0;
}

double SearchSpace::IntLevel(size_t i, size_t k) const {
  const ParamSpec& p = params_[i];
  if (p.pow2) return Pow2Ceil(p.low) * std::exp2(static_cast<double>(k));
  return p.low + static_cast<double>(k) * static_cast<double>(p.step);
}

double SearchSpace::ToUnit(size_t i, double value) const {
  const ParamSpec& p = params_[i];
  double lo = p.low, hi = p.high;
  if (p.type == ParamSpec::Type::kInt) {
    lo = IntLevel(i, 0);
    hi = IntLevel(i, Levels(i) - 1);
  }
  double u;
  if (p.log || p.pow2) {
    u = (std::log(value) - std::log(lo)) / (std::log(hi) - std::log(lo));
  } else {
    u = (value - lo) / (hi - lo);
  }
  return std::clamp(u, 0.0, 1.0);
}

double SearchSpace::FromUnit(size_t i, double u) const {
  const ParamSpec& p = params_[i];
  u = std::clamp(u, 0.0, 1.0);
  double lo = p.low, hi = p.high;
  if (p.type == ParamSpec::Type::kInt) {
    // Snap in unit space, so every level owns an equal share of [0, 1].
    const size_t n = Levels(i);
    const double k = std::round(u * static_cast<double>(n - 1));
    if (p.pow2) return IntLevel(i, static_cast<size_t>(k));
    lo = IntLevel(i, 0);
    hi = IntLevel(i, n - 1);
  }
  const double v = (p.log || p.pow2) ? std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)))
                                     : lo + u * (hi - lo);
  return Snap(i, v);
}

double SearchSpace::Snap(size_t i, double value) const {
  const ParamSpec& p = params_[i];
  switch (p.type) {
    case ParamSpec::Type::kFloat: {
      const double v =
          std::clamp(RoundDigits(std::clamp(value, p.low, p.high), p.digits), p.low, p.high);
      return v;
    }
    case ParamSpec::Type::kChoice:
      return std::clamp(std::round(value), 0.0, static_cast<double>(p.choices.size() - 1));
    case ParamSpec::Type::kInt:
      break;
  }
  const size_t n = Levels(i);
  if (p.pow2) {
    const double first = IntLevel(i, 0);
    const double k = std::round(std::log2(std::max(value, 1.0) / first));
    return IntLevel(i, static_cast<size_t>(std::clamp(k, 0.0, static_cast<double>(n - 1))));
  }
  const double kf = (value - p.low) / static_cast<double>(p.step);
  double k = std::round(kf);
  if (p.log && value > 0) {
    // Nearest level on the log scale.
    const double below = std::floor(kf), above = std::ceil(kf);
    const double vb = IntLevel(i, static_cast<size_t>(std::max(below, 0.0)));
    const double va = IntLevel(i, static_cast<size_t>(std::max(above, 0.0)));
    k = (std::fabs(std::log(value / vb)) <= std::fabs(std::log(va / value))) ? below : above;
  }
  return IntLevel(i, static_cast<size_t>(std::clamp(k, 0.0, static_cast<double>(n - 1))));
}

bool SearchSpace::Contains(const Point& point) const {
  if (point.size() != params_.size()) return false;
  for (size_t i = 0; i < params_.size(); ++i) {
    const double v = point[i];
    if (!std::isfinite(v)) return false;
    const ParamSpec& p = params_[i];
    if (p.type == ParamSpec::Type::kFloat) {
      if (v < p.low || v > p.high) return false;
    } else if (Snap(i, v) != v) {
      return false;
    }
  }
  return true;
}

std::string SearchSpace::Violated(const Point& point) const {
  if (constraints_.empty()) return "";
  std::vector<ExprValue> vars;
  vars.reserve(point.size());
  for (size_t i = 0; i < point.size(); ++i) vars.push_back(AsExprValue(i, point[i]));
  for (const Expr& c : constraints_) {
    if (!c.Holds(vars)) return c.text();
  }
  return "";
}

bool SearchSpace::Feasible(const Point& point) const { return Violated(point).empty(); }

ExprValue SearchSpace::AsExprValue(size_t i, double value) const {
  const ParamSpec& p = params_[i];
  if (p.type != ParamSpec::Type::kChoice) return ExprValue::Number(value);
  const Literal& l = p.choices[static_cast<size_t>(value)];
  if (l.kind == Literal::Kind::kString) return ExprValue::String(l.text);
  return ExprValue::Number(l.number);
}

std::string SearchSpace::Format(size_t i, double value) const {
  const ParamSpec& p = params_[i];
  switch (p.type) {
    case ParamSpec::Type::kFloat:
      return FormatNumber(value, p.digits);
    case ParamSpec::Type::kInt:
      return FormatNumber(value, 17);
    case ParamSpec::Type::kChoice:
      return p.choices[static_cast<size_t>(value)].Display();
  }
  return "";
}

std::string SearchSpace::Describe(const Point& point, const std::vector<bool>* mask) const {
  std::string out;
  for (size_t i = 0; i < params_.size() && i < point.size(); ++i) {
    if (mask && !(*mask)[i]) continue;
    if (!out.empty()) out += ' ';
    out += params_[i].name + "=" + Format(i, point[i]);
  }
  return out;
}

nlohmann::json SearchSpace::ValueToJson(size_t i, double value) const {
  const ParamSpec& p = params_[i];
  switch (p.type) {
    case ParamSpec::Type::kFloat:
      return value;
    case ParamSpec::Type::kInt:
      return static_cast<int64_t>(value);
    case ParamSpec::Type::kChoice:
      break;
  }
  const Literal& l = p.choices[static_cast<size_t>(value)];
  switch (l.kind) {
    case Literal::Kind::kString:
      return l.text;
    case Literal::Kind::kBool:
      return l.number != 0;
    case Literal::Kind::kNumber:
      if (IsIntegral(l.number) && std::fabs(l.number) < 9e15) {
        return static_cast<int64_t>(l.number);
      }
      return l.number;
  }
  return nullptr;
}

std::string SearchSpace::ToJson(const Point& point) const {
  nlohmann::json obj = nlohmann::json::object();
  for (size_t i = 0; i < params_.size() && i < point.size(); ++i) {
    obj[params_[i].name] = ValueToJson(i, point[i]);
  }
  return obj.dump();
}

bool SearchSpace::ValueFromJson(size_t i, const nlohmann::json& value, double* out,
                                std::string* err) const {
  const ParamSpec& p = params_[i];
  const std::string where = "parameter '" + p.name + "': ";
  if (p.type == ParamSpec::Type::kChoice) {
    for (size_t k = 0; k < p.choices.size(); ++k) {
      const Literal& l = p.choices[k];
      const bool match = (l.kind == Literal::Kind::kString && value.is_string() &&
                          value.get<std::string>() == l.text) ||
                         (l.kind == Literal::Kind::kBool && value.is_boolean() &&
                          value.get<bool>() == (l.number != 0)) ||
                         (l.kind == Literal::Kind::kNumber && value.is_number() &&
                          value.get<double>() == l.number);
      if (match) {
        *out = static_cast<double>(k);
        return true;
      }
    }
    std::string allowed;
    for (const Literal& l : p.choices) allowed += (allowed.empty() ? "" : ", ") + l.Display();
    *err = where + value.dump() + " is not one of " + allowed;
    return false;
  }
  if (!value.is_number()) {
    *err = where + "expected a number, got " + value.dump();
    return false;
  }
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < p.low || v > p.high) {
    *err = where + value.dump() + " is outside [" + FormatNumber(p.low, 17) + ", " +
           FormatNumber(p.high, 17) + "]";
    return false;
  }
  if (p.type == ParamSpec::Type::kInt && Snap(i, v) != v) {
    *err = where + value.dump() + " is not one of its integer values";
    return false;
  }
  *out = Snap(i, v);
  return true;
}

bool SearchSpace::FromJson(const std::string& json, const Point& base, Point* out,
                           std::string* err) const {
  nlohmann::json obj;
  try {
    obj = nlohmann::json::parse(json);
  } catch (const std::exception& e) {
    *err = std::string("parameter values are not valid JSON: ") + e.what();
    return false;
  }
  if (!obj.is_object()) {
    *err = "parameter values must be a JSON object of name: value";
    return false;
  }
  Point point = base;
  point.resize(params_.size(), std::nan(""));
  for (const auto& [name, value] : obj.items()) {
    const int i = Find(name);
    if (i < 0) {
      *err = "unknown parameter '" + name + "' in parameter values";
      return false;
    }
    if (!ValueFromJson(static_cast<size_t>(i), value, &point[static_cast<size_t>(i)], err)) {
      return false;
    }
  }
  for (size_t i = 0; i < point.size(); ++i) {
    if (std::isnan(point[i])) {
      *err = "parameter values lack '" + params_[i].name + "'";
      return false;
    }
  }
  *out = std::move(point);
  return true;
}

}  // namespace ratchet
