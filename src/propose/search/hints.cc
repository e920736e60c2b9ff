#include "propose/search/hints.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace ratchet {

namespace {

constexpr const char* kKnownKeys[] = {"algorithm", "exploration",  "step",
                                      "active",    "frozen",       "region",
                                      "avoid",     "avoid_radius", "next"};
constexpr const char* kAlgorithms[] = {"auto", "random", "lhs", "tpe", "local", "gp"};

bool Fail(std::string* err, const std::string& message) {
  *err = "search hints: " + message;
  return false;
}

bool NameList(const nlohmann::json& v, const SearchSpace& space, const char* key,
              std::vector<size_t>* out, std::string* err) {
  if (!v.is_array()) return Fail(err, std::string(key) + " must be a list of parameter names");
  for (const auto& item : v) {
    const int i = item.is_string() ? space.Find(item.get<std::string>()) : -1;
    if (i < 0) return Fail(err, std::string(key) + ": unknown parameter " + item.dump());
    out->push_back(static_cast<size_t>(i));
  }
  return true;
}

bool Fraction(const nlohmann::json& v, const char* key, double lo, bool lo_open, double* out,
              std::string* err) {
  if (!v.is_number()) return Fail(err, std::string(key) + " must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x) || x > 1 || x < lo || (lo_open && x == lo)) {
    return Fail(err, std::string(key) + " must be in " + (lo_open ? "(" : "[") + "0" +
                         ", 1], got " + v.dump());
  }
  *out = x;
  return true;
}

}  // namespace

bool SearchHints::empty() const {
  return algorithm.empty() && !exploration && !step && active.empty() && bounds.empty() &&
         allowed.empty() && avoid.empty() && !next;
}

bool ParseSearchHints(const std::string& json, const SearchSpace& space, const Point& incumbent,
                      SearchHints* out, std::string* err) {
  *out = SearchHints();
  if (json.empty()) return true;
  nlohmann::json obj;
  try {
    obj = nlohmann::json::parse(json);
  } catch (const std::exception& e) {
    return Fail(err, std::string("not valid JSON: ") + e.what());
  }
  if (obj.is_null()) return true;
  if (!obj.is_object()) return Fail(err, "expected a JSON object");
  const size_t n = space.size();
  std::vector<bool> active_list, frozen_list;
  for (const auto& [key, v] : obj.items()) {
    bool known = false;
    for (const char* k : kKnownKeys) known = known || key == k;
    if (!known) {
      std::string list;
      for (const char* k : kKnownKeys) list += (list.empty() ? "" : ", ") + std::string(k);
      return Fail(err, "unknown key '" + key + "'; known: " + list);
    }
    if (key == "algorithm") {
      bool ok = false;
      for (const char* a : kAlgorithms) ok = ok || (v.is_string() && v.get<std::string>() == a);
      if (!ok) {
        return Fail(err,
                    "algorithm " + v.dump() + " is not one of auto, random, lhs, tpe, local, gp");
      }
      out->algorithm = v.get<std::string>();
    } else if (key == "exploration") {
      double x;
      if (!Fraction(v, "exploration", 0, false, &x, err)) return false;
      out->exploration = x;
    } else if (key == "step") {
      double x;
      if (!Fraction(v, "step", 0, true, &x, err)) return false;
      out->step = x;
    } else if (key == "avoid_radius") {
      if (!Fraction(v, "avoid_radius", 0, false, &out->avoid_radius, err)) return false;
    } else if (key == "active" || key == "frozen") {
      // "active" names the only parameters that vary; "frozen" removes some.
      std::vector<size_t> names;
      if (!NameList(v, space, key.c_str(), &names, err)) return false;
      if (key == "active") {
        active_list.assign(n, false);
        for (size_t i : names) active_list[i] = true;
      } else {
        frozen_list.assign(n, false);
        for (size_t i : names) frozen_list[i] = true;
      }
    } else if (key == "region") {
      if (!v.is_object()) return Fail(err, "region must be an object of name: bounds");
      out->bounds.assign(n, std::nullopt);
      out->allowed.assign(n, {});
      for (const auto& [name, r] : v.items()) {
        const int i = space.Find(name);
        if (i < 0) return Fail(err, "region: unknown parameter '" + name + "'");
        const ParamSpec& p = space.param(static_cast<size_t>(i));
        if (p.type == ParamSpec::Type::kChoice) {
          if (!r.is_array() || r.empty()) {
            return Fail(err, "region: " + name + " must be a non-empty list of its values");
          }
          std::vector<bool> allowed(p.choices.size(), false);
          for (const auto& item : r) {
            double k;
            if (!space.ValueFromJson(static_cast<size_t>(i), item, &k, err)) {
              return Fail(err, "region: " + *err);
            }
            allowed[static_cast<size_t>(k)] = true;
          }
          out->allowed[static_cast<size_t>(i)] = allowed;
          continue;
        }
        if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number()) {
          return Fail(err, "region: " + name + " must be [low, high]");
        }
        const double lo = std::max(r[0].get<double>(), p.low);
        const double hi = std::min(r[1].get<double>(), p.high);
        if (!(lo <= hi)) {
          return Fail(err, "region: " + name + " " + r.dump() + " does not meet its range");
        }
        if (p.type == ParamSpec::Type::kInt) {
          bool any = false;
          for (size_t k = 0; k < space.Levels(static_cast<size_t>(i)) && !any; ++k) {
            const double level = space.IntLevel(static_cast<size_t>(i), k);
            any = level >= lo && level <= hi;
          }
          if (!any) return Fail(err, "region: " + name + " " + r.dump() + " holds no value of it");
        }
        out->bounds[static_cast<size_t>(i)] = std::make_pair(lo, hi);
      }
    } else if (key == "avoid") {
      if (!v.is_array()) return Fail(err, "avoid must be a list of points");
      for (const auto& item : v) {
        if (!item.is_object()) return Fail(err, "avoid: each point must be an object");
        Point tabu(n, std::nan(""));
        for (const auto& [name, value] : item.items()) {
          const int i = space.Find(name);
          if (i < 0) return Fail(err, "avoid: unknown parameter '" + name + "'");
          if (!space.ValueFromJson(static_cast<size_t>(i), value, &tabu[static_cast<size_t>(i)],
                                   err)) {
            return Fail(err, "avoid: " + *err);
          }
        }
        out->avoid.push_back(tabu);
      }
    } else if (key == "next") {
      Point next;
      if (!v.is_object()) return Fail(err, "next must be an object of name: value");
      if (!space.FromJson(v.dump(), incumbent, &next, err)) return Fail(err, "next: " + *err);
      out->next = next;
    }
  }
  if (!active_list.empty() || !frozen_list.empty()) {
    out->active = active_list.empty() ? std::vector<bool>(n, true) : active_list;
    for (size_t i = 0; i < frozen_list.size(); ++i) {
      if (frozen_list[i]) out->active[i] = false;
    }
    bool any = false;
    for (bool a : out->active) any = any || a;
    if (!any) return Fail(err, "active/frozen leave no parameter free to change");
  }
  return true;
}

}  // namespace ratchet
