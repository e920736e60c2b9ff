// The session around the experiments: loading and checking the ledger,
// recovering unfinished experiments, preparing, keeping experiments in
// flight, stop rules, and settling decisions. One experiment's path is in
// experiment_flow.cc; proposals running beside it in proposal_pool.cc.
#include "core/engine.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "base/check.h"
#include "core/experiment_flow.h"
#include "core/proposal_pool.h"
#include "core/scope.h"
#include "core/stop.h"

namespace ratchet {
namespace {

std::string ShortSha(const std::string& sha) { return sha.substr(0, 7); }

// How long the engine waits for a step before looking at Ctrl-C and the
// proposals again. Steps' deadlines are enforced by the runner meanwhile.
constexpr double kWaitSlice = 0.25;

// The runs of `exp` that repeat one commit, each group in order: the
// baseline's runs, and the confirm runs of a would-be keep (alone: the run
// that won the selection is biased). They measure the run-to-run noise, of
// the metric and of the learning curves alike. `usable` picks the runs that
// carry what is measured; a group of fewer than two is left out.
std::vector<std::vector<const RunRecord*>> RepeatGroups(
    const Experiment& exp, const std::vector<RunRecord>& runs,
    const std::function<bool(const RunRecord&)>& usable) {
  std::vector<const RunRecord*> baseline, confirm;
  for (const RunRecord& r : runs) {
    if (!usable(r)) continue;
    if (exp.baseline && (r.purpose == "main" || r.purpose == "baseline_repeat"))
      baseline.push_back(&r);
    if (r.purpose == "confirm") confirm.push_back(&r);
  }
  std::vector<std::vector<const RunRecord*>> groups;
  for (auto* group : {&baseline, &confirm})
    if (group->size() > 1) groups.push_back(std::move(*group));
  return groups;
}

// Records ledger events for parts outside the engine (the outer loop).
class LedgerEvents : public EventSink {
 public:
  LedgerEvents(Ledger* ledger, Clock* clock, Reporter* reporter)
      : ledger_(ledger), clock_(clock), reporter_(reporter) {}
  void Record(int experiment_id, const std::string& kind, const std::string& detail) override {
    LedgerEvent event;
    event.at = clock_->WallSeconds();
    event.experiment_id = experiment_id;
    event.kind = kind;
    event.detail_json = detail;
    std::string err;
    if (!ledger_->AddEvent(event, &err) && reporter_)
      reporter_->OnNote("could not record a " + kind + " event: " + err);
  }

 private:
  Ledger* ledger_;
  Clock* clock_;
  Reporter* reporter_;
};

bool ParseHashes(const std::string& text, const char* what,
                 std::map<std::string, std::string>* out, std::string* err) {
  out->clear();
  if (text.empty()) return true;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) {
    *err = std::string("the ledger's ") + what + " entry is damaged";
    return false;
  }
  for (auto& [path, hash] : j.items()) {
    if (!hash.is_string()) {
      *err = std::string("the ledger's ") + what + " entry is damaged";
      return false;
    }
    (*out)[path] = hash.get<std::string>();
  }
  return true;
}

}  // namespace

Engine::Engine(const LoopConfig& config, const EngineDeps& deps)
    : config_(config), deps_(deps), branch_("ratchet/" + config.tag) {}

Engine::~Engine() {
  if (proposals_) proposals_->JoinAll();
}

void Engine::Note(const std::string& line) {
  if (deps_.reporter) deps_.reporter->OnNote(line);
}

bool Engine::CancelRequested() const { return deps_.cancel && deps_.cancel->load(); }

const Experiment* Engine::Incumbent() const {
  if (incumbent_id_ == 0) return nullptr;
  auto it = std::lower_bound(history_.begin(), history_.end(), incumbent_id_,
                             [](const Experiment& e, int id) { return e.id < id; });
  return it != history_.end() && it->id == incumbent_id_ ? &*it : nullptr;
}

std::string Engine::IncumbentCommit() const {
  const Experiment* best = Incumbent();
  return best ? best->candidate_commit : start_commit_;
}

Noise Engine::CurrentNoise() const { return PooledNoise(noise_groups_); }

void Engine::AddNoiseGroup(const std::vector<double>& values) {
  noise_groups_.push_back(values);
  std::string err;
  const Noise noise = CurrentNoise();
  if (!deps_.ledger->SetMeta("noise_sigma", std::to_string(noise.sigma), &err))
    Note("could not record the noise estimate: " + err);
}

void Engine::RememberCurves(const Experiment& exp, const std::vector<RunRecord>& runs) {
  if (!config_.prune.enabled()) return;
  auto usable = [](const RunRecord& r) { return !r.curve.empty() && !r.timed_out; };
  const bool full = exp.status == Status::kKeep || exp.status == Status::kDiscard;
  const RunRecord* first = FirstFullRun(runs);
  if (full && first && usable(*first)) full_curves_[exp.id] = first->curve;
  for (const auto& group : RepeatGroups(exp, runs, usable)) {
    repeat_curves_.emplace_back();
    for (const RunRecord* r : group) repeat_curves_.back().push_back(r->curve);
  }
}

PruneReference Engine::PruneReferenceNow() const {
  PruneReference ref;
  for (const auto& [id, curve] : full_curves_) {
    ref.completed.push_back(&curve);
    if (id == incumbent_id_) ref.incumbent = &curve;
  }
  for (const std::vector<Curve>& group : repeat_curves_) {
    ref.repeats.emplace_back();
    for (const Curve& curve : group) ref.repeats.back().push_back(&curve);
  }
  return ref;
}

LoopView Engine::View(int proposing_id) const {
  LoopView view;
  view.config = &config_;
  view.history = &history_;
  view.incumbent = Incumbent();
  view.next_id = history_.empty() ? 1 : history_.back().id + 1;
  for (const auto& [id, flow] : flows_) view.next_id = std::max(view.next_id, id + 1);
  if (proposing_id > 0) view.next_id = proposing_id;  // the experiment being proposed
  return view;
}

double Engine::ElapsedWall() const {
  return earlier_sessions_s_ + (deps_.clock->MonotonicSeconds() - session_started_mono_);
}

bool Engine::Write(const Experiment& exp, std::string* err) {
  return deps_.ledger->UpdateExperiment(exp, err);
}

// ---------------------------------------------------------------------------
// Loading, checking, recovering.

bool Engine::Load(std::string* err) {
  if (loaded_) return true;
  if (!CheckLedger(err)) return false;
  std::vector<Experiment> all;
  if (!deps_.ledger->LoadExperiments(&all, err)) return false;
  history_.clear();
  for (const Experiment& e : all) history_.push_back(e);  // unfinished ones leave in Recover
  for (const Experiment& e : history_)
    if (e.phase == Phase::kDone && e.status == Status::kKeep) incumbent_id_ = e.id;
  if (!deps_.ledger->GetMeta("start_commit", &start_commit_, err)) return false;
  std::string text;
  if (!deps_.ledger->GetMeta("protected_hashes", &text, err) ||
      !ParseHashes(text, "protected_hashes", &protected_hashes_, err))
    return false;
  if (!deps_.ledger->GetMeta("prepared_hashes", &text, err) ||
      !ParseHashes(text, "prepared_hashes", &prepared_hashes_, err))
    return false;
  // The noise estimate: every group of repeated runs of one commit.
  for (const Experiment& e : history_) {
    std::vector<RunRecord> runs;
    if (!deps_.ledger->LoadRuns(e.id, &runs, err)) return false;
    auto has_metric = [](const RunRecord& r) { return r.metric.has_value(); };
    for (const auto& group : RepeatGroups(e, runs, has_metric)) {
      noise_groups_.emplace_back();
      for (const RunRecord* r : group) noise_groups_.back().push_back(*r->metric);
    }
    if (e.phase == Phase::kDone) RememberCurves(e, runs);
  }
  std::vector<Session> sessions;
  if (!deps_.ledger->LoadSessions(&sessions, err)) return false;
  for (const Session& s : sessions) {
    // A session that died has no end; count it up to its last experiment.
    double end = s.ended_at;
    for (const Experiment& e : history_)
      if (e.session_id == s.id) end = std::max(end, e.finished_at);
    if (end > s.started_at) earlier_sessions_s_ += end - s.started_at;
  }
  loaded_ = true;
  return true;
}

bool Engine::CheckLedger(std::string* err) {
  // Nothing is settled from a ledger ratchet did not write: rows changed by
  // hand (or by a run, where the sandbox is off) are put back from the
  // journal; a journal that does not hold stops the loop.
  LedgerCheck check;
  if (!deps_.ledger->Verify(&check, err)) return false;
  if (!check.journal_problems.empty()) {
    *err = "the ledger's journal was changed outside ratchet: " + check.journal_problems.front() +
           "; the loop's history cannot be trusted (`ratchet audit` shows the details)";
    return false;
  }
  if (check.foreign_entries > 0 && check.authenticated)
    Note("warning: " + check.key_note);  // goes on: a loop moved here is legitimate
  if (check.row_problems.empty()) return true;
  std::vector<std::string> repaired;
  if (!deps_.ledger->Repair(&repaired, err)) return false;
  std::string list;
  for (size_t i = 0; i < check.row_problems.size() && i < 3; ++i)
    list += (i ? "; " : "") + check.row_problems[i];
  Note("the ledger was changed outside ratchet (" + list + "); put back " +
       std::to_string(repaired.size()) + " rows from its journal");
  LedgerEvents events(deps_.ledger, deps_.clock, deps_.reporter);
  events.Record(0, "ledger_repaired",
                nlohmann::json{{"problems", check.row_problems}, {"repaired", repaired}}.dump());
  return true;
}

bool Engine::Preflight(std::string* err) {
  if (!Load(err)) return false;
  bool pending = false;
  for (const Experiment& e : history_) pending = pending || e.phase != Phase::kDone;
  if (!start_commit_.empty() && !CheckBranch(err)) return false;
  if (!pending) {
    std::vector<std::string> dirty;
    if (!deps_.repo->DirtyPaths(&dirty, err)) return false;
    if (!dirty.empty()) {
      std::string list;
      for (size_t i = 0; i < dirty.size() && i < 5; ++i) list += (i ? ", " : "") + dirty[i];
      if (dirty.size() > 5) list += ", ...";
      *err = "the working tree has uncommitted changes (" + list +
             "); commit or stash them before `ratchet run`";
      return false;
    }
  }
  if (!deps_.sandbox_available && config_.sandbox.required) {
    *err = "the sandbox for untrusted steps does not work here (" + deps_.sandbox_why +
           "); fix that, or set [sandbox] required = false to run builds, runs and proposers "
           "as plain processes (said in every ledger row)";
    return false;
  }
  return true;
}

bool Engine::CheckBranch(std::string* err) {
  std::string tip;
  if (!deps_.repo->ResolveRef("refs/heads/" + branch_, &tip, err)) return false;
  if (tip.empty()) return true;  // created again from the ledger's incumbent
  std::string expected = IncumbentCommit();
  bool explained = tip == expected;
  // Killed between deciding a keep and moving the branch, or the reverse.
  for (const Experiment& e : history_)
    if (e.phase != Phase::kDone && (tip == e.parent_commit || tip == e.candidate_commit))
      explained = true;
  if (!explained) {
    *err = "branch " + branch_ + " is at " + ShortSha(tip) + " but the ledger's best is " +
           ShortSha(expected) + "; was it moved by hand? Put it back with `git branch -f " +
           branch_ + " " + expected + "` (while on another branch)";
    return false;
  }
  return true;
}

bool Engine::Recover(std::string* err) {
  std::vector<Experiment> unfinished;
  std::vector<Experiment> done;
  for (Experiment& e : history_) (e.phase == Phase::kDone ? done : unfinished).push_back(e);
  history_ = std::move(done);
  for (Experiment& e : unfinished) {
    // Only a batch step (a cluster job) can outlive ratchet and be taken up
    // again, and only in a phase that runs one.
    const bool resumable =
        e.status == Status::kNone && (e.phase == Phase::kBuilding || e.phase == Phase::kRunning);
    std::vector<RunRecord> runs;
    if (resumable && !deps_.ledger->LoadRuns(e.id, &runs, err)) return false;
    if (std::optional<ResumePoint> at = resumable ? FindResume(e, runs) : std::nullopt) {
      reattach_.push_back({e, std::move(runs), std::move(*at)});
      continue;
    }
    if (!RecoverOne(e, err)) return false;
  }
  // Working copies of experiments that are over (a crash before their
  // removal) go; nothing in them was kept that is not in a commit. A
  // reattached run is still using its own.
  if (reattach_.empty()) return deps_.workspace->RemoveAll(".ratchet/work", err);
  for (const Experiment& e : unfinished) {
    const bool in_use = std::any_of(reattach_.begin(), reattach_.end(),
                                    [&](const Reattachment& r) { return r.exp.id == e.id; });
    if (!in_use && !deps_.workspace->RemoveAll(".ratchet/work/" + std::to_string(e.id), err))
      return false;
  }
  return true;
}

std::optional<ResumePoint> Engine::FindResume(const Experiment& exp,
                                              const std::vector<RunRecord>& runs) const {
  if (!deps_.workspace->Exists(".ratchet/work/" + std::to_string(exp.id))) return std::nullopt;
  const ExperimentPaths paths = PathsOf(deps_.workspace->root(), exp.id);
  return ExperimentFlow::FindResume(config_, exp, runs, [&](const std::string& name) {
    return deps_.steps->CanReattach(paths.Log(name));
  });
}

bool Engine::Reattach(std::string* err) {
  for (Reattachment& r : reattach_) {
    auto flow = std::make_unique<ExperimentFlow>(this, r.exp);
    ExperimentFlow* raw = flow.get();
    flows_[r.exp.id] = std::move(flow);
    if (!raw->Reattach(r.at, r.runs, err)) return false;
    Note("#" + std::to_string(r.exp.id) + ": reattached to its " + r.at.what +
         ", still on the executor");
    events_->Record(r.exp.id, "reattached", nlohmann::json{{"step", r.at.name}}.dump());
  }
  reattach_.clear();
  // What the earlier session left running and nothing took up again ends
  // now: its experiments were recorded as interrupted.
  for (const std::string& line : deps_.steps->EndLeftovers()) Note(line);
  return true;
}

bool Engine::RecoverOne(Experiment exp, std::string* err) {
  if (exp.status == Status::kNone) {
    // Keep whatever the proposer had written: nothing tried is ever lost.
    const ExperimentPaths paths = PathsOf(deps_.workspace->root(), exp.id);
    const std::string rel_copy = ".ratchet/work/" + std::to_string(exp.id);
    if (exp.candidate_commit.empty() && !exp.parent_commit.empty() &&
        deps_.workspace->Exists(rel_copy)) {
      CopyScan scan;
      if (!deps_.repo->ScanCopy(paths.copy, exp.parent_commit, &scan, err)) return false;
      CopyScan storable = scan;
      storable.changes.clear();
      for (const FileChange& c : scan.changes)
        if (c.problem.empty()) storable.changes.push_back(c);
      if (!storable.changes.empty()) {
        std::string sha;
        if (!deps_.repo->CommitScan(storable,
                                    "ratchet #" + std::to_string(exp.id) +
                                        " (interrupted): " + exp.description,
                                    &sha, err) ||
            !deps_.repo->SetRef("refs/ratchet/tried/" + std::to_string(exp.id), sha, err))
          return false;
        exp.candidate_commit = sha;
      }
    }
    exp.status = Status::kInterrupted;
    exp.reason = std::string("ratchet stopped while the experiment was ") + PhaseName(exp.phase);
    exp.finished_at = deps_.clock->WallSeconds();
    exp.phase = Phase::kDecided;
    if (!Write(exp, err)) return false;
    Note("#" + std::to_string(exp.id) + " was interrupted (" + exp.reason + ")");
  } else {
    // A decision ratchet wrote (the ledger was verified on load): finish it.
    Note("#" + std::to_string(exp.id) + " was decided (" + StatusName(exp.status) +
         ") before ratchet stopped; finishing it");
    if (exp.status == Status::kKeep && !exp.baseline) {
      std::string tip;
      if (!deps_.repo->ResolveRef("refs/heads/" + branch_, &tip, err)) return false;
      if (tip == exp.candidate_commit) {
        if (!deps_.repo->RestoreTo(exp.candidate_commit, err)) return false;
      } else if (!AdvanceTo(exp, err)) {
        return false;
      }
    }
  }
  exp.phase = Phase::kDone;
  if (!Write(exp, err)) return false;
  auto at = std::lower_bound(history_.begin(), history_.end(), exp.id,
                             [](const Experiment& e, int id) { return e.id < id; });
  history_.insert(at, exp);
  if (exp.status == Status::kKeep && exp.id > incumbent_id_) incumbent_id_ = exp.id;
  return true;
}

bool Engine::AdvanceTo(const Experiment& exp, std::string* err) {
  std::string tip;
  if (!deps_.repo->ResolveRef("refs/heads/" + branch_, &tip, err)) return false;
  return deps_.repo->AdvanceBranch(branch_, exp.candidate_commit,
                                   tip.empty() ? IncumbentCommit() : tip, err);
}

bool Engine::StartLoop(std::string* err) {
  if (start_commit_.empty()) {
    // A new loop: remember where it began before touching git.
    if (!deps_.repo->Head(&start_commit_, err)) return false;
    if (!deps_.ledger->SetMeta("start_commit", start_commit_, err) ||
        !deps_.ledger->SetMeta("branch", branch_, err) ||
        !deps_.ledger->SetMeta("metric_name", config_.metric_name, err) ||
        !deps_.ledger->SetMeta("goal", config_.goal == Goal::kMin ? "min" : "max", err))
      return false;
  }
  if (!deps_.repo->CheckoutBranch(branch_, IncumbentCommit(), err)) return false;

  std::map<std::string, std::string> hashes;
  if (!deps_.workspace->HashFiles(config_.protected_files, &hashes, err)) return false;
  if (protected_hashes_.empty() && history_.empty()) {
    nlohmann::json j = hashes;
    if (!deps_.ledger->SetMeta("protected_hashes", j.dump(), err)) return false;
    protected_hashes_ = hashes;
  } else if (std::string problem = CompareProtectedHashes(protected_hashes_, hashes);
             !problem.empty()) {
    *err = problem + " since the loop began; restore it (e.g. `git checkout -- FILE`, or " +
           "prepare the data again), or start a new loop with another [loop] tag";
    return false;
  }
  // What untrusted steps of this loop may see and write.
  sandbox_ = SandboxPlan();
  sandbox_.use = deps_.sandbox_available;
  sandbox_.home = deps_.home;
  for (const auto& [path, hash] : hashes) sandbox_.protected_paths.push_back(path);
  return true;
}

bool Engine::Prepare(std::string* err) {
  if (config_.prepare.command.empty()) return true;
  std::map<std::string, std::string> now;
  if (!deps_.workspace->HashFiles(config_.prepare.outputs, &now, err)) return false;
  if (!prepared_hashes_.empty() && now == prepared_hashes_) return true;
  // Missing outputs (a fresh clone, a first session): make them. Outputs
  // that exist but differ from what the loop began with are refused below.
  bool missing = now.empty();
  for (const auto& [path, hash] : prepared_hashes_) missing = missing || !now.count(path);
  if (missing) {
    Note("preparing: " + config_.prepare.command);
    RunSpec spec;
    spec.argv = ShellCommand(config_.prepare.command);
    spec.cwd = deps_.workspace->root();
    spec.timeout_s = config_.prepare.timeout_s;
    spec.grace_s = config_.grace_s;
    spec.log_path = deps_.workspace->root() + "/.ratchet/prepare.log";
    spec.env = config_.env;
    StepRunner::StepId id = deps_.steps->Start(spec);
    StepRunner::StepId done = 0;
    RunResult result;
    while (!deps_.steps->Wait(kWaitSlice, &done, &result) || done != id) {
      if (CancelRequested()) deps_.steps->Cancel(id);
    }
    if (!result.ok()) {
      *err = "[prepare] " + config_.prepare.command + " failed: " + result.Describe() +
             " (log: .ratchet/prepare.log)";
      return false;
    }
    if (!deps_.workspace->HashFiles(config_.prepare.outputs, &now, err)) return false;
    if (now.empty()) {
      *err = "[prepare] made none of its outputs (" + config_.prepare.outputs.front() + ", ...)";
      return false;
    }
  }
  if (prepared_hashes_.empty()) {
    nlohmann::json j = now;
    if (!deps_.ledger->SetMeta("prepared_hashes", j.dump(), err)) return false;
    prepared_hashes_ = now;
    return true;
  }
  if (std::string problem = CompareProtectedHashes(prepared_hashes_, now); !problem.empty()) {
    *err = "prepared output: " + problem + " since the loop began (it must be made exactly " +
           "again: the same data, the same evaluator); or start a new loop with another tag";
    return false;
  }
  return true;
}

bool Engine::CheckTrusted(std::string* problem, std::string* err) {
  std::map<std::string, std::string> now;
  if (!deps_.workspace->HashFiles(config_.protected_files, &now, err)) return false;
  *problem = CompareProtectedHashes(protected_hashes_, now);
  if (!problem->empty() || config_.prepare.command.empty()) return true;
  if (!deps_.workspace->HashFiles(config_.prepare.outputs, &now, err)) return false;
  *problem = CompareProtectedHashes(prepared_hashes_, now);
  if (!problem->empty()) *problem = "prepared output: " + *problem;
  return true;
}

// ---------------------------------------------------------------------------
// The session's loop.

std::string Engine::CheckStopRules(StopKind* kind) const {
  if (!stop_reason_.empty()) {
    *kind = stop_kind_;
    return stop_reason_;
  }
  StopInput input;
  input.history = &history_;
  input.incumbent = Incumbent();
  input.elapsed_wall_s = ElapsedWall();
  input.interrupts = deps_.interrupts ? deps_.interrupts->load() : 0;
  input.in_flight = static_cast<int>(flows_.size());
  std::string reason = CheckStop(input, config_);
  *kind = input.interrupts > 0                        ? StopKind::kInterrupted
          : reason.rfind("reached stop.target", 0) == 0 ? StopKind::kTarget
          : reason.rfind("circuit breaker", 0) == 0     ? StopKind::kCircuitBreaker
                                                        : StopKind::kRule;
  return reason;
}

bool Engine::StartExperiment(std::string* err) {
  const Experiment* incumbent = Incumbent();
  Experiment exp;
  exp.session_id = session_id_;
  exp.phase = Phase::kProposing;
  exp.baseline = incumbent == nullptr;
  exp.parent_commit = IncumbentCommit();
  exp.proposer = exp.baseline ? "baseline" : deps_.proposer->kind();
  // steering: `ratchet rerun DIR ID` comes before the proposer's next idea.
  RerunRequest rerun;
  const bool is_rerun = !exp.baseline && deps_.steering && deps_.steering->TakeRerun(&rerun);
  if (is_rerun) exp.proposer = kRerunByHand;
  exp.started_at = deps_.clock->WallSeconds();
  // The lowest free worker slot.
  std::vector<bool> busy(static_cast<size_t>(std::max(1, config_.workers)), false);
  for (const auto& [id, flow] : flows_)
    if (flow->exp().worker < static_cast<int>(busy.size())) busy[flow->exp().worker] = true;
  exp.worker = static_cast<int>(std::find(busy.begin(), busy.end(), false) - busy.begin());
  RATCHET_CHECK(exp.worker < static_cast<int>(busy.size()),
                "an experiment starts only when a worker is free");
  if (!sandbox_.use)
    exp.warnings.push_back("ran without the sandbox ([sandbox] required = false: " +
                           deps_.sandbox_why + ")");
  if (!deps_.ledger->InsertExperiment(&exp, err)) return false;
  RATCHET_CHECK(exp.id > 0 && flows_.count(exp.id) == 0,
                "the ledger gives each experiment an id of its own");
  exp.log_path = ".ratchet/runs/" + std::to_string(exp.id) + "/run.log";
  if (!Write(exp, err)) return false;
  if (deps_.reporter) deps_.reporter->OnPhase(exp);
  auto flow = std::make_unique<ExperimentFlow>(this, exp);
  ExperimentFlow* raw = flow.get();
  if (is_rerun) raw->RerunOf(rerun.experiment_id);
  flows_[exp.id] = std::move(flow);
  return raw->Start(err) && Retire(raw, err);
}

ProposalRequest Engine::MakeRequest(ExperimentFlow* flow) {
  ProposalRequest request;
  request.experiment_id = flow->exp().id;
  request.worktree = flow->paths().copy;
  request.run_dir = flow->paths().run_dir;
  request.config = &config_;
  request.history = &history_;
  request.incumbent = Incumbent();
  request.seed = config_.seed * 1000003ull + static_cast<uint64_t>(flow->exp().id);
  request.cancel = deps_.cancel;
  request.sandbox = ProposerSandbox(config_, flow->paths(), sandbox_);
  MakeHome(request.sandbox.home);
  return request;
}

bool Engine::ServeProposals(std::string* err) {
  // Proposals made on this thread in this pass, not yet handed to their
  // flows: the later requests of the pass see them in flight (with their
  // parameters), so several workers starting at once get different points.
  std::vector<ProposalPool::Done> done_now;
  std::vector<Experiment> proposed_now;
  for (auto& [id, flow] : flows_) {
    if (!flow->wants_proposal()) continue;
    ProposalRequest request = MakeRequest(flow.get());
    if (deps_.hooks) {
      Guidance guidance = deps_.hooks->BeforePropose(View(id));
      request.guidance = guidance.text;
      request.search_hints_json = guidance.search_hints_json;
    }
    // steering: the user's notes (`ratchet note`) reach every later proposal.
    if (deps_.steering)
      for (std::string& line : deps_.steering->Guidance()) request.guidance.push_back(line);
    std::vector<Experiment> in_flight;
    for (const auto& entry : flows_) {
      const int other_id = entry.first;  // a named copy: clang 14 cannot capture a binding
      if (other_id == id) continue;
      auto made = std::find_if(proposed_now.begin(), proposed_now.end(),
                               [&](const Experiment& e) { return e.id == other_id; });
      in_flight.push_back(made != proposed_now.end() ? *made : entry.second->exp());
    }
    flow->proposal_started();
    const bool threaded = deps_.proposer->concurrent() && config_.workers > 1;
    proposals_->Start(id, request, history_, in_flight, threaded);
    if (threaded) continue;
    for (ProposalPool::Done& done : proposals_->TakeFinished()) {
      Experiment pending = flows_.at(done.experiment_id)->exp();
      pending.description = done.proposal.description;
      pending.params_json = done.proposal.params_json;
      proposed_now.push_back(std::move(pending));
      done_now.push_back(std::move(done));
    }
  }
  for (ProposalPool::Done& done : proposals_->TakeFinished()) done_now.push_back(std::move(done));
  for (ProposalPool::Done& done : done_now) {
    auto it = flows_.find(done.experiment_id);
    if (it == flows_.end() || it->second->done()) continue;  // ended while it was proposed
    ExperimentFlow* flow = it->second.get();
    if (deps_.hooks) const_cast<Experiment&>(flow->exp()).AddMechanisms(deps_.hooks->TakeTouched());
    if (!flow->OnProposal(done.proposal, done.seconds, err) || !Retire(flow, err)) return false;
  }
  return true;
}

void Engine::MakeHome(const std::string& home) {
  // Scratch homes live under the loop's .ratchet/runs/<id>/home/.
  const std::string& root = deps_.workspace->root();
  std::string err;
  if (home.rfind(root + "/", 0) == 0 &&
      !deps_.workspace->MakeDirs(home.substr(root.size() + 1), &err))
    Note("cannot make the scratch home " + home + ": " + err);
}

StepRunner::StepId Engine::StartStep(ExperimentFlow* flow, const RunSpec& spec) {
  MakeHome(spec.sandbox.home);
  StepRunner::StepId id = deps_.steps->Start(spec);
  step_owner_[id] = flow->exp().id;
  return id;
}

void Engine::StartConnected(ExperimentFlow* flow, const RunSpec& verifier,
                            const std::vector<RunSpec>& servers, StepRunner::StepId* verifier_id,
                            std::vector<StepRunner::StepId>* server_ids) {
  MakeHome(verifier.sandbox.home);
  for (const RunSpec& server : servers) MakeHome(server.sandbox.home);
  deps_.steps->StartConnected(verifier, servers, verifier_id, server_ids);
  step_owner_[*verifier_id] = flow->exp().id;
  for (StepRunner::StepId id : *server_ids) step_owner_[id] = flow->exp().id;
}

bool Engine::Dispatch(StepRunner::StepId id, const RunResult& result, std::string* err) {
  auto owner = step_owner_.find(id);
  const bool owned = owner != step_owner_.end();  // else a step of a flow that is over
  const int experiment_id = owned ? owner->second : 0;
  if (owned) step_owner_.erase(owner);
  // Before the step's result counts: what it (or a step still running)
  // changed of ratchet's own git state is put back.
  std::vector<std::string> changes;
  if (!deps_.repo->RestoreOwnedState(&changes, err)) return false;
  if (!changes.empty() && !OwnedStateChanged(experiment_id, changes, err)) return false;
  if (!owned) return true;
  auto it = flows_.find(experiment_id);
  if (it == flows_.end() || it->second->done()) return true;
  return it->second->OnStep(id, result, err) && Retire(it->second.get(), err);
}

bool Engine::OwnedStateChanged(int experiment_id, const std::vector<std::string>& changes,
                               std::string* err) {
  // Who could have done it: the experiment whose step just ended and every
  // one with a step still running (only steps reach .git between checks;
  // proposers are checked by their own guard).
  std::set<int> suspects;
  if (flows_.count(experiment_id)) suspects.insert(experiment_id);
  for (const auto& [step, owner] : step_owner_)
    if (flows_.count(owner)) suspects.insert(owner);
  std::string list;
  for (const std::string& c : changes) list += (list.empty() ? "" : ", ") + c;
  std::string who;
  for (int id : suspects) who += (who.empty() ? "#" : ", #") + std::to_string(id);
  events_->Record(
      suspects.size() == 1 ? *suspects.begin() : 0, "state_restored",
      nlohmann::json{{"changes", changes},
                     {"experiments", std::vector<int>(suspects.begin(), suspects.end())}}
          .dump());
  Note("a step changed ratchet's git state (" + list + ")" +
       (who.empty() ? "" : "; it ran in experiment " + who));
  const std::string what = "a step changed ratchet's git state: " + list +
                           "; .git is ratchet's, a step must not write it";
  if (suspects.size() == 1) {
    ExperimentFlow* flow = flows_[*suspects.begin()].get();
    return flow->StateChanged(what, err) && Retire(flow, err);
  }
  // Several were running: none is blamed alone, each row says so.
  for (int id : suspects)
    flows_[id]->Warn("while this experiment ran, a step of experiment " + who + " " +
                     what.substr(std::string("a step ").size()));
  return true;
}

bool Engine::Retire(ExperimentFlow* flow, std::string* err) {
  (void)err;
  if (!flow->done()) return true;
  const int id = flow->exp().id;
  for (auto it = step_owner_.begin(); it != step_owner_.end();) {
    if (it->second == id) {
      deps_.steps->Cancel(it->first);  // the other half of a pair that failed first
      it = step_owner_.erase(it);
    } else {
      ++it;
    }
  }
  flows_.erase(id);
  return true;
}

void Engine::CancelAll() {
  for (const auto& [step, owner] : step_owner_) deps_.steps->Cancel(step);
}

bool Engine::Record(const Experiment& exp, std::string* err) {
  const Experiment* before = Incumbent();
  std::optional<Experiment> previous;
  if (before) previous = *before;
  auto at = std::lower_bound(history_.begin(), history_.end(), exp.id,
                             [](const Experiment& e, int id) { return e.id < id; });
  history_.insert(at, exp);
  if (exp.status == Status::kKeep) incumbent_id_ = exp.id;

  if (deps_.hooks) {
    LoopView view = View();
    deps_.hooks->OnResult(view, exp);
    if (deps_.outer) deps_.outer->AfterExperiment(view, deps_.hooks, events_.get());
    Experiment* stored = nullptr;
    for (Experiment& e : history_)
      if (e.id == exp.id) stored = &e;
    if (stored->AddMechanisms(deps_.hooks->TakeTouched()) && !Write(*stored, err)) return false;
    for (const auto& [key, calls] : deps_.hooks->TakeCounts())
      if (!deps_.ledger->AddMechanismCalls(key.first, key.second, calls, err)) return false;
  }
  AppendNotes(exp, previous ? &*previous : nullptr);
  if (deps_.reporter) deps_.reporter->OnFinished(exp, Incumbent());

  if (exp.baseline && exp.status != Status::kKeep && stop_reason_.empty()) {
    stop_kind_ = exp.status == Status::kInterrupted ? StopKind::kInterrupted
                                                    : StopKind::kBaselineFailed;
    stop_reason_ = exp.status == Status::kInterrupted
                       ? "stopped by the user (Ctrl-C)"
                       : std::string("the baseline failed (") + StatusName(exp.status) + ": " +
                             exp.reason + "); fix the workload, then run again";
  }
  if (exp.status == Status::kOutOfScope && stop_reason_.empty()) {
    // A protected file of the loop directory itself changed: git cannot
    // restore an ignored one (prepared data), and every later experiment
    // would fail the same way.
    std::string problem;
    if (!CheckTrusted(&problem, err)) return false;
    if (!problem.empty()) {
      stop_kind_ = StopKind::kCircuitBreaker;
      stop_reason_ = problem + " and git cannot restore it (it is not tracked); restore it "
                     "(e.g. prepare the data again), then run again";
    }
  }
  if (exp.status == Status::kInterrupted && stop_reason_.empty()) {
    stop_kind_ = StopKind::kInterrupted;
    stop_reason_ = "stopped by the user (Ctrl-C twice)";
  }
  return true;
}

void Engine::AppendNotes(const Experiment& exp, const Experiment* before) {
  // A short factual line per experiment: the memory a fresh agent resumes from.
  std::string line = "- #" + std::to_string(exp.id) + " " + StatusName(exp.status);
  if (exp.metric) line += " " + config_.metric_name + "=" + FormatMetric(*exp.metric);
  if (before && before->metric) line += " (best was " + FormatMetric(*before->metric) + ")";
  line += ": " + (exp.description.empty() ? std::string("(no description)") : exp.description);
  if (exp.status != Status::kKeep && !exp.reason.empty()) line += " -- " + exp.reason;
  std::string err;
  if (!deps_.workspace->AppendFile(".ratchet/notes.md", line + "\n", &err))
    Note("could not append to .ratchet/notes.md: " + err);
}

bool Engine::Run(StopSummary* summary, std::string* err) {
  // From here on, ratchet's refs, HEAD, config and hooks are checked after
  // every step (prepare is trusted; what the loop held at the start is).
  if (!Load(err) || !Recover(err) || !StartLoop(err) ||
      !deps_.repo->WatchOwnedState(branch_, err) || !Prepare(err))
    return false;
  proposals_ = std::make_unique<ProposalPool>(deps_.proposer, deps_.steps, deps_.clock);

  Session session;
  session.pid = deps_.pid;
  session.started_at = deps_.clock->WallSeconds();
  if (!deps_.ledger->BeginSession(session, &session_id_, err)) return false;
  session_started_mono_ = deps_.clock->MonotonicSeconds();
  if (deps_.reporter) deps_.reporter->OnSessionStart(session_id_);
  events_ = std::make_unique<LedgerEvents>(deps_.ledger, deps_.clock, deps_.reporter);
  events_->Record(0, "session_start",
                  nlohmann::json{{"session", session_id_}, {"pid", deps_.pid}}.dump());
  if (!Reattach(err)) return false;

  std::string reason;
  StopKind kind = StopKind::kRule;
  bool cancelled = false;
  auto fail = [&](const std::string& why) {
    std::string ignored;
    CancelAll();
    proposals_->JoinAll();
    deps_.ledger->EndSession(session_id_, deps_.clock->WallSeconds(), "error: " + why, &ignored);
    return false;
  };
  while (true) {
    if (CancelRequested() && !cancelled) {
      cancelled = true;
      CancelAll();
      for (auto it = flows_.begin(); it != flows_.end();) {
        ExperimentFlow* flow = (it++)->second.get();
        if (!flow->Interrupt(err) || !Retire(flow, err)) return fail(*err);
      }
    }
    reason = CheckStopRules(&kind);
    // steering: `ratchet pause` starts nothing new; what is in flight goes on.
    const bool paused = reason.empty() && deps_.steering &&
                        deps_.steering->Paused([this](const std::string& line) { Note(line); });
    // Until the baseline is kept there is nothing to propose from: it runs alone.
    while (reason.empty() && !cancelled && !paused &&
           static_cast<int>(flows_.size()) < std::max(1, config_.workers) &&
           (Incumbent() != nullptr || flows_.empty())) {
      if (!StartExperiment(err)) return fail(*err);
      reason = CheckStopRules(&kind);
    }
    if (!ServeProposals(err)) return fail(*err);
    if (flows_.empty() && !paused) {
      reason = CheckStopRules(&kind);  // what the experiments just finished changed
      if (!reason.empty() || cancelled) break;
      continue;
    }
    StepRunner::StepId id = 0;
    RunResult result;
    const double wait =
        paused || proposals_->running() > 0 || deps_.steps->Running() > 0 ? kWaitSlice : 0;
    if (deps_.steps->Wait(wait, &id, &result) && !Dispatch(id, result, err)) return fail(*err);
  }
  if (cancelled && reason.empty()) {
    reason = "stopped by the user (Ctrl-C twice)";
    kind = StopKind::kInterrupted;
  }
  proposals_->JoinAll();

  if (!deps_.ledger->EndSession(session_id_, deps_.clock->WallSeconds(), reason, err))
    return false;
  events_->Record(0, "stop", nlohmann::json{{"reason", reason}}.dump());
  if (deps_.reporter) deps_.reporter->OnStop(reason);

  summary->reason = reason;
  summary->kind = kind;
  summary->experiments = static_cast<int>(history_.size());
  for (const Experiment& e : history_) ++summary->counts[e.status];
  if (const Experiment* best = Incumbent()) summary->best = *best;
  return true;
}

}  // namespace ratchet
