#include "core/config.h"

#include <cmath>
#include <cstdlib>
#include <regex>

#include "core/accept.h"

namespace ratchet {

bool Constraint::Holds(double value) const {
  switch (op) {
    case Op::kLess: return value < bound;
    case Op::kLessEqual: return value <= bound;
    case Op::kGreater: return value > bound;
    case Op::kGreaterEqual: return value >= bound;
  }
  return false;
}

bool ParseConstraint(const std::string& text, Constraint* out, std::string* err) {
  static const std::regex kForm(R"(^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, kForm)) {
    *err = "'" + text + "' is not a constraint; write e.g. \"peak_mem_mb <= 8000\" (<, <=, >, >=)";
    return false;
  }
  Constraint c;
  c.metric = m[1];
  const std::string op = m[2];
  c.op = op == "<"    ? Constraint::Op::kLess
         : op == "<=" ? Constraint::Op::kLessEqual
         : op == ">"  ? Constraint::Op::kGreater
                      : Constraint::Op::kGreaterEqual;
  try {
    size_t used = 0;
    c.bound = std::stod(m[3], &used);
    if (used != static_cast<size_t>(m[3].length()) || !std::isfinite(c.bound)) throw 0;
  } catch (...) {
    *err = "'" + text + "': the bound must be a number";
    return false;
  }
  c.text = text;
  *out = c;
  return true;
}

namespace {

void ReadLoop(ConfigSection loop, LoopConfig* c) {
  if (auto tag = loop.String("tag")) {
    static const std::regex kTag("^[A-Za-z0-9][A-Za-z0-9._-]*$");
    if (std::regex_match(*tag, kTag) && tag->find("..") == std::string::npos) c->tag = *tag;
    else loop.Fail("tag", "must be letters, digits, '.', '_' or '-' (it names the branch ratchet/<tag>)");
  }
  if (auto seed = loop.Integer("seed")) {
    if (*seed >= 0) c->seed = static_cast<uint64_t>(*seed);
    else loop.Fail("seed", "must be zero or positive");
  }
}

void ReadEdit(ConfigSection edit, ConfigSection& root, LoopConfig* c) {
  if (!edit.present()) {
    root.Fail("edit", "missing: add an [edit] table with files = [...], the only files a proposer may change");
    return;
  }
  if (auto files = edit.StringList("files")) c->edit_files = *files;
  if (c->edit_files.empty() && edit.ok())
    edit.Fail("files", "missing or empty: list the files a proposer may change (globs allowed)");
  if (auto prot = edit.StringList("protected")) c->protected_files = *prot;
}

void ReadRun(ConfigSection run, ConfigSection& root, LoopConfig* c) {
  if (!run.present()) {
    root.Fail("run", "missing: add a [run] table with command, budget and timeout");
    return;
  }
  if (auto build = run.String("build")) c->build = *build;
  if (auto t = run.Duration("build_timeout")) c->build_timeout_s = *t;
  if (auto command = run.String("command")) c->command = *command;
  if (c->command.find_first_not_of(" \t") == std::string::npos && run.ok())
    run.Fail("command", "missing: the shell command that runs one experiment");
  if (auto budget = run.Duration("budget")) c->budget_s = *budget;
  else if (run.ok() && !run.Has("budget"))
    run.Fail("budget", "missing: the time budget of one experiment, e.g. \"60s\"");
  if (auto timeout = run.Duration("timeout")) c->timeout_s = *timeout;
  else if (run.ok() && !run.Has("timeout") && c->budget_s > 0)
    c->timeout_s = 2 * c->budget_s + 60;  // room for start-up and evaluation
  if (c->timeout_s > 0 && c->budget_s > 0 && c->timeout_s < c->budget_s)
    run.Fail("timeout", "must be at least the budget (" + std::to_string(c->budget_s) + "s)");
  if (auto overhead = run.Duration("overhead")) c->overhead_s = *overhead;
  if (auto grace = run.Duration("grace")) c->grace_s = *grace;
  if (auto preflight = run.Duration("preflight")) {
    if (*preflight > 0 && *preflight < c->budget_s) c->preflight_s = *preflight;
    else if (run.ok())
      run.Fail("preflight", "must be less than the budget (" + FormatMetric(c->budget_s) + "s)");
  }
  if (auto limit = run.Size("log_limit")) c->log_limit_bytes = *limit;
  if (auto env = run.StringMap("env")) c->env = *env;
  if (auto sees = run.StringList("sees")) {
    for (const std::string& path : *sees) {
      if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos ||
          path.rfind(".ratchet", 0) == 0 || path.rfind(".git", 0) == 0)
        run.Fail("sees", "'" + path + "' must be a path inside the loop directory (not .git or "
                         ".ratchet)");
      else c->sees.push_back(path.back() == '/' ? path.substr(0, path.size() - 1) : path);
    }
  }
  if (auto m = run.Size("memory")) c->memory_bytes = *m;
  if (auto p = run.Integer("pids")) {
    if (*p >= 1) c->max_pids = static_cast<uint64_t>(*p);
    else run.Fail("pids", "must be at least 1");
  }
  if (auto d = run.Size("disk")) c->disk_bytes = *d;
  if (auto w = run.Integer("workers")) {
    if (*w >= 1 && *w <= 256) c->workers = static_cast<int>(*w);
    else run.Fail("workers", "must be between 1 and 256");
  }
  if (auto moved = run.String("moved")) {
    if (*moved == "rebase" || *moved == "rerun") c->moved = *moved;
    else run.Fail("moved", "must be \"rebase\" or \"rerun\", not \"" + *moved + "\"");
  }
}

// [run] slots: a list of values of one variable (slots = ["0", "1"] with
// slot_env = "CUDA_VISIBLE_DEVICES"), or of tables of variables.
void ReadSlots(ConfigSection run, LoopConfig* c) {
  if (!run.Has("slots")) {
    if (run.Has("slot_env")) run.Fail("slot_env", "needs slots = [...]");
    run.Claim("slot_env");
    return;
  }
  const std::string var = run.String("slot_env").value_or("");
  if (!run.HasTableArray("slots")) {
    auto values = run.StringList("slots");
    if (!values) return;  // the type error is recorded
    for (size_t i = 0; i < values->size(); ++i) {
      SlotConfig slot;
      slot.name = (*values)[i];
      if (!var.empty()) slot.env.push_back({var, (*values)[i]});
      c->slots.push_back(slot);
    }
  } else {
    if (!var.empty()) run.Fail("slot_env", "is for slots given as strings; these are tables");
    std::vector<ConfigSection> tables = run.TableArray("slots");
    for (size_t i = 0; i < tables.size(); ++i) {
      SlotConfig slot;
      slot.name = tables[i].String("name").value_or(std::to_string(i));
      if (auto sbatch = tables[i].StringList("sbatch")) slot.sbatch = *sbatch;
      for (const std::string& key : tables[i].Keys()) {
        if (key == "name" || key == "sbatch") continue;
        if (auto v = tables[i].String(key)) slot.env.push_back({key, *v});
      }
      c->slots.push_back(slot);
    }
  }
  if (!c->slots.empty() && static_cast<int>(c->slots.size()) < c->workers)
    run.Fail("slots", "lists " + std::to_string(c->slots.size()) + " slots for " +
                          std::to_string(c->workers) + " workers; give one per worker");
}

void ReadPrepare(ConfigSection prepare, LoopConfig* c) {
  if (!prepare.present()) return;
  c->prepare.command = prepare.String("command").value_or("");
  if (c->prepare.command.empty() && prepare.ok())
    prepare.Fail("command", "missing: the trusted command that prepares data and tools");
  if (auto outputs = prepare.StringList("outputs")) c->prepare.outputs = *outputs;
  if (c->prepare.outputs.empty() && prepare.ok())
    prepare.Fail("outputs", "missing: the files it makes (globs), hashed and checked before "
                            "every run");
  if (auto t = prepare.Duration("timeout")) c->prepare.timeout_s = *t;
}

void ReadVerify(ConfigSection verify, LoopConfig* c) {
  if (!verify.present()) return;
  c->verify.command = verify.String("command").value_or("");
  if (c->verify.command.empty() && verify.ok())
    verify.Fail("command", "missing: the trusted command that scores a run and prints the summary");
  c->verify.serve = verify.String("serve").value_or("");
  if (auto n = verify.Integer("servers")) {
    if (*n < 1 || *n > 2) verify.Fail("servers", "must be 1 or 2");
    else if (c->verify.serve.empty()) verify.Fail("servers", "needs serve = \"...\"");
    else c->verify.servers = static_cast<int>(*n);
  }
  if (auto t = verify.Duration("timeout")) c->verify.timeout_s = *t;
  if (auto s = verify.Number("claim_sigmas")) {
    if (*s > 0) c->verify.claim_sigmas = *s;
    else verify.Fail("claim_sigmas", "must be positive");
  }
  if (auto t = verify.Number("claim_tolerance")) {
    if (*t >= 0) c->verify.claim_tolerance = *t;
    else verify.Fail("claim_tolerance", "must be zero or positive");
  }
}

void ReadSandbox(ConfigSection sandbox, LoopConfig* c) {
  if (auto r = sandbox.Bool("required")) c->sandbox.required = *r;
  if (auto n = sandbox.Bool("network")) c->sandbox.network = *n;
  for (const char* key : {"readable", "writable"}) {
    auto paths = sandbox.StringList(key);
    if (!paths) continue;
    for (const std::string& p : *paths) {
      if (p.empty() || (p[0] != '/' && p[0] != '~')) {
        sandbox.Fail(key, "'" + p + "' must be an absolute path (or start with ~/)");
        continue;
      }
      (std::string(key) == "readable" ? c->sandbox.readable : c->sandbox.writable).push_back(p);
    }
  }
}

void ReadExecutor(ConfigSection executor, LoopConfig* c) {
  if (!executor.present()) return;
  if (auto kind = executor.String("kind")) {
    if (*kind == "local" || *kind == "slurm") c->executor.kind = *kind;
    else executor.Fail("kind", "must be \"local\" or \"slurm\", not \"" + *kind + "\"");
  }
  if (auto sbatch = executor.StringList("sbatch")) c->executor.sbatch = *sbatch;
  if (auto poll = executor.Duration("poll")) {
    if (*poll > 0) c->executor.poll_s = *poll;
    else executor.Fail("poll", "must be positive");
  }
  if (!c->executor.slurm() && (executor.Has("sbatch") || executor.Has("poll")))
    executor.Fail("kind", "sbatch and poll are for kind = \"slurm\"");
}

void ReadMetric(ConfigSection metric, ConfigSection& root, LoopConfig* c) {
  if (!metric.present()) {
    root.Fail("metric", "missing: add a [metric] table with name and goal (\"min\" or \"max\")");
    return;
  }
  if (auto name = metric.String("name")) c->metric_name = *name;
  if (c->metric_name.empty() && metric.ok())
    metric.Fail("name", "missing: the metric to improve, as the run prints it (e.g. val_bpb)");
  if (auto goal = metric.String("goal")) {
    if (*goal == "min") c->goal = Goal::kMin;
    else if (*goal == "max") c->goal = Goal::kMax;
    else metric.Fail("goal", "must be \"min\" or \"max\", not \"" + *goal + "\"");
  } else if (metric.ok()) {
    metric.Fail("goal", "missing: \"min\" or \"max\"");
  }
  if (auto regex = metric.String("regex")) {
    try {
      std::regex re(*regex);
      if (re.mark_count() != 1) metric.Fail("regex", "must have exactly one capture group (the number)");
      else c->metric_regex = *regex;
    } catch (const std::regex_error& e) {
      metric.Fail("regex", std::string("not a valid regular expression: ") + e.what());
    }
  }
  if (auto constraints = metric.StringList("constraints")) {
    for (const std::string& text : *constraints) {
      Constraint constraint;
      std::string err;
      if (ParseConstraint(text, &constraint, &err)) c->constraints.push_back(constraint);
      else metric.Fail("constraints", err);
    }
  }
}

void ReadGates(std::vector<ConfigSection> gates, LoopConfig* c) {
  for (ConfigSection& gate : gates) {
    GateConfig g;
    g.name = gate.String("name").value_or("");
    if (auto command = gate.String("command")) g.command = *command;
    if (g.command.empty() && gate.ok()) gate.Fail("command", "missing: the shell command of this gate");
    if (g.name.empty()) g.name = g.command.substr(0, g.command.find(' '));
    if (auto when = gate.String("when")) {
      if (*when == "before") g.when = GateConfig::When::kBefore;
      else if (*when == "after") g.when = GateConfig::When::kAfter;
      else gate.Fail("when", "must be \"before\" (the run) or \"after\", not \"" + *when + "\"");
    }
    if (auto t = gate.Duration("timeout")) g.timeout_s = *t;
    g.serve = gate.String("serve").value_or("");
    c->gates.push_back(g);
  }
}

void ReadAccept(ConfigSection accept, LoopConfig* c) {
  if (auto d = accept.Number("min_delta")) {
    if (*d >= 0) c->min_delta = *d;
    else accept.Fail("min_delta", "must be zero or positive");
  }
  if (auto k = accept.Integer("baseline_repeats")) {
    if (*k >= 1 && *k <= 100) c->baseline_repeats = static_cast<int>(*k);
    else accept.Fail("baseline_repeats", "must be between 1 and 100");
  }
  if (auto k = accept.Integer("confirm")) {
    if (*k >= 0 && *k <= 100) c->confirm = static_cast<int>(*k);
    else accept.Fail("confirm", "must be between 0 and 100");
  }
  if (auto s = accept.Number("noise_sigmas")) {
    if (*s >= 0) c->noise_sigmas = *s;
    else accept.Fail("noise_sigmas", "must be zero or positive");
  }
  if (auto f = accept.Number("noise_floor")) {
    if (*f >= 0) c->noise_floor = *f;
    else accept.Fail("noise_floor", "must be zero or positive");
  }
}

void ReadPrune(ConfigSection prune, LoopConfig* c) {
  if (!prune.present()) return;
  PruneConfig& p = c->prune;
  p.goal = c->goal;
  if (auto rule = prune.String("rule")) {
    if (*rule == "median" || *rule == "incumbent" || *rule == "halving") p.rule = *rule;
    else if (*rule != "off")
      prune.Fail("rule", "must be \"median\", \"incumbent\", \"halving\" or \"off\", not \"" +
                             *rule + "\"");
  } else {
    p.rule = "median";
  }
  p.value = prune.String("value").value_or("");
  if (p.value.empty() && prune.ok() && p.enabled())
    prune.Fail("value", "missing: the progress value to compare, as the run prints it "
                        "(progress: elapsed=12.3 loss=2.41 -> \"loss\")");
  if (auto goal = prune.String("goal")) {
    if (*goal == "min") p.goal = Goal::kMin;
    else if (*goal == "max") p.goal = Goal::kMax;
    else prune.Fail("goal", "must be \"min\" or \"max\", not \"" + *goal + "\"");
  }
  auto fraction = [&](const char* key, double v) {
    if (v > 0 && v < 1) return true;
    prune.Fail(key, "must be a fraction of the budget, between 0 and 1 (exclusive)");
    return false;
  };
  if (auto w = prune.Number("warmup")) {
    if (*w == 0 || fraction("warmup", *w)) p.warmup = *w;
  }
  if (auto at = prune.ScalarList("at")) {
    p.at.clear();
    for (const std::string& text : *at) {
      double v = std::strtod(text.c_str(), nullptr);
      if (!fraction("at", v)) break;
      if (!p.at.empty() && v <= p.at.back()) {
        prune.Fail("at", "checkpoints must increase");
        break;
      }
      p.at.push_back(v);
    }
  }
  if (auto k = prune.Integer("patience")) {
    if (*k >= 1 && *k <= 100) p.patience = static_cast<int>(*k);
    else prune.Fail("patience", "must be between 1 and 100");
  }
  if (auto v = prune.Number("percentile")) {
    if (*v > 0 && *v < 100) p.percentile = *v;
    else prune.Fail("percentile", "must be between 0 and 100 (exclusive)");
  }
  if (auto k = prune.Integer("min_runs")) {
    if (*k >= 1) p.min_runs = static_cast<int>(*k);
    else prune.Fail("min_runs", "must be at least 1");
  }
  if (auto v = prune.Number("eta")) {
    if (*v > 1) p.eta = *v;
    else prune.Fail("eta", "must be greater than 1");
  }
  if (auto v = prune.Number("sigmas")) {
    if (*v >= 0) p.sigmas = *v;
    else prune.Fail("sigmas", "must be zero or positive");
  }
  if (auto v = prune.Number("margin")) {
    if (*v >= 0) p.margin = *v;
    else prune.Fail("margin", "must be zero or positive");
  }
  if (p.enabled() && c->budget_s <= 0 && prune.ok())
    prune.Fail("rule", "needs [run] budget: checkpoints are fractions of it");
}

void ReadStop(ConfigSection stop, LoopConfig* c) {
  auto positive_int = [&](const char* key) -> std::optional<int64_t> {
    auto v = stop.Integer(key);
    if (v && *v < 1) {
      stop.Fail(key, "must be at least 1");
      return std::nullopt;
    }
    return v;
  };
  if (auto v = positive_int("max_experiments")) c->max_experiments = static_cast<int>(*v);
  if (auto v = stop.Number("target")) c->target = *v;
  if (auto v = stop.Duration("wall")) c->wall_s = *v;
  if (auto v = positive_int("patience")) c->patience = static_cast<int>(*v);
  if (auto v = stop.Number("cost_usd")) {
    if (*v > 0) c->max_cost_usd = *v;
    else stop.Fail("cost_usd", "must be positive");
  }
  if (auto v = positive_int("tokens")) c->max_tokens = *v;
  if (auto v = positive_int("consecutive_failures")) c->max_consecutive_failures = static_cast<int>(*v);
}

void ReadPropose(ConfigSection propose, LoopConfig* c) {
  if (auto kind = propose.String("kind")) c->propose_kind = *kind;
  for (const std::string& key : propose.Keys()) {
    if (key == "kind") continue;
    ConfigSection section = propose.Extension(key);
    if (section.present()) c->propose_sections[key] = section;
  }
  // The chosen kind always has a section, absent or not, so its errors can
  // name the file and [propose.<kind>].
  if (!c->propose_sections.count(c->propose_kind))
    c->propose_sections[c->propose_kind] = propose.Extension(c->propose_kind);
}

}  // namespace

bool ParseLoopConfig(const std::string& text, const std::string& file, LoopConfig* config,
                     std::string* err) {
  ConfigSection root;
  if (!ConfigSection::Parse(text, file, &root, err)) return false;
  LoopConfig c;
  c.file = file;
  ReadLoop(root.Table("loop"), &c);
  ReadEdit(root.Table("edit"), root, &c);
  ConfigSection run = root.Table("run");
  ReadRun(run, root, &c);
  ReadSlots(run, &c);
  ReadPrepare(root.Table("prepare"), &c);
  ReadVerify(root.Table("verify"), &c);
  ReadSandbox(root.Table("sandbox"), &c);
  ReadExecutor(root.Table("executor"), &c);
  ReadMetric(root.Table("metric"), root, &c);
  ReadGates(root.TableArray("gate"), &c);
  ReadAccept(root.Table("accept"), &c);
  ReadPrune(root.Table("prune"), &c);
  ReadStop(root.Table("stop"), &c);
  ReadPropose(root.Table("propose"), &c);
  c.outer = root.Extension("outer");
  c.review = root.Extension("review");
  c.notify = root.Extension("notify");  // loops: read by src/notify
  c.judge = root.Extension("judge");    // loops: read by `ratchet run`
  if (!root.Finish(err)) return false;
  *config = std::move(c);
  return true;
}

}  // namespace ratchet
