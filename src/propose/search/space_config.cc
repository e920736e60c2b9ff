#include "propose/search/space_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace ratchet {

namespace {

constexpr const char* kTypes = "float, int, choice";

// The single file that [edit] files names, if it is one plain path.
std::string SingleEditFile(const LoopConfig& loop) {
  if (loop.edit_files.size() != 1) return "";
  const std::string& f = loop.edit_files[0];
  return f.find_first_of("*?[") == std::string::npos ? f : "";
}

bool ReadLiteral(const std::string& json_text, Literal* out) {
  nlohmann::json v = nlohmann::json::parse(json_text, nullptr, false);
  if (v.is_string()) {
    *out = Literal::String(v.get<std::string>());
  } else if (v.is_boolean()) {
    *out = Literal::Bool(v.get<bool>());
  } else if (v.is_number()) {
    // As written in ratchet.toml (0.1, 64, 0.0): it is what goes into the file.
    *out = Literal::Number(v.get<double>(), json_text);
  } else {
    return false;
  }
  return true;
}

// Reads one [[propose.search.param]] table; false after recording an error.
bool ReadParam(ConfigSection& t, const std::string& default_file, ParamSpec* p) {
  const std::optional<std::string> name = t.String("name");
  if (!name) {
    t.Fail("", "a parameter needs a name (the constant it binds)");
    return false;
  }
  p->name = *name;
  p->constant = t.String("constant").value_or(*name);
  p->file = t.String("file").value_or(default_file);
  std::string type = t.String("type").value_or(t.Has("values") ? "choice" : "");
  if (type == "float") {
    p->type = ParamSpec::Type::kFloat;
  } else if (type == "int") {
    p->type = ParamSpec::Type::kInt;
  } else if (type == "choice") {
    p->type = ParamSpec::Type::kChoice;
  } else {
    t.Fail(t.Has("type") ? "type" : "", type.empty()
                                            ? std::string("type is required (") + kTypes + ")"
                                            : "unknown type '" + type + "'; known: " + kTypes);
    return false;
  }
  if (p->file.empty()) {
    t.Fail("",
           "parameter '" + p->name + "' needs a file (here or in [propose.search] file = \"...\")");
    return false;
  }
  // Keys that belong to other types are mistakes, not silently ignored.
  auto only_for = [&](const char* key, bool applies, const char* types) {
    if (!applies && t.Has(key)) {
      t.Claim(key);
      t.Fail(key, std::string("applies to ") + types + " parameters only");
    }
  };
  const bool numeric = p->type != ParamSpec::Type::kChoice;
  only_for("low", numeric, "float and int");
  only_for("high", numeric, "float and int");
  only_for("log", numeric, "float and int");
  only_for("digits", p->type == ParamSpec::Type::kFloat, "float");
  only_for("step", p->type == ParamSpec::Type::kInt, "int");
  only_for("pow2", p->type == ParamSpec::Type::kInt, "int");
  only_for("values", !numeric, "choice");
  if (!t.ok()) return false;

  if (numeric) {
    const std::optional<double> low = t.Number("low"), high = t.Number("high");
    if (!t.ok()) return false;
    if (!low || !high) {
      t.Fail(low ? "high" : "low", "is required for a " + type + " parameter");
      return false;
    }
    p->low = *low;
    p->high = *high;
    p->log = t.Bool("log").value_or(false);
  }
  if (p->type == ParamSpec::Type::kFloat) {
    p->digits = static_cast<int>(t.Integer("digits").value_or(4));
  }
  if (p->type == ParamSpec::Type::kInt) {
    p->step = t.Integer("step").value_or(1);
    p->pow2 = t.Bool("pow2").value_or(false);
  }
  if (p->type == ParamSpec::Type::kChoice) {
    const std::optional<std::vector<std::string>> values = t.ScalarList("values");
    if (!t.ok()) return false;
    if (!values) {
      t.Fail("", "a choice needs values = [...]");
      return false;
    }
    for (const std::string& v : *values) {
      Literal l;
      if (!ReadLiteral(v, &l)) {
        t.Fail("values", "cannot read " + v);
        return false;
      }
      p->choices.push_back(l);
    }
  }
  if (!t.ok()) return false;
  // Check the parameter on its own, so the message points at its table.
  SearchSpace alone;
  std::string message;
  if (!SearchSpace::Create({*p}, {}, &alone, &message)) {
    t.Fail("", message);
    return false;
  }
  return true;
}

}  // namespace

bool ReadSearchConfig(ConfigSection& section, const LoopConfig& loop, SearchConfig* out,
                      std::string* err) {
  *out = SearchConfig();
  auto fail = [&]() {
    *err = section.error();
    return false;
  };
  const std::string algorithm = section.String("algorithm").value_or("auto");
  if (!ParseAlgorithm(algorithm, &out->options.algorithm)) {
    section.Fail("algorithm",
                 "unknown algorithm '" + algorithm + "'; known: auto, random, lhs, tpe, local, gp");
    return fail();
  }
  const std::optional<int64_t> seed = section.Integer("seed");
  if (seed && *seed < 0) section.Fail("seed", "must not be negative");
  out->options.seed = seed ? static_cast<uint64_t>(*seed) : loop.seed;
  const std::optional<int64_t> init = section.Integer("init");
  if (init && (*init < 1 || *init > 1000)) section.Fail("init", "must be between 1 and 1000");
  out->options.init = static_cast<int>(init.value_or(0));
  const std::string default_file = section.String("file").value_or(SingleEditFile(loop));
  const std::vector<std::string> constraints =
      section.StringList("constraints").value_or(std::vector<std::string>());
  if (!section.ok()) return fail();

  std::vector<ConfigSection> tables = section.TableArray("param");
  if (!section.ok()) return fail();
  if (tables.empty()) {
    section.Fail("", "declare the search space: at least one [[propose.search.param]]");
    return fail();
  }
  std::vector<ParamSpec> params;
  for (ConfigSection& t : tables) {
    ParamSpec p;
    if (!ReadParam(t, default_file, &p)) {
      *err = t.error();
      return false;
    }
    params.push_back(p);
  }
  std::string message;
  if (!SearchSpace::Create(params, constraints, &out->space, &message)) {
    section.Fail(message.rfind("constraint", 0) == 0 ? "constraints" : "param", message);
    return fail();
  }
  return true;
}

}  // namespace ratchet
