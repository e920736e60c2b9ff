#include "outer/outer_config.h"

#include <algorithm>
#include <cstdlib>

namespace ratchet {

namespace {

const std::vector<std::string> kAuthorPlaceholders = {"prompt_file", "prompt", "dir"};

bool IsBuiltin(const std::string& name) {
  const std::vector<std::string>& names = BuiltinNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

void ReadNames(ConfigSection& s, const char* key, std::vector<std::string>* out) {
  auto list = s.StringList(key);
  if (!list) return;
  for (const std::string& name : *list) {
    if (!IsBuiltin(name)) {
      s.Fail(key, "unknown mechanism '" + name + "'; built-in: tabu, bandit, explore, restart");
      return;
    }
  }
  *out = *list;
}

void ReadInt(ConfigSection& s, const char* key, int low, int* out) {
  if (auto v = s.Integer(key)) {
    if (*v < low || *v > 1000000)
      s.Fail(key, "must be an integer from " + std::to_string(low));
    else
      *out = static_cast<int>(*v);
  }
}

void ReadFraction(ConfigSection& s, const char* key, bool zero_ok, double* out) {
  if (auto v = s.Number(key)) {
    if (*v > 1 || *v < 0 || (!zero_ok && *v == 0))
      s.Fail(key, zero_ok ? "must be in [0, 1]" : "must be in (0, 1]");
    else
      *out = *v;
  }
}

void ReadNumbers(ConfigSection& s, const char* key, std::vector<double>* out) {
  auto list = s.ScalarList(key);
  if (!list) return;
  std::vector<double> values;
  for (const std::string& text : *list) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') {
      s.Fail(key, "must be a list of numbers");
      return;
    }
    values.push_back(v);
  }
  *out = values;
}

}  // namespace

const std::vector<std::string>& BuiltinNames() {
  static const std::vector<std::string> names = {"tabu", "bandit", "explore", "restart"};
  return names;
}

bool ReadOuterConfig(ConfigSection& s, OuterConfig* out, std::string* err) {
  ReadInt(s, "every", 0, &out->every);
  ReadInt(s, "mechanism_every", 0, &out->mechanism_every);
  ReadNames(s, "mechanisms", &out->mechanisms);
  ReadNames(s, "pool", &out->pool);
  for (const std::string& name : out->mechanisms)
    if (std::find(out->pool.begin(), out->pool.end(), name) == out->pool.end())
      out->pool.push_back(name);
  ReadInt(s, "stuck_after", 1, &out->schedule.stuck_after);
  ReadInt(s, "explore_steps", 0, &out->schedule.explore);
  ReadInt(s, "restart_steps", 0, &out->schedule.restart);
  ReadFraction(s, "stuck_spread", true, &out->stuck_spread);
  ReadInt(s, "min_acted", 1, &out->min_acted);
  ReadInt(s, "max_trials", 0, &out->max_trials);
  if (auto t = s.Duration("answer_timeout")) out->answer_timeout_s = *t;

  if (ConfigSection t = s.Table("tabu"); t.present()) {
    ReadInt(t, "tenure", 0, &out->tabu.tenure);
    ReadInt(t, "failure_tenure", 0, &out->tabu.failure_tenure);
    ReadFraction(t, "radius", true, &out->tabu.radius);
    if (auto v = t.Bool("veto")) out->tabu.veto = *v;
  }
  if (ConfigSection b = s.Table("bandit"); b.present()) {
    if (auto v = b.String("over")) out->bandit.over = *v;
    ReadNumbers(b, "steps", &out->bandit.steps);
    ReadNumbers(b, "explorations", &out->bandit.explorations);
    if (auto v = b.StringList("families")) out->bandit.families = *v;
    if (auto v = b.Number("c")) {
      if (*v < 0) b.Fail("c", "must be 0 or more");
      else out->bandit.c = *v;
    }
    const std::string& over = out->bandit.over;
    if (over != "step" && over != "exploration" && over != "params" && over != "families")
      b.Fail("over", "must be \"step\", \"exploration\", \"params\" or \"families\"");
  }
  if (ConfigSection r = s.Table("restart"); r.present()) {
    ReadFraction(r, "min_distance", true, &out->restart.min_distance);
    ReadFraction(r, "step", false, &out->restart.step);
  }
  for (ConfigSection& e : s.TableArray("external")) {
    ExternalSpec spec;
    spec.timeout_s = out->answer_timeout_s;
    if (auto name = e.String("name")) spec.name = *name;
    else e.Fail("name", "missing: a name for the mechanism");
    if (!spec.name.empty() &&
        (IsBuiltin(spec.name) || spec.name == "tuner" ||
         spec.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos))
      e.Fail("name", "must be lowercase letters, digits, - and _, and not a built-in's name");
    for (const ExternalSpec& other : out->external)
      if (other.name == spec.name) e.Fail("name", "'" + spec.name + "' is used twice");
    if (auto command = e.StringList("command")) {
      if (command->size() == 1) {
        std::string why;
        if (!SplitWords((*command)[0], &spec.command, &why)) e.Fail("command", why);
      } else {
        spec.command = *command;
      }
      if (spec.command.empty()) e.Fail("command", "is empty");
    } else {
      e.Fail("command", "missing: the program, e.g. [\"python3\", \"mechanism.py\"]");
    }
    if (auto t = e.Duration("timeout")) spec.timeout_s = *t;
    out->external.push_back(spec);
  }
  if (ConfigSection a = s.Table("author"); a.present()) {
    AuthorConfig author;
    ReadAgentCommand(a, kAuthorPlaceholders, 600, &author.command);
    ReadInt(a, "max", 0, &author.max);
    if (auto v = a.Bool("network")) author.network = *v;
    out->author = author;
  }
  return s.Finish(err);
}

}  // namespace ratchet
