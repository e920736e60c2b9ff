// One experiment's path; see experiment_flow.h for the picture. Every
// `return Finish(...)` is a decision; every Enter() is a write-ahead.
#include "core/experiment_flow.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/check.h"
#include "core/accept.h"
#include "core/engine.h"
#include "core/metrics.h"
#include "core/prune.h"
#include "core/scope.h"

namespace ratchet {
namespace {

// The first line of `text`, trimmed, at most `limit` bytes.
std::string OneLine(const std::string& text, size_t limit = 300) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return "";
  size_t end = text.find('\n', start);
  std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  if (line.size() > limit) line = line.substr(0, limit - 3) + "...";
  return line;
}

std::string FormatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0fs", s);
  return buf;
}

// The last "FAIL: ..." line a trusted step printed, or "".
std::string FailLine(const std::string& output) {
  size_t at = output.rfind("FAIL: ");
  if (at == std::string::npos || (at > 0 && output[at - 1] != '\n')) return "";
  return OneLine(output.substr(at + 6));
}

// Engine-measured values, which no printed line may override.
constexpr const char* kMeasuredPrefix = "run.";

// The step name of a gate: its log is gate-<name>.log.
std::string GateStep(const GateConfig& gate) { return "gate-" + gate.name; }

// Whether `exp`'s first run comes after a preflight: not for the baseline
// or a `ratchet rerun`. A winner run again on its moved incumbent gets none
// either; the callers check that themselves (rerun_, or FindResume's rerun).
bool HasPreflight(const LoopConfig& config, const Experiment& exp) {
  return config.preflight_s > 0 && !exp.baseline && !RunInFull(exp);
}

// The indexes of the gates that run `when` (before or after the runs), in
// order.
std::vector<size_t> GatesRun(const LoopConfig& config, GateConfig::When when) {
  std::vector<size_t> order;
  for (size_t i = 0; i < config.gates.size(); ++i)
    if (config.gates[i].when == when) order.push_back(i);
  return order;
}

}  // namespace

ExperimentFlow::ExperimentFlow(Engine* engine, Experiment exp)
    : engine_(engine), exp_(std::move(exp)) {
  paths_ = PathsOf(engine_->deps_.workspace->root(), exp_.id);
  first_runs_ = exp_.baseline ? engine_->config_.baseline_repeats : 1;
}

bool ExperimentFlow::Enter(Phase phase, std::string* err) {
  exp_.phase = phase;
  if (!engine_->Write(exp_, err)) return false;
  if (engine_->deps_.reporter) engine_->deps_.reporter->OnPhase(exp_);
  return true;
}

// ---------------------------------------------------------------------------
// Proposal, commit, scope.

bool ExperimentFlow::Start(std::string* err) {
  Workspace* ws = engine_->deps_.workspace;
  const std::string rel_copy = ".ratchet/work/" + std::to_string(exp_.id);
  if (!ws->MakeDirs(".ratchet/runs/" + std::to_string(exp_.id), err) ||
      !ws->MakeDirs(".ratchet/work", err) || !ws->RemoveAll(rel_copy, err) ||
      !engine_->deps_.repo->CheckoutCopy(exp_.parent_commit, paths_.copy, err))
    return false;
  if (rerun_of_ > 0) {
    stage_ = Stage::kProposing;
    Proposal proposal;
    return RerunProposal(&proposal, err) && OnProposal(proposal, 0, err);
  }
  if (!exp_.baseline) {
    stage_ = Stage::kWantProposal;
    return true;
  }
  exp_.description = "baseline";
  exp_.candidate_commit = exp_.parent_commit;
  return Enter(Phase::kCommitted, err) && Build(err);
}

bool ExperimentFlow::OnProposal(const Proposal& proposal, double seconds, std::string* err) {
  RATCHET_CHECK(stage_ == Stage::kProposing,
                "a proposal comes only to an experiment that asked for one");
  exp_.propose_s = seconds;
  exp_.description = OneLine(proposal.description);
  exp_.hypothesis = OneLine(proposal.hypothesis, 1000);
  exp_.params_json = proposal.params_json;
  exp_.usage = proposal.usage;
  exp_.warnings.insert(exp_.warnings.end(), proposal.warnings.begin(), proposal.warnings.end());
  if (engine_->CancelRequested())
    return Finish(Status::kInterrupted, "stopped by the user during the proposal", err);
  if (proposal.outcome == Proposal::Outcome::kFailed) {
    if (proposal.stop_loop && engine_->stop_reason_.empty()) {
      engine_->stop_reason_ = "the proposer cannot go on: " + OneLine(proposal.reason);
      engine_->stop_kind_ = StopKind::kCircuitBreaker;
    }
    return Finish(Status::kProposeFailed,
                  proposal.reason.empty() ? "the proposer failed" : OneLine(proposal.reason), err);
  }
  CopyScan scan;
  if (!engine_->deps_.repo->ScanCopy(paths_.copy, exp_.parent_commit, &scan, err)) return false;
  if (scan.changes.empty())
    return Finish(Status::kNoChange,
                  proposal.reason.empty() ? "the proposer changed nothing" : OneLine(proposal.reason),
                  err);
  return Commit(scan, err) && AfterCommit(err);
}

bool ExperimentFlow::RerunProposal(Proposal* proposal, std::string* err) {
  const std::string what = "rerun of #" + std::to_string(rerun_of_);
  proposal->outcome = Proposal::Outcome::kFailed;
  const Experiment* earlier = nullptr;
  for (const Experiment& e : engine_->history_)
    if (e.id == rerun_of_) earlier = &e;
  if (!earlier || earlier->baseline || earlier->candidate_commit.empty() ||
      earlier->candidate_commit == earlier->parent_commit || earlier->status == Status::kKeep) {
    proposal->description = what;
    proposal->reason = what + ": it has no change to run again (" +
                       (earlier ? std::string(StatusName(earlier->status)) : "no such experiment") +
                       ")";
    return true;
  }
  proposal->description = what + ": " + earlier->description;
  proposal->hypothesis = "run again in full by hand (ratchet rerun); it was " +
                         std::string(StatusName(earlier->status)) + ": " + earlier->reason;
  proposal->params_json = earlier->params_json;
  // Its change on this experiment's parent: as it was when that is where it
  // was made, else merged onto the incumbent that moved since.
  std::string sha = earlier->candidate_commit;
  if (earlier->parent_commit != exp_.parent_commit) {
    std::string conflict;
    if (!engine_->deps_.repo->Rebase(earlier->parent_commit, earlier->candidate_commit,
                                     exp_.parent_commit, what, &sha, &conflict, err))
      return false;
    if (sha.empty()) {
      proposal->reason = what + ": its change does not apply to the incumbent (conflict in " +
                         conflict + ")";
      return true;
    }
  }
  if (!engine_->deps_.workspace->RemoveAll(".ratchet/work/" + std::to_string(exp_.id), err) ||
      !engine_->deps_.repo->CheckoutCopy(sha, paths_.copy, err))
    return false;
  proposal->outcome = Proposal::Outcome::kCandidate;
  return true;
}

bool ExperimentFlow::Commit(const CopyScan& scan, std::string* err) {
  // Entries git cannot hold (a symlink, a fifo) are left out of the commit
  // and refuse the candidate below; everything else is kept as tried.
  CopyScan storable = scan;
  storable.changes.clear();
  exp_.files_changed.clear();
  for (const FileChange& c : scan.changes) {
    exp_.files_changed.push_back(c.path);
    if (c.problem.empty()) storable.changes.push_back(c);
  }
  std::string message = "ratchet #" + std::to_string(exp_.id) + ": " + exp_.description +
                        "\n\nproposer: " + exp_.proposer;
  if (!exp_.params_json.empty()) message += "\nparams: " + exp_.params_json;
  std::string sha;
  Repo* repo = engine_->deps_.repo;
  if (!repo->CommitScan(storable, message, &sha, err) ||
      !repo->SetRef("refs/ratchet/tried/" + std::to_string(exp_.id), sha, err) ||
      !repo->DiffStat(exp_.parent_commit, sha, &exp_.diff_stat, err))
    return false;
  exp_.candidate_commit = sha;
  if (!Enter(Phase::kCommitted, err)) return false;
  if (std::string scope = CheckScope(scan.changes, engine_->config_); !scope.empty())
    return Finish(Status::kOutOfScope, scope, err);
  return true;
}

bool ExperimentFlow::AfterCommit(std::string* err) {
  if (done()) return true;  // refused by the scope rule
  HookSet* hooks = engine_->deps_.hooks;
  if (hooks) {
    CandidateView candidate;
    candidate.experiment_id = exp_.id;
    candidate.description = exp_.description;
    candidate.params_json = exp_.params_json;
    candidate.files_changed = exp_.files_changed;
    candidate.candidate_commit = exp_.candidate_commit;
    candidate.worktree = paths_.copy;
    candidate.sandbox = ProposerSandbox(engine_->config_, paths_, engine_->sandbox_);
    for (Mount& m : candidate.sandbox.mounts)
      if (m.source == paths_.copy) m.kind = Mount::Kind::kReadOnly;
    candidate.sandbox.home = paths_.Home("review");
    engine_->MakeHome(candidate.sandbox.home);
    if (!engine_->deps_.repo->Diff(exp_.parent_commit, exp_.candidate_commit, &candidate.diff,
                                   err))
      return false;
    CandidateVerdict verdict = hooks->OnCandidate(engine_->View(exp_.id), candidate);
    exp_.AddMechanisms(hooks->TakeTouched());
    exp_.usage.input_tokens += verdict.usage.input_tokens;
    exp_.usage.output_tokens += verdict.usage.output_tokens;
    exp_.usage.cost_usd += verdict.usage.cost_usd;
    if (verdict.veto) return Finish(Status::kRejected, OneLine(verdict.reason), err);
    if (!verdict.rewritten_params_json.empty()) {
      std::string why;
      ProposalRequest request = engine_->MakeRequest(this);
      if (engine_->deps_.proposer->Reapply(request, verdict.rewritten_params_json, &why)) {
        CopyScan scan;
        if (!engine_->deps_.repo->ScanCopy(paths_.copy, exp_.parent_commit, &scan, err))
          return false;
        exp_.params_json = verdict.rewritten_params_json;
        exp_.description += " (rewritten by the outer loop)";
        if (!Commit(scan, err)) return false;
        if (done()) return true;
      } else {
        engine_->Note("#" + std::to_string(exp_.id) +
                      ": could not apply the outer loop's rewrite: " + why);
      }
    }
  }
  return Build(err);
}

// ---------------------------------------------------------------------------
// Build and gates.

bool ExperimentFlow::Build(std::string* err) {
  std::string problem;
  if (!engine_->CheckTrusted(&problem, err)) return false;
  if (!problem.empty()) return Finish(Status::kOutOfScope, problem, err);
  // Exactly the commit, in a clean folder: nothing the proposer (or an
  // earlier build) left there is built or run.
  if (exp_.candidate_commit != exp_.parent_commit || rerun_) {
    if (!engine_->deps_.workspace->RemoveAll(".ratchet/work/" + std::to_string(exp_.id), err) ||
        !engine_->deps_.repo->CheckoutCopy(exp_.candidate_commit, paths_.copy, err))
      return false;
  }
  return Enter(Phase::kBuilding, err) && StartBuild(err);
}

bool ExperimentFlow::StartBuild(std::string* err) {
  gate_order_ = GatesRun(engine_->config_, GateConfig::When::kBefore);
  gate_ = 0;
  after_gates_done_ = false;
  const LoopConfig& c = engine_->config_;
  if (c.build.empty()) return NextGate(err);
  stage_ = Stage::kBuild;
  run_step_ = engine_->StartStep(this, Spec(StepKind::kBuild, "build", c.build, c.build_timeout_s));
  pending_ = {run_step_};
  return true;
}

StepRequest ExperimentFlow::Request(StepKind kind, const std::string& name,
                                    const std::string& command, double timeout_s) const {
  StepRequest step;
  step.kind = kind;
  step.name = name;
  step.command = command;
  step.timeout_s = timeout_s;
  step.attempt = kind == StepKind::kBuild ? 1 : static_cast<int>(runs_.size()) + 1;
  if (kind == StepKind::kGate || (kind == StepKind::kTrusted && stage_ == Stage::kGate))
    step.attempt = std::max(1, static_cast<int>(runs_.size()));
  step.worker = exp_.worker;
  if (kind == StepKind::kTrusted && stage_ == Stage::kVerify)
    step.servers = engine_->config_.verify.servers;
  return step;
}

RunSpec ExperimentFlow::Spec(StepKind kind, const std::string& name, const std::string& command,
                             double timeout_s) const {
  return StepSpec(engine_->config_, exp_, paths_, Request(kind, name, command, timeout_s),
                  engine_->sandbox_);
}

std::string ExperimentFlow::StepFailure(const RunResult& r, const std::string& name) const {
  if (r.ok()) return "";
  const std::string log = " (log: .ratchet/runs/" + std::to_string(exp_.id) + "/" + name + ".log)";
  std::string why = r.Describe();
  if (r.end == RunResult::End::kFailedToStart && why.find(r.error) == std::string::npos)
    why += ": " + r.error;
  if (std::string fail = FailLine(r.tail); !fail.empty()) why += ": " + fail;
  return why + log;
}

void ExperimentFlow::StartJudged(const RunSpec& trusted, const std::string& serve_name,
                                 const std::string& serve_command, double timeout_s, int count,
                                 StepRunner::StepId* trusted_id) {
  std::vector<RunSpec> servers;
  for (int k = 0; k < count; ++k)
    servers.push_back(Spec(StepKind::kServe, k == 0 ? serve_name : serve_name + "-" + std::to_string(k + 1),
                           serve_command, timeout_s));
  serve_steps_.clear();
  serve_results_.assign(static_cast<size_t>(count), std::nullopt);
  engine_->StartConnected(this, trusted, servers, trusted_id, &serve_steps_);
  pending_ = {*trusted_id};
  pending_.insert(serve_steps_.begin(), serve_steps_.end());
}

bool ExperimentFlow::TakeServeResult(StepRunner::StepId id, const RunResult& result) {
  for (size_t k = 0; k < serve_steps_.size(); ++k) {
    if (serve_steps_[k] != id) continue;
    serve_results_[k] = result;
    return true;
  }
  return false;
}

std::string ExperimentFlow::ServeFailure(const std::string& name) const {
  for (size_t k = 0; k < serve_results_.size(); ++k) {
    const std::optional<RunResult>& r = serve_results_[k];
    if (!r || r->ok() || r->end == RunResult::End::kCancelled) continue;
    return "the model server " +
           StepFailure(*r, k == 0 ? name + "-serve" : name + "-serve-" + std::to_string(k + 1));
  }
  return "";
}

void ExperimentFlow::StartGate(std::string* err) {
  (void)err;
  const GateConfig& gate = engine_->config_.gates[gate_order_[gate_]];
  const std::string name = GateStep(gate);
  stage_ = Stage::kGate;
  gate_result_.reset();
  serve_steps_.clear();
  serve_results_.clear();
  if (gate.serve.empty()) {
    gate_step_ = engine_->StartStep(this, Spec(StepKind::kGate, name, gate.command, gate.timeout_s));
    pending_ = {gate_step_};
    return;
  }
  StartJudged(Spec(StepKind::kTrusted, name, gate.command, gate.timeout_s), name + "-serve",
              gate.serve, gate.timeout_s, 1, &gate_step_);
}

bool ExperimentFlow::NextGate(std::string* err) {
  if (gate_ < gate_order_.size()) {
    StartGate(err);
    return true;
  }
  if (!after_gates_done_) {  // the before gates passed: the runs
    if (!Enter(Phase::kRunning, err)) return false;
    if (HasPreflight(engine_->config_, exp_) && !rerun_ && !preflight_done_)
      return StartPreflight(err);
    return StartAttempt(rerun_ ? "rerun" : "main", err);
  }
  return Judge(err);
}

// ---------------------------------------------------------------------------
// Runs and their verification.

// The preflight: the command with a budget of seconds, to the end of its
// program (training, evaluation, saving), so a candidate that would crash,
// print no progress or go NaN late in a full run costs seconds. Its numbers
// decide nothing; it is recorded as attempt 0.
bool ExperimentFlow::StartPreflight(std::string* err) {
  const LoopConfig& c = engine_->config_;
  current_ = RunRecord();
  current_.experiment_id = exp_.id;
  current_.attempt = 0;
  current_.purpose = "preflight";
  current_.log_path = ".ratchet/runs/" + std::to_string(exp_.id) + "/preflight.log";
  if (!engine_->deps_.workspace->MakeDirs(
          ".ratchet/runs/" + std::to_string(exp_.id) + "/preflight", err))
    return false;
  StepRequest step = Request(StepKind::kRun, "preflight", c.command, c.PreflightDeadline());
  step.attempt = 0;
  step.budget_s = c.preflight_s;
  step.purpose = "preflight";
  RunSpec spec = StepSpec(c, exp_, paths_, step, engine_->sandbox_);
  preflight_nan_.clear();
  const double started = engine_->deps_.clock->MonotonicSeconds();
  spec.on_line = [this, started](std::string_view line) {
    if (!IsProgressLine(line)) return;
    if (Reporter* reporter = engine_->deps_.reporter) reporter->OnProgress(exp_, line);
    CurvePoint point;
    const double t = engine_->deps_.clock->MonotonicSeconds() - started;
    if (!ParseProgressLine(line, t, &point)) return;
    for (auto it = point.values.begin(); it != point.values.end();) {
      if (std::isfinite(it->second)) {
        ++it;
        continue;
      }
      if (preflight_nan_.empty()) {
        preflight_nan_ = it->first + "=" + (std::isnan(it->second) ? "nan" : "inf") + " at " +
                         FormatSeconds(t);
        engine_->deps_.steps->Cancel(run_step_);
      }
      it = point.values.erase(it);  // it stopped the preflight; the curve keeps numbers
    }
    if (!point.values.empty()) AppendPoint(&current_.curve, std::move(point));
  };
  if (Reporter* reporter = engine_->deps_.reporter) reporter->OnRunStart(exp_, 0, "preflight");
  stage_ = Stage::kPreflight;
  run_step_ = engine_->StartStep(this, spec);
  pending_ = {run_step_};
  return true;
}

std::string ExperimentFlow::PreflightFailure(const RunResult& r) const {
  const LoopConfig& c = engine_->config_;
  const std::string log = " (log: " + current_.log_path + ")";
  if (!preflight_nan_.empty()) return "progress shows " + preflight_nan_ + log;
  if (r.end == RunResult::End::kTimedOut)
    return "still running at its deadline, " + FormatSeconds(c.PreflightDeadline()) +
           " (preflight budget " + FormatSeconds(c.preflight_s) + ")" + log;
  if (std::string f = StepFailure(r, "preflight"); !f.empty()) return f;
  if (current_.curve.empty())
    return "printed no progress line (\"progress: elapsed=<s> <name>=<value> ...\")" + log;
  if (c.verify.command.empty() && !current_.metric)
    return "printed no finite " + c.metric_name + " after '---'" + log;
  return "";
}

std::string ExperimentFlow::RunName(int attempt) {
  return attempt == 1 ? "run" : "run-" + std::to_string(attempt);
}

std::optional<ResumePoint> ExperimentFlow::FindResume(
    const LoopConfig& config, const Experiment& exp, const std::vector<RunRecord>& runs,
    const std::function<bool(const std::string& name)>& on_executor) {
  // A decided experiment only has its side effects left (Engine::RecoverOne).
  if (exp.status != Status::kNone) return std::nullopt;
  const int measured = static_cast<int>(
      std::count_if(runs.begin(), runs.end(), [](const RunRecord& r) { return r.attempt >= 1; }));
  const bool preflight_recorded =
      std::any_of(runs.begin(), runs.end(), [](const RunRecord& r) { return r.attempt == 0; });
  // A winner run again on its moved incumbent: MovedIncumbent kept the
  // commit it had tried and wrote its new parent before the build.
  const bool rerun = config.moved == "rerun" && !exp.tried_commit.empty();
  auto at = [rerun](ResumePoint::Step step, std::string name, std::string what, size_t gate = 0) {
    return std::optional<ResumePoint>(
        ResumePoint{step, gate, std::move(name), std::move(what), rerun});
  };
  // The steps of a stage run one after another, each only once the one
  // before it passed: the one still on the executor is where the experiment
  // was. A gate with `serve` ran on this machine, and ended with ratchet.
  auto gate_on_executor = [&](GateConfig::When when, ResumePoint::Step step) {
    const std::vector<size_t> order = GatesRun(config, when);
    for (size_t k = 0; k < order.size(); ++k) {
      const GateConfig& gate = config.gates[order[k]];
      if (gate.serve.empty() && on_executor(GateStep(gate)))
        return at(step, GateStep(gate), "gate " + gate.name, k);
    }
    return std::optional<ResumePoint>();
  };
  if (exp.phase == Phase::kBuilding) {
    if (measured > 0 && !rerun) return std::nullopt;  // only a rerun builds after runs
    if (!config.build.empty() && on_executor("build"))
      return at(ResumePoint::Step::kBuild, "build", "build");
    return gate_on_executor(GateConfig::When::kBefore, ResumePoint::Step::kGate);
  }
  if (exp.phase != Phase::kRunning) return std::nullopt;
  const int first_runs = exp.baseline ? config.baseline_repeats : 1;
  auto count = [&](const char* purpose) {
    return static_cast<int>(std::count_if(
        runs.begin(), runs.end(), [&](const RunRecord& r) { return r.purpose == purpose; }));
  };
  if (rerun) {  // its runs again, then the decision: no preflight, no after gates
    if (count("rerun") >= first_runs || !on_executor(RunName(measured + 1))) return std::nullopt;
    return at(ResumePoint::Step::kRun, RunName(measured + 1), "run");
  }
  if (measured == 0 && !preflight_recorded && HasPreflight(config, exp) && on_executor("preflight"))
    return at(ResumePoint::Step::kPreflight, "preflight", "preflight");
  if (measured < first_runs) {
    if (!on_executor(RunName(measured + 1))) return std::nullopt;
    return at(ResumePoint::Step::kRun, RunName(measured + 1), "run");
  }
  // Past the first runs: the after gates, one after another, then the
  // decision, which may have asked for confirm runs (never the baseline's).
  const int confirms = count("confirm");
  if (confirms == 0) {
    if (auto gate = gate_on_executor(GateConfig::When::kAfter, ResumePoint::Step::kAfterGate))
      return gate;
  }
  if (exp.baseline || confirms >= config.confirm || !on_executor(RunName(measured + 1)))
    return std::nullopt;
  return at(ResumePoint::Step::kConfirm, RunName(measured + 1), "confirm run");
}

bool ExperimentFlow::Reattach(const ResumePoint& at, const std::vector<RunRecord>& runs,
                              std::string* err) {
  for (const RunRecord& r : runs)
    if (r.attempt >= 1) runs_.push_back(r);
  gate_order_ = GatesRun(engine_->config_, GateConfig::When::kBefore);
  after_gates_done_ = false;
  if (at.rerun) {
    // Where MovedIncumbent had left it: its runs again from the first
    // "rerun" one (none yet while it builds).
    rerun_ = true;
    auto first = std::find_if(runs_.begin(), runs_.end(),
                              [](const RunRecord& r) { return r.purpose == "rerun"; });
    rerun_from_ = static_cast<int>(first - runs_.begin());
  }
  switch (at.step) {
    case ResumePoint::Step::kBuild:
      return StartBuild(err);
    case ResumePoint::Step::kGate:
      gate_ = at.gate;  // the ones before it passed
      StartGate(err);
      return true;
    case ResumePoint::Step::kPreflight:
      gate_ = gate_order_.size();
      return StartPreflight(err);
    case ResumePoint::Step::kRun:
      // Where NextGate had left it: the before gates passed, then the preflight.
      gate_ = gate_order_.size();
      preflight_done_ = true;
      reattaching_ = true;
      return StartAttempt(rerun_ ? "rerun" : runs_.empty() ? "main" : "baseline_repeat", err);
    case ResumePoint::Step::kAfterGate:
      // Where AttemptMeasured had left it: the first runs were recorded.
      AfterTheFirstRuns();
      gate_ = at.gate;
      StartGate(err);
      return true;
    case ResumePoint::Step::kConfirm: {
      // Where Judge had left it: the after gates passed, and the selection
      // run asked for confirmation (the confirm runs since are recorded).
      AfterTheFirstRuns();
      gate_ = gate_order_.size();
      confirming_ = true;
      auto first_confirm = std::find_if(runs_.begin(), runs_.end(),
                                        [](const RunRecord& r) { return r.purpose == "confirm"; });
      confirm_from_ = static_cast<int>(first_confirm - runs_.begin());
      reattaching_ = true;
      return StartAttempt("confirm", err);
    }
  }
  return true;
}

void ExperimentFlow::AfterTheFirstRuns() {
  preflight_done_ = true;
  gate_order_ = GatesRun(engine_->config_, GateConfig::When::kAfter);
  after_gates_done_ = true;
}

bool ExperimentFlow::StartAttempt(const std::string& purpose, std::string* err) {
  const int n = static_cast<int>(runs_.size()) + 1;
  const std::string name = RunName(n);
  current_ = RunRecord();
  current_.experiment_id = exp_.id;
  current_.attempt = n;
  current_.purpose = purpose;
  current_.log_path = ".ratchet/runs/" + std::to_string(exp_.id) + "/" + name + ".log";
  const std::string rel_out =
      ".ratchet/runs/" + std::to_string(exp_.id) + (n == 1 ? "/out" : "/out-" + std::to_string(n));
  if (!engine_->deps_.workspace->MakeDirs(rel_out, err)) return false;
  const LoopConfig& c = engine_->config_;
  RunSpec spec = Spec(StepKind::kRun, name, c.command, c.RunDeadline());
  // Only a candidate's first run is pruned: never the baseline (the
  // reference), a confirmation of a winner, or a run asked for in full
  // (`ratchet rerun`).
  pruner_.reset();
  prune_requested_ = false;
  if (c.prune.enabled() && purpose == "main" && !exp_.baseline && !RunInFull(exp_) && !reattaching_)
    pruner_ = std::make_unique<Pruner>(c.prune, c.budget_s);
  reattaching_ = false;
  const double started = engine_->deps_.clock->MonotonicSeconds();
  spec.on_line = [this, started](std::string_view line) { OnRunLine(line, started); };
  if (Reporter* reporter = engine_->deps_.reporter) reporter->OnRunStart(exp_, n, purpose);
  stage_ = Stage::kRun;
  run_step_ = engine_->StartStep(this, spec);
  pending_ = {run_step_};
  return true;
}

void ExperimentFlow::OnRunLine(std::string_view line, double started) {
  if (!IsProgressLine(line)) return;
  if (Reporter* reporter = engine_->deps_.reporter) reporter->OnProgress(exp_, line);
  CurvePoint point;
  if (!ParseProgressLine(line, engine_->deps_.clock->MonotonicSeconds() - started, &point)) return;
  AppendPoint(&current_.curve, std::move(point));
  if (!pruner_ || prune_requested_) return;
  if (pruner_->Observe(current_.curve, engine_->PruneReferenceNow())) {
    prune_requested_ = true;
    engine_->deps_.steps->Cancel(run_step_);
  }
}

void ExperimentFlow::MeasureRun(const RunResult& r) {
  RunRecord& rec = current_;
  rec.exit_code = r.end == RunResult::End::kExited ? r.exit_code : -1;
  rec.signal = r.end == RunResult::End::kSignaled ? r.signal : 0;
  rec.timed_out = r.end == RunResult::End::kTimedOut;
  rec.wall_s = r.wall_s;
  rec.cpu_s = r.cpu_s;
  rec.peak_rss_mb = r.peak_rss_mb;
  rec.containment = r.containment;
  rec.sandboxed = r.sandboxed;
  const LoopConfig& c = engine_->config_;
  std::map<std::string, double> printed = ParseSummary(r.tail);
  if (!c.metric_regex.empty()) {
    double value = 0;
    if (ParseMetricRegex(r.tail, c.metric_regex, &value)) printed[c.metric_name] = value;
  }
  std::map<std::string, double>& into = c.verify.command.empty() ? rec.metrics : rec.claims;
  for (const auto& [name, value] : printed)
    if (name.rfind(kMeasuredPrefix, 0) != 0 && std::isfinite(value)) into[name] = value;
  if (c.verify.command.empty()) {
    auto found = printed.find(c.metric_name);
    if (found != printed.end() && std::isfinite(found->second)) rec.metric = found->second;
  }
  rec.metrics["run.wall_s"] = r.wall_s;
  rec.metrics["run.cpu_s"] = r.cpu_s;
  rec.metrics["run.peak_mem_mb"] = r.peak_rss_mb;
}

bool ExperimentFlow::MeasureVerify(std::string* problem, Status* status) {
  const RunResult& v = *verify_result_;
  const LoopConfig& c = engine_->config_;
  current_.verify_s = v.wall_s;
  *status = Status::kNone;
  if (v.end == RunResult::End::kCancelled || (engine_->CancelRequested() && !v.ok())) {
    *status = Status::kInterrupted;
    *problem = "stopped by the user during the verification";
    return true;
  }
  const std::string vname =
      current_.attempt == 1 ? "verify" : "verify-" + std::to_string(current_.attempt);
  std::string serve_note = ServeFailure(vname);
  if (!serve_note.empty()) serve_note = "; " + serve_note;
  if (!v.ok()) {
    *status = Status::kCrash;
    *problem = "verification " + StepFailure(v, vname) + serve_note;
    return true;
  }
  std::map<std::string, double> verified = ParseSummary(v.tail);
  auto found = verified.find(c.metric_name);
  if (found == verified.end() || !std::isfinite(found->second)) {
    *status = Status::kCrash;
    *problem = found == verified.end()
                   ? "the verifier printed no " + c.metric_name + serve_note
                   : "the verifier's " + c.metric_name + " is not a number" + serve_note;
    return true;
  }
  for (const auto& [name, value] : verified)
    if (name.rfind(kMeasuredPrefix, 0) != 0 && std::isfinite(value)) current_.metrics[name] = value;
  current_.metric = found->second;
  // The run's own word about the metric must agree with the judge's.
  auto claim = current_.claims.find(c.metric_name);
  if (claim != current_.claims.end()) {
    const Noise noise = engine_->CurrentNoise();
    const double tolerance =
        std::max({c.verify.claim_tolerance, c.verify.claim_sigmas * noise.sigma,
                  1e-6 * std::max(std::fabs(claim->second), std::fabs(found->second))});
    if (std::fabs(claim->second - found->second) > tolerance) {
      *status = Status::kRejected;
      *problem = "claimed " + c.metric_name + " " + FormatMetric(claim->second) + ", verified " +
                 FormatMetric(found->second);
    }
  }
  return true;
}

bool ExperimentFlow::AttemptMeasured(std::string* err) {
  runs_.push_back(current_);
  exp_.run_s += current_.wall_s + current_.verify_s;
  exp_.cpu_s += current_.cpu_s;
  exp_.peak_rss_mb = std::max(exp_.peak_rss_mb, current_.peak_rss_mb);
  if (runs_.size() == 1) {
    exp_.exit_code = current_.exit_code;
    exp_.signal = current_.signal;
  }
  const int n = static_cast<int>(runs_.size());
  if (rerun_) {
    if (n - rerun_from_ < first_runs_) return StartAttempt("rerun", err);
    return Judge(err);
  }
  if (confirming_) {
    if (n - confirm_from_ < engine_->config_.confirm) return StartAttempt("confirm", err);
    return Judge(err);
  }
  if (n < first_runs_) return StartAttempt("baseline_repeat", err);
  // Verify: the run must not have touched what it may not, and the "after"
  // gates must pass.
  std::string problem;
  if (!engine_->CheckTrusted(&problem, err)) return false;
  if (!problem.empty()) return Finish(Status::kOutOfScope, problem + " during the run", err);
  AfterTheFirstRuns();
  gate_ = 0;
  if (gate_order_.empty()) return Judge(err);
  StartGate(err);
  return true;
}

bool ExperimentFlow::OnStep(StepRunner::StepId id, const RunResult& result, std::string* err) {
  pending_.erase(id);
  switch (stage_) {
    case Stage::kBuild: {
      exp_.build_s += result.wall_s;
      if (engine_->CancelRequested() || result.end == RunResult::End::kCancelled)
        return Finish(Status::kInterrupted, "stopped by the user during the build", err);
      if (std::string f = StepFailure(result, "build"); !f.empty())
        return Finish(Status::kCrash, "build failed: " + f, err);
      return NextGate(err);
    }
    case Stage::kGate: {
      if (!TakeServeResult(id, result)) gate_result_ = result;
      if (!pending_.empty()) return true;  // the other half of a gate with `serve`
      const GateConfig& gate = engine_->config_.gates[gate_order_[gate_]];
      const std::string name = GateStep(gate);
      if (!after_gates_done_) exp_.build_s += gate_result_->wall_s;
      if (engine_->CancelRequested() || gate_result_->end == RunResult::End::kCancelled)
        return Finish(Status::kInterrupted, "stopped by the user during a gate", err);
      std::string f = StepFailure(*gate_result_, name);
      if (f.empty()) f = ServeFailure(name);
      if (!f.empty()) return Finish(Status::kGateFailed, "gate " + gate.name + " failed: " + f, err);
      ++gate_;
      return NextGate(err);
    }
    case Stage::kPreflight: {
      MeasureRun(result);
      preflight_done_ = true;
      if (!engine_->deps_.ledger->AddRun(current_, err)) return false;
      if (result.end == RunResult::End::kCancelled && preflight_nan_.empty())
        return Finish(Status::kInterrupted, "stopped by the user during the preflight", err);
      if (std::string f = PreflightFailure(result); !f.empty()) {
        exp_.exit_code = current_.exit_code;
        exp_.signal = current_.signal;
        exp_.log_path = current_.log_path;
        return Finish(Status::kCrash, "preflight: " + f, err);
      }
      return StartAttempt("main", err);
    }
    case Stage::kRun: {
      run_result_ = result;
      MeasureRun(result);
      Status status = Status::kNone;
      std::string problem;
      const LoopConfig& c = engine_->config_;
      const std::string name = c.metric_name;
      const std::string printed =
          current_.metric ? " after printing " + name + ": " + FormatMetric(*current_.metric) : "";
      const double deadline = c.RunDeadline();
      switch (result.end) {
        case RunResult::End::kCancelled:
          status = prune_requested_ ? Status::kPruned : Status::kInterrupted;
          problem = prune_requested_ ? "pruned: " + pruner_->reason()
                                     : "stopped by the user during the run";
          break;
        case RunResult::End::kTimedOut:
          status = Status::kTimeout;
          problem = deadline < c.timeout_s || c.timeout_s <= 0
                        ? "ran past its budget: killed at " + FormatSeconds(deadline) + " (budget " +
                              FormatSeconds(c.budget_s) + " + overhead " +
                              FormatSeconds(*c.overhead_s) + ")"
                        : "killed at run.timeout (" + FormatSeconds(c.timeout_s) + ")";
          break;
        case RunResult::End::kLimit:
          status = Status::kCrash;
          problem = "killed by the kernel: " + result.Describe();
          break;
        case RunResult::End::kFailedToStart:
          status = Status::kCrash;
          problem = "could not start: " + result.error;
          break;
        case RunResult::End::kSignaled:
          status = Status::kCrash;
          problem = "killed by " + result.Describe() + printed;
          break;
        case RunResult::End::kExited:
          if (result.exit_code != 0) {
            status = Status::kCrash;
            problem = result.Describe() + printed;
          } else if (c.verify.command.empty()) {
            auto parsed = ParseSummary(result.tail);
            double regex_value = 0;
            const bool by_regex =
                !c.metric_regex.empty() && ParseMetricRegex(result.tail, c.metric_regex, &regex_value);
            auto found = parsed.find(name);
            if (!by_regex && found == parsed.end()) {
              status = Status::kCrash;
              problem = "no " + name + " in the output (expected a line '" + name +
                        ": <number>' after '---')";
            } else if (!by_regex && !std::isfinite(found->second)) {
              status = Status::kCrash;
              problem = name + " is " + (std::isnan(found->second) ? "nan" : "inf");
            }
          }
          break;
      }
      if (result.output_truncated)
        engine_->Note("#" + std::to_string(exp_.id) + ": output over run.log_limit was dropped (see " +
                      current_.log_path + ")");
      if (status == Status::kNone && !c.verify.command.empty()) {
        // The judge: a fresh trusted process that reads the run's artifacts,
        // with the candidate's model code answering it over a pipe.
        stage_ = Stage::kVerify;
        verify_result_.reset();
        const std::string vname = current_.attempt == 1 ? "verify" : "verify-" + std::to_string(current_.attempt);
        RunSpec verifier = Spec(StepKind::kTrusted, vname, c.verify.command, c.verify.timeout_s);
        if (c.verify.serve.empty()) {
          verify_step_ = engine_->StartStep(this, verifier);
          serve_steps_.clear();
          serve_results_.clear();
          pending_ = {verify_step_};
        } else {
          StartJudged(verifier, vname + "-serve", c.verify.serve, c.verify.timeout_s,
                      c.verify.servers, &verify_step_);
        }
        return true;
      }
      if (status != Status::kNone) {
        if (!engine_->deps_.ledger->AddRun(current_, err)) return false;
        runs_.push_back(current_);
        exp_.run_s += current_.wall_s;
        if (runs_.size() == 1) exp_.exit_code = current_.exit_code, exp_.signal = current_.signal;
        const int n = static_cast<int>(runs_.size());
        std::string prefix = n == 1 ? "" : current_.purpose + " run " + std::to_string(n) + ": ";
        return Finish(status, prefix + problem, err);
      }
      if (!engine_->deps_.ledger->AddRun(current_, err)) return false;
      return AttemptMeasured(err);
    }
    case Stage::kVerify: {
      if (!TakeServeResult(id, result)) verify_result_ = result;
      if (!pending_.empty()) return true;
      Status status = Status::kNone;
      std::string problem;
      MeasureVerify(&problem, &status);
      if (!engine_->deps_.ledger->AddRun(current_, err)) return false;
      if (status != Status::kNone) {
        runs_.push_back(current_);
        exp_.run_s += current_.wall_s + current_.verify_s;
        if (runs_.size() == 1) exp_.exit_code = current_.exit_code, exp_.signal = current_.signal;
        const int n = static_cast<int>(runs_.size());
        std::string prefix = n == 1 ? "" : current_.purpose + " run " + std::to_string(n) + ": ";
        return Finish(status, prefix + problem, err);
      }
      return AttemptMeasured(err);
    }
    case Stage::kWantProposal:
    case Stage::kProposing:
    case Stage::kDone:
      break;
  }
  *err = "experiment " + std::to_string(exp_.id) + " got a step result it was not waiting for";
  return false;
}

// ---------------------------------------------------------------------------
// Judging and deciding.

Spread ExperimentFlow::Summarize(bool confirmed) {
  size_t from = 0;
  if (rerun_) from = static_cast<size_t>(rerun_from_);
  else if (confirmed) from = static_cast<size_t>(confirm_from_);
  std::vector<double> values;
  std::map<std::string, std::vector<double>> all, claims;
  for (size_t i = from; i < runs_.size(); ++i) {
    values.push_back(*runs_[i].metric);
    for (const auto& [k, v] : runs_[i].metrics) all[k].push_back(v);
    for (const auto& [k, v] : runs_[i].claims) claims[k].push_back(v);
  }
  Spread s = SpreadOf(values);
  exp_.metric = s.mean;
  exp_.metric_stddev = s.stddev;
  exp_.metric_n = s.n;
  exp_.metrics.clear();
  for (const auto& [k, v] : all) exp_.metrics[k] = SpreadOf(v).mean;
  exp_.claims.clear();
  for (const auto& [k, v] : claims) exp_.claims[k] = SpreadOf(v).mean;
  return s;
}

bool ExperimentFlow::Judge(std::string* err) {
  const LoopConfig& c = engine_->config_;
  if (exp_.baseline) {
    Spread spread = Summarize(false);
    std::string reason = "baseline";
    if (spread.n > 1) {
      std::vector<double> values;
      for (const RunRecord& r : runs_) values.push_back(*r.metric);
      engine_->AddNoiseGroup(values);
      reason += ": mean of " + std::to_string(spread.n) + " runs, run-to-run spread " +
                FormatMetric(spread.stddev);
    }
    for (const Constraint& constraint : c.constraints) {
      auto it = exp_.metrics.find(constraint.metric);
      if (it == exp_.metrics.end() || !constraint.Holds(it->second))
        engine_->Note("warning: the baseline does not meet the constraint " + constraint.text);
    }
    return Finish(Status::kKeep, reason, err);
  }
  const Experiment* incumbent = engine_->Incumbent();
  if (!incumbent || !incumbent->metric) {
    *err = "no incumbent to compare experiment " + std::to_string(exp_.id) + " with";
    return false;
  }
  const bool confirmed = confirming_ || rerun_;
  AcceptInput input;
  input.candidate = Summarize(confirmed);
  input.incumbent.mean = *incumbent->metric;
  input.incumbent.stddev = incumbent->metric_stddev;
  input.incumbent.n = std::max(1, incumbent->metric_n);
  if (confirming_ && runs_.size() - static_cast<size_t>(confirm_from_) > 1) {
    // Repeated runs of one commit, unbiased by selection: they measure the
    // noise, this decision included.
    std::vector<double> values;
    for (size_t i = static_cast<size_t>(confirm_from_); i < runs_.size(); ++i)
      values.push_back(*runs_[i].metric);
    engine_->AddNoiseGroup(values);
  }
  input.noise = engine_->CurrentNoise();
  AcceptDecision decision = DecideAccept(input, c, confirmed);
  if (decision.needs_confirmation && !confirmed) {
    confirming_ = true;
    confirm_from_ = static_cast<int>(runs_.size());
    return StartAttempt("confirm", err);
  }
  bool keep = decision.keep;
  std::string reason = decision.reason;
  if (HookSet* hooks = engine_->deps_.hooks) {
    AcceptVerdict verdict = hooks->Accept(engine_->View(exp_.id), exp_, *incumbent);
    exp_.AddMechanisms(hooks->TakeTouched());
    if (verdict.decided) {
      keep = verdict.keep;
      reason = verdict.reason + " (default rule: " + decision.reason + ")";
    }
  }
  return Conclude(keep, reason, err);
}

bool ExperimentFlow::Conclude(bool keep, const std::string& reason_in, std::string* err) {
  std::string reason = reason_in;
  if (keep) {
    for (const Constraint& constraint : engine_->config_.constraints) {
      auto it = exp_.metrics.find(constraint.metric);
      if (it == exp_.metrics.end()) {
        return Finish(Status::kDiscard,
                      "constraint " + constraint.text + " cannot be checked: the " +
                          (engine_->config_.verify.command.empty() ? "run" : "verifier") +
                          " printed no " + constraint.metric,
                      err);
      }
      if (!constraint.Holds(it->second))
        return Finish(Status::kDiscard,
                      "violates constraint " + constraint.text + " (" +
                          FormatMetric(it->second) + ")",
                      err);
    }
  }
  if (keep && exp_.parent_commit != engine_->IncumbentCommit()) {
    std::string moved = MovedIncumbent(err);
    if (!err->empty()) return false;
    if (rerun_ && stage_ != Stage::kDone && moved == "rerun") return Build(err);
    if (!moved.empty() && moved != "rerun") return Finish(Status::kDiscard, reason + "; " + moved, err);
    reason += " (" + std::string(exp_.tried_commit.empty() ? "" : "applied to the current best #") +
              std::to_string(engine_->incumbent_id_) + ")";
  }
  return Finish(keep ? Status::kKeep : Status::kDiscard, reason, err);
}

// A winner whose incumbent moved: put its change on the current incumbent.
// Returns "" when it now sits there (candidate_commit is the new commit,
// tried_commit what ran), "rerun" when it must run again on it, or why it
// cannot be kept.
std::string ExperimentFlow::MovedIncumbent(std::string* err) {
  err->clear();
  Repo* repo = engine_->deps_.repo;
  const std::string ours = engine_->IncumbentCommit();
  const std::string message = "ratchet #" + std::to_string(exp_.id) + ": " + exp_.description +
                              "\n\nproposer: " + exp_.proposer + "\napplied onto #" +
                              std::to_string(engine_->incumbent_id_) +
                              (exp_.params_json.empty() ? "" : "\nparams: " + exp_.params_json);
  std::string sha;
  if (!exp_.params_json.empty()) {
    // Search parameters: the same values written into the current incumbent.
    const std::string rel = ".ratchet/work/" + std::to_string(exp_.id) + "-moved";
    const std::string dir = paths_.loop + "/" + rel;
    ProposalRequest request = engine_->MakeRequest(this);
    request.worktree = dir;
    std::string why;
    CopyScan scan;
    if (!engine_->deps_.workspace->RemoveAll(rel, err) || !repo->CheckoutCopy(ours, dir, err))
      return "";
    bool applied = engine_->deps_.proposer->Reapply(request, exp_.params_json, &why);
    bool ok = applied && repo->ScanCopy(dir, ours, &scan, err) &&
              repo->CommitScan(scan, message, &sha, err);
    std::string cleanup_err;
    engine_->deps_.workspace->RemoveAll(rel, &cleanup_err);
    if (!err->empty()) return "";
    if (!ok) return "better than its parent but its parameters do not apply to the current best: " + why;
  } else {
    std::string conflict;
    if (!repo->Rebase(exp_.parent_commit, exp_.candidate_commit, ours, message, &sha, &conflict,
                      err))
      return "";
    if (sha.empty())
      return "better than its parent, but the current best #" +
             std::to_string(engine_->incumbent_id_) + " changed " + conflict + " too (conflict)";
  }
  exp_.tried_commit = exp_.candidate_commit;
  exp_.candidate_commit = sha;
  if (engine_->config_.moved == "rerun" && !rerun_) {
    rerun_ = true;
    rerun_from_ = static_cast<int>(runs_.size());
    exp_.parent_commit = ours;
    return "rerun";
  }
  return "";
}

bool ExperimentFlow::Finish(Status status, const std::string& reason, std::string* err) {
  if (pruner_ && pruner_->reason().empty() && !pruner_->unjudged().empty() &&
      status != Status::kInterrupted)
    exp_.warnings.push_back("not judged for pruning at some checkpoint: " + pruner_->unjudged());
  exp_.status = status;
  exp_.reason = reason;
  exp_.finished_at = engine_->deps_.clock->WallSeconds();
  if (!Enter(Phase::kDecided, err)) return false;  // write-ahead of the branch move
  if (status == Status::kKeep && !exp_.baseline && !engine_->AdvanceTo(exp_, err)) return false;
  if (!engine_->deps_.workspace->RemoveAll(".ratchet/work/" + std::to_string(exp_.id), err))
    return false;
  exp_.phase = Phase::kDone;
  if (!engine_->Write(exp_, err)) return false;
  stage_ = Stage::kDone;
  pending_.clear();
  engine_->RememberCurves(exp_, runs_);
  return engine_->Record(exp_, err);
}

bool ExperimentFlow::Interrupt(std::string* err) {
  if (stage_ == Stage::kWantProposal)
    return Finish(Status::kInterrupted, "stopped by the user before the proposal", err);
  return true;  // steps and the proposal end themselves, cancelled
}

}  // namespace ratchet
