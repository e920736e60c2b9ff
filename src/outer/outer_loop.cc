#include "outer/outer_loop.h"

#include <algorithm>

#include "core/step_specs.h"
#include "outer/author.h"
#include "outer/mechanism_check.h"
#include "outer/trace_stats.h"

namespace ratchet {

using json = nlohmann::json;

const char* OuterStateName(OuterLoop::State state) {
  switch (state) {
    case OuterLoop::State::kOn: return "on";
    case OuterLoop::State::kOff: return "off";
    case OuterLoop::State::kRetired: return "retired";
  }
  return "?";
}

SandboxSpec OuterLoop::MechanismSandbox(const std::string& cwd) const {
  if (!deps_.sandbox || cwd.empty() || !deps_.workspace) return SandboxSpec();
  return FolderSandbox(config_, deps_.workspace->root(), deps_.user_home, cwd,
                       Mount::Kind::kReadOnly);
}

OuterLoop::OuterLoop(const OuterConfig& outer, const LoopConfig& config, const OuterDeps& deps)
    : outer_(outer), config_(config), deps_(deps), store_(deps.workspace) {
  context_.space = deps.space;
  context_.seed = deps.seed;
  context_.schedule = outer.schedule;
  context_.stuck_spread = outer.stuck_spread;
  tuner_ = std::make_shared<TunerMechanism>(context_);
}

OuterLoop::~OuterLoop() {
  for (Managed& m : managed_)
    if (m.mechanism) m.mechanism->Stop();
}

std::shared_ptr<OuterMechanism> OuterLoop::MakeBuiltin(const std::string& name,
                                                       std::string* err) const {
  if (name == "tabu") return std::make_shared<TabuMechanism>(context_, outer_.tabu);
  if (name == "explore") return std::make_shared<ExploreMechanism>(context_);
  if (name == "restart") return std::make_shared<RestartMechanism>(context_, outer_.restart);
  if (name == "bandit") {
    std::unique_ptr<BanditMechanism> bandit;
    if (!BanditMechanism::Create(context_, outer_.bandit, &bandit, err)) return nullptr;
    return std::shared_ptr<OuterMechanism>(std::move(bandit));
  }
  *err = "unknown mechanism '" + name + "'";
  return nullptr;
}

void OuterLoop::Record(const std::string& kind, json detail) {
  pending_.push_back({kind, std::move(detail)});
}

void OuterLoop::Flush(int experiment_id, EventSink* events) {
  if (events)
    for (const Pending& p : pending_) events->Record(experiment_id, p.kind, p.detail.dump());
  pending_.clear();
}

void OuterLoop::Save(const Managed& m, const std::vector<Experiment>* history) {
  if (!store_.enabled()) return;
  json manifest = {{"name", m.name},     {"origin", m.origin},   {"state", OuterStateName(m.state)},
                   {"reason", m.reason}, {"trials", m.trials},   {"since", m.since}};
  if (!m.spec.command.empty()) manifest["command"] = m.spec.command;
  if (m.mechanism) {
    json hooks = json::array();
    for (Hook h : m.mechanism->hooks()) hooks.push_back(HookName(h));
    manifest["hooks"] = hooks;
  }
  std::string err;
  store_.Write(m.name, "manifest.json", manifest.dump(2) + "\n", &err);
  if (history && m.mechanism)
    store_.Write(m.name, "effect.json", Effect(m, *history).dump(2) + "\n", &err);
}

json OuterLoop::Effect(const Managed& m, const std::vector<Experiment>& history) const {
  json calls = json::object();
  int acted = 0, acted_keeps = 0, acted_failures = 0, other = 0, other_keeps = 0;
  double acted_gain = 0, other_gain = 0;
  std::optional<double> best;
  for (const Experiment& e : history) {
    double gain = 0;
    if (e.status == Status::kKeep && e.metric) {
      if (best) gain = std::max(0.0, Gain(config_.goal, *best, *e.metric));
      best = e.metric;
    }
    if (e.baseline || e.id <= m.since) continue;
    const bool by_it = m.mechanism && m.mechanism->acted().count(e.id) > 0;
    if (by_it) {
      ++acted;
      if (e.status == Status::kKeep) ++acted_keeps;
      if (IsRunFailure(e.status)) ++acted_failures;
      acted_gain += gain;
    } else {
      ++other;
      if (e.status == Status::kKeep) ++other_keeps;
      other_gain += gain;
    }
  }
  if (m.mechanism)
    for (const auto& [hook, n] : m.mechanism->calls()) calls[hook] = n;
  json j = {{"state", OuterStateName(m.state)},
            {"since", m.since},
            {"calls", calls},
            {"acted", acted},
            {"keeps", acted_keeps},
            {"gain", acted_gain},
            {"failures", acted_failures},
            {"other", {{"experiments", other}, {"keeps", other_keeps}, {"gain", other_gain}}}};
  if (m.mechanism && !m.mechanism->failure().empty()) j["failure"] = m.mechanism->failure();
  return j;
}

void OuterLoop::SwitchOn(Managed* m, HookSet* hooks, int experiments, const std::string& reason) {
  hooks->Add(m->mechanism);
  m->state = State::kOn;
  m->since = experiments;
  m->calls_at_on = m->mechanism->total_calls();
  ++m->trials;
  m->reason = reason;
  Record("mechanism",
         {{"mechanism", m->name}, {"action", "on"}, {"origin", m->origin}, {"reason", reason}});
  Save(*m, nullptr);
}

void OuterLoop::SwitchOff(Managed* m, HookSet* hooks, State to, const std::string& reason) {
  hooks->Remove(m->name);
  m->state = to;
  m->reason = reason;
  if (to == State::kRetired && m->mechanism) m->mechanism->Stop();
  Record("mechanism", {{"mechanism", m->name}, {"action", OuterStateName(to)}, {"reason", reason}});
}

void OuterLoop::CheckAndStart(Managed* m, const std::vector<Experiment>& history, HookSet* hooks,
                              int experiments) {
  std::string err;
  if (store_.enabled()) {
    if (m->spec.stderr_path.empty()) m->spec.stderr_path = store_.AbsDir(m->name) + "/stderr.log";
    deps_.workspace->MakeDirs(MechanismStore::Dir(m->name), &err);
  }
  m->spec.sandbox = MechanismSandbox(m->spec.cwd);
  const CheckReport report = CheckMechanism(m->spec, config_, deps_.space, history);
  store_.Write(m->name, "check.json", CheckReportJson(report) + "\n", &err);
  auto refuse = [&](const std::string& kind, const std::string& why) {
    m->state = State::kRetired;
    m->reason = why;
    Record("mechanism", {{"mechanism", m->name},
                         {"action", "check_failed"},
                         {"kind", kind},
                         {"reason", why}});
    Save(*m, nullptr);
  };
  if (!report.ok) {
    refuse(report.kind, "failed its check: " + report.reason);
    return;
  }
  Record("mechanism", {{"mechanism", m->name}, {"action", "checked"}, {"reason", report.reason}});
  std::string kind;
  std::unique_ptr<ExternalMechanism> live =
      ExternalMechanism::Start(m->spec, config_, deps_.space, &kind, &err);
  if (!live) {
    refuse(kind, "passed its check, then failed to start: " + err);
    return;
  }
  m->mechanism = std::shared_ptr<OuterMechanism>(std::move(live));
  SwitchOn(m, hooks, experiments, "passed its check: " + report.reason);
}

bool OuterLoop::Install(HookSet* hooks, const std::vector<Experiment>& history,
                        std::string* err) {
  const int n = static_cast<int>(history.size());
  if (outer_.every > 0) hooks->Add(tuner_);
  for (const std::string& name : outer_.pool) {
    Managed m;
    m.name = name;
    m.origin = "builtin";
    m.mechanism = MakeBuiltin(name, err);
    if (!m.mechanism) return false;
    // A built-in switched off or retired in an earlier session stays so.
    const MechanismManifest saved = store_.Manifest(name);
    const std::string& state = saved.state;
    m.trials = saved.trials;
    const bool start_on =
        std::find(outer_.mechanisms.begin(), outer_.mechanisms.end(), name) !=
        outer_.mechanisms.end();
    managed_.push_back(m);
    Managed& added = managed_.back();
    if (state == "retired" || state == "off") {
      added.state = state == "retired" ? State::kRetired : State::kOff;
      added.reason = saved.reason;
    } else if (start_on) {
      --added.trials;  // being on at the start is not a trial
      SwitchOn(&added, hooks, n, "on at the start ([outer] mechanisms)");
      added.trials = std::max(added.trials, 0);
    }
  }
  for (const ExternalSpec& spec : outer_.external) {
    Managed m;
    m.name = spec.name;
    m.origin = "config";
    m.spec = spec;
    if (m.spec.cwd.empty() && deps_.workspace) m.spec.cwd = deps_.workspace->root();
    managed_.push_back(m);
    CheckAndStart(&managed_.back(), history, hooks, n);
  }
  // Mechanisms an agent wrote in earlier sessions.
  for (const std::string& name : store_.Names()) {
    const MechanismManifest saved = store_.Manifest(name);
    if (saved.origin != "agent") continue;
    ++authored_;
    Managed m;
    m.name = name;
    m.origin = "agent";
    m.state = State::kRetired;
    m.reason = saved.reason;
    m.trials = saved.trials;
    m.spec.command = saved.command;
    m.spec.name = name;
    m.spec.cwd = store_.AbsDir(name);
    m.spec.timeout_s = outer_.answer_timeout_s;
    managed_.push_back(m);
    if (saved.state == "on" && !m.spec.command.empty())
      CheckAndStart(&managed_.back(), history, hooks, n);
  }
  return true;
}

void OuterLoop::AfterExperiment(const LoopView& view, HookSet* hooks, EventSink* events) {
  if (!view.history || view.history->empty()) return;
  const std::vector<Experiment>& history = *view.history;
  const int n = static_cast<int>(history.size());
  for (Managed& m : managed_) {
    if (m.state != State::kOn || !m.mechanism || m.mechanism->failure().empty()) continue;
    const std::string failure = m.mechanism->failure();
    SwitchOff(&m, hooks, State::kRetired, "failed: " + failure);
    pending_.back().detail["kind"] = m.mechanism->failure_kind();
    Save(m, &history);
  }
  if (outer_.every > 0 && n % outer_.every == 0) Level15(view, events);
  if (outer_.mechanism_every > 0 && n % outer_.mechanism_every == 0) Level2(view, hooks, events);
  Flush(history.back().id, events);
}

void OuterLoop::Level15(const LoopView& view, EventSink*) {
  const TraceStats stats = ComputeTraceStats(*view.history, config_.goal, outer_.every);
  const TunerDecision d = tuner_->Adjust(stats, view);
  Record("outer", {{"level", "1.5"},
                   {"change", d.change},
                   {"reason", d.reason},
                   {"settings", json::parse(TunerSettingsJson(d.settings))},
                   {"stats", json::parse(TraceStatsJson(stats, false))}});
}

void OuterLoop::Level2(const LoopView& view, HookSet* hooks, EventSink* events) {
  const std::vector<Experiment>& history = *view.history;
  const int n = static_cast<int>(history.size());
  const TraceStats stats = ComputeTraceStats(history, config_.goal, outer_.mechanism_every);
  const bool stuck = stats.since_best >= outer_.schedule.stuck_after;
  json effects = json::object();
  for (Managed& m : managed_) {
    if (m.state != State::kOn || !m.mechanism) continue;
    const json effect = Effect(m, history);
    effects[m.name] = effect;
    const long long calls = m.mechanism->total_calls() - m.calls_at_on;
    const int acted = effect["acted"], keeps = effect["keeps"];
    const int others = effect["other"]["experiments"], other_keeps = effect["other"]["keeps"];
    const std::string counts = std::to_string(keeps) + " keeps in " + std::to_string(acted) +
                               " experiments it acted on; " + std::to_string(other_keeps) +
                               " in " + std::to_string(others) + " others";
    if (calls == 0 && n - m.since >= outer_.mechanism_every) {
      SwitchOff(&m, hooks, State::kRetired,
                "never called in " + std::to_string(n - m.since) + " experiments while on");
      pending_.back().detail["kind"] = "never_called";
    } else if (acted >= outer_.min_acted && keeps == 0) {
      if (m.origin != "builtin") {
        SwitchOff(&m, hooks, State::kRetired, "did not help: " + counts);
      } else if (other_keeps > 0) {
        SwitchOff(&m, hooks, State::kOff, "did worse than the inner loop alone: " + counts);
      }
    }
    Save(m, &history);
  }
  if (stuck) {
    for (Managed& m : managed_) {
      if (m.state != State::kOff || m.origin != "builtin" || m.trials >= outer_.max_trials)
        continue;
      SwitchOn(&m, hooks, n,
               "stuck for " + std::to_string(stats.since_best) + " experiments: trying it (trial " +
                   std::to_string(m.trials + 1) + ")");
    }
  }
  Record("outer", {{"level", "2"},
                   {"stuck", stuck},
                   {"since_best", stats.since_best},
                   {"effects", effects}});
  if (stuck && outer_.author && authored_ < outer_.author->max) {
    bool agent_on = false;
    for (const Managed& m : managed_) agent_on = agent_on || (m.origin == "agent" && m.state == State::kOn);
    if (!agent_on) Author(view, hooks, events);
  }
}

void OuterLoop::Author(const LoopView& view, HookSet* hooks, EventSink*) {
  const std::vector<Experiment>& history = *view.history;
  const int n = static_cast<int>(history.size());
  std::vector<std::string> names = store_.Names();
  std::string name;
  for (int k = authored_ + 1;; ++k) {
    name = "agent-" + std::to_string(k);
    if (std::find(names.begin(), names.end(), name) == names.end()) break;
  }
  ++authored_;
  AuthorRequest request;
  request.name = name;
  request.config = &config_;
  request.space = deps_.space;
  request.history = &history;
  request.stats = ComputeTraceStats(history, config_.goal, outer_.mechanism_every);
  request.answer_timeout_s = outer_.answer_timeout_s;
  for (const Managed& m : managed_) {
    std::string line = m.name + " (" + m.origin + ", " + OuterStateName(m.state) + ")";
    if (m.mechanism) line += ": " + Effect(m, history).dump();
    request.mechanisms.push_back(line);
  }
  Record("mechanism", {{"mechanism", name},
                       {"action", "writing"},
                       {"reason", "stuck for " + std::to_string(request.stats.since_best) +
                                      " experiments: asking the coding agent for a new "
                                      "mechanism"}});
  Managed m;
  m.name = name;
  m.origin = "agent";
  m.state = State::kRetired;
  ExternalSpec spec;
  std::string err;
  if (deps_.sandbox)
    request.sandbox = FolderSandbox(config_, deps_.workspace->root(), deps_.user_home,
                                    store_.AbsDir(name), Mount::Kind::kWritable);
  if (!WriteMechanismWithAgent(*outer_.author, request, deps_.runner, deps_.workspace, &store_,
                               &spec, &err)) {
    m.reason = err;
    Record("mechanism",
           {{"mechanism", name}, {"action", "write_failed"}, {"reason", err}});
    managed_.push_back(m);
    Save(managed_.back(), nullptr);
    return;
  }
  m.spec = spec;
  managed_.push_back(m);
  CheckAndStart(&managed_.back(), history, hooks, n);
}

std::unique_ptr<OuterLoop> MakeOuterLoop(ConfigSection& section, const LoopConfig& config,
                                         const OuterDeps& deps, HookSet* hooks,
                                         const std::vector<Experiment>& history,
                                         std::string* err) {
  OuterConfig outer;
  if (!ReadOuterConfig(section, &outer, err)) return nullptr;
  auto loop = std::make_unique<OuterLoop>(outer, config, deps);
  if (!loop->Install(hooks, history, err)) return nullptr;
  return loop;
}

}  // namespace ratchet
