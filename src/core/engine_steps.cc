// One experiment: propose, commit, build and gate, run, verify, decide.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/accept.h"
#include "core/engine.h"
#include "core/metrics.h"
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

std::string BudgetText(double seconds) {
  char buf[32];
  if (seconds == std::floor(seconds)) std::snprintf(buf, sizeof buf, "%.0f", seconds);
  else std::snprintf(buf, sizeof buf, "%.3f", seconds);
  return buf;
}

}  // namespace

std::string Engine::RunDir(int id, bool absolute) const {
  std::string rel = ".ratchet/runs/" + std::to_string(id);
  return absolute ? deps_.workspace->root() + "/" + rel : rel;
}

std::vector<std::pair<std::string, std::string>> Engine::RunEnv(const Experiment& exp,
                                                                int attempt) const {
  std::vector<std::pair<std::string, std::string>> env = {
      {"RATCHET_BUDGET_SECONDS", BudgetText(config_.budget_s)},
      {"RATCHET_EXPERIMENT", std::to_string(exp.id)},
      {"RATCHET_SEED", std::to_string(RunSeed(config_.seed, attempt))},
      {"RATCHET_ATTEMPT", std::to_string(attempt)},
      {"RATCHET_RUN_DIR", RunDir(exp.id, true)},
  };
  env.insert(env.end(), config_.env.begin(), config_.env.end());
  return env;
}

bool Engine::RunOne(EventSink* events, std::string* err) {
  events_ = events;
  Experiment exp;
  exp.id = static_cast<int>(history_.size()) + 1;
  exp.session_id = session_id_;
  exp.phase = Phase::kProposing;
  exp.baseline = Incumbent() == nullptr;
  exp.parent_commit = IncumbentCommit();
  exp.proposer = exp.baseline ? "baseline" : deps_.proposer->kind();
  exp.started_at = deps_.clock->WallSeconds();
  exp.log_path = RunDir(exp.id, false) + "/run.log";
  if (!deps_.ledger->InsertExperiment(exp, err)) return false;
  if (!deps_.workspace->MakeDirs(RunDir(exp.id, false), err)) return false;
  if (deps_.reporter) deps_.reporter->OnPhase(exp);

  bool finished = false;
  if (!Propose(&exp, &finished, err)) return false;
  if (!finished && !BuildAndGate(&exp, &finished, err)) return false;
  if (!finished && !RunAndDecide(&exp, err)) return false;

  if (exp.baseline && exp.status != Status::kKeep && stop_reason_.empty()) {
    stop_reason_ = exp.status == Status::kInterrupted
                       ? "stopped by the user (Ctrl-C)"
                       : std::string("the baseline failed (") + StatusName(exp.status) + ": " +
                             exp.reason + "); fix the workload, then run again";
  }
  if (exp.status == Status::kOutOfScope && stop_reason_.empty()) {
    // Git restores tracked files; an ignored protected file (prepared data)
    // it cannot, and every later experiment would fail the same way.
    std::string problem;
    if (!CheckProtected(&problem, err)) return false;
    if (!problem.empty())
      stop_reason_ = problem + " and git cannot restore it (it is not tracked); restore it "
                     "(e.g. prepare the data again), then run again";
  }
  if (exp.status == Status::kInterrupted && stop_reason_.empty())
    stop_reason_ = "stopped by the user (Ctrl-C twice)";
  return true;
}

bool Engine::Propose(Experiment* exp, bool* finished, std::string* err) {
  if (exp->baseline) {
    exp->description = "baseline";
    exp->candidate_commit = exp->parent_commit;
    return Enter(exp, Phase::kCommitted, err);
  }
  LoopView view = View();
  Guidance guidance;
  if (deps_.hooks) guidance = deps_.hooks->BeforePropose(view);
  // steering: notes from `ratchet note` reach every later proposal.
  if (deps_.steering)
    for (std::string& line : deps_.steering->Guidance()) guidance.text.push_back(std::move(line));

  ProposalRequest request;
  request.experiment_id = exp->id;
  request.worktree = deps_.workspace->root();
  request.run_dir = RunDir(exp->id, true);
  request.config = &config_;
  request.history = &history_;
  request.incumbent = Incumbent();
  request.guidance = guidance.text;
  request.search_hints_json = guidance.search_hints_json;
  request.seed = config_.seed * 1000003ull + static_cast<uint64_t>(exp->id);
  request.cancel = deps_.cancel;

  double t0 = deps_.clock->MonotonicSeconds();
  Proposal proposal = deps_.proposer->Propose(request);
  exp->propose_s = deps_.clock->MonotonicSeconds() - t0;
  exp->description = OneLine(proposal.description);
  exp->hypothesis = OneLine(proposal.hypothesis, 1000);
  exp->params_json = proposal.params_json;
  exp->usage = proposal.usage;

  *finished = true;
  if (CancelRequested())
    return Finish(exp, Status::kInterrupted, "stopped by the user during the proposal", err);
  if (proposal.outcome == Proposal::Outcome::kFailed) {
    if (proposal.stop_loop && stop_reason_.empty())
      stop_reason_ = "the proposer cannot go on: " + OneLine(proposal.reason);
    return Finish(exp, Status::kProposeFailed,
                  proposal.reason.empty() ? "the proposer failed" : OneLine(proposal.reason), err);
  }

  std::vector<FileChange> changes;
  if (!deps_.repo->Changes(exp->parent_commit, &changes, err)) return false;
  if (changes.empty())
    return Finish(exp, Status::kNoChange,
                  proposal.reason.empty() ? "the proposer changed nothing" : OneLine(proposal.reason),
                  err);
  if (!CommitCandidate(exp, changes, err)) return false;
  if (std::string scope = CheckScope(changes, config_); !scope.empty())
    return Finish(exp, Status::kOutOfScope, scope, err);

  if (deps_.hooks) {
    CandidateView candidate;
    candidate.experiment_id = exp->id;
    candidate.description = exp->description;
    candidate.params_json = exp->params_json;
    candidate.files_changed = exp->files_changed;
    if (!deps_.repo->Diff(exp->parent_commit, exp->candidate_commit, &candidate.diff, err))
      return false;
    CandidateVerdict verdict = deps_.hooks->OnCandidate(view, candidate);
    exp->usage.input_tokens += verdict.usage.input_tokens;
    exp->usage.output_tokens += verdict.usage.output_tokens;
    exp->usage.cost_usd += verdict.usage.cost_usd;
    if (verdict.veto) return Finish(exp, Status::kRejected, OneLine(verdict.reason), err);
    if (!verdict.rewritten_params_json.empty()) {
      std::string why;
      if (deps_.proposer->Reapply(request, verdict.rewritten_params_json, &why)) {
        if (!deps_.repo->Changes(exp->parent_commit, &changes, err)) return false;
        exp->params_json = verdict.rewritten_params_json;
        exp->description += " (rewritten by the outer loop)";
        if (!CommitCandidate(exp, changes, err)) return false;
        if (std::string scope = CheckScope(changes, config_); !scope.empty())
          return Finish(exp, Status::kOutOfScope, scope, err);
      } else {
        Note("#" + std::to_string(exp->id) + ": could not apply the outer loop's rewrite: " + why);
      }
    }
  }
  *finished = false;
  return true;
}

bool Engine::CommitCandidate(Experiment* exp, const std::vector<FileChange>& changes,
                             std::string* err) {
  exp->files_changed.clear();
  for (const FileChange& c : changes) exp->files_changed.push_back(c.path);
  std::string message = "ratchet #" + std::to_string(exp->id) + ": " + exp->description +
                        "\n\nproposer: " + exp->proposer;
  if (!exp->params_json.empty()) message += "\nparams: " + exp->params_json;
  std::string sha;
  if (!deps_.repo->CommitWorktree(exp->parent_commit, message, &sha, err) ||
      !deps_.repo->SetRef("refs/ratchet/tried/" + std::to_string(exp->id), sha, err) ||
      !deps_.repo->DiffStat(exp->parent_commit, sha, &exp->diff_stat, err))
    return false;
  exp->candidate_commit = sha;
  return Enter(exp, Phase::kCommitted, err);
}

std::string Engine::RunStep(const Experiment& exp, const std::string& command, double timeout_s,
                            const std::string& log_name, double* seconds) {
  RunSpec spec;
  spec.argv = ShellCommand(command);
  spec.cwd = deps_.workspace->root();
  spec.env = RunEnv(exp, 1);
  spec.timeout_s = timeout_s;
  spec.grace_s = config_.grace_s;
  spec.log_path = RunDir(exp.id, true) + "/" + log_name;
  spec.log_limit_bytes = config_.log_limit_bytes;
  spec.cancel = deps_.cancel;
  RunResult result = deps_.runner->Run(spec);
  if (seconds) *seconds += result.wall_s;
  if (result.ok()) return "";
  return result.Describe() + " (log: " + RunDir(exp.id, false) + "/" + log_name + ")";
}

bool Engine::BuildAndGate(Experiment* exp, bool* finished, std::string* err) {
  *finished = true;
  if (std::string problem; !CheckProtected(&problem, err)) {
    return false;
  } else if (!problem.empty()) {
    return Finish(exp, Status::kOutOfScope, problem, err);
  }
  if (!Enter(exp, Phase::kBuilding, err)) return false;
  if (!config_.build.empty()) {
    std::string failure =
        RunStep(*exp, config_.build, config_.build_timeout_s, "build.log", &exp->build_s);
    if (CancelRequested())
      return Finish(exp, Status::kInterrupted, "stopped by the user during the build", err);
    if (!failure.empty()) return Finish(exp, Status::kCrash, "build failed: " + failure, err);
  }
  for (const GateConfig& gate : config_.gates) {
    if (gate.when != GateConfig::When::kBefore) continue;
    std::string failure =
        RunStep(*exp, gate.command, gate.timeout_s, "gate-" + gate.name + ".log", &exp->build_s);
    if (CancelRequested())
      return Finish(exp, Status::kInterrupted, "stopped by the user during a gate", err);
    if (!failure.empty())
      return Finish(exp, Status::kGateFailed, "gate " + gate.name + " failed: " + failure, err);
  }
  *finished = false;
  return true;
}

bool Engine::RunAttempt(Experiment* exp, int attempt, const std::string& purpose,
                        RunRecord* record, std::string* problem, Status* status,
                        std::string* err) {
  const std::string log_name = attempt == 1 ? "run.log" : "run-" + std::to_string(attempt) + ".log";
  RunSpec spec;
  spec.argv = ShellCommand(config_.command);
  spec.cwd = deps_.workspace->root();
  spec.env = RunEnv(*exp, attempt);
  spec.timeout_s = config_.timeout_s;
  spec.grace_s = config_.grace_s;
  spec.log_path = RunDir(exp->id, true) + "/" + log_name;
  spec.log_limit_bytes = config_.log_limit_bytes;
  spec.cancel = deps_.cancel;
  Reporter* reporter = deps_.reporter;
  if (reporter) {
    spec.on_line = [reporter, exp](std::string_view line) {
      if (IsProgressLine(line)) reporter->OnProgress(*exp, line);
    };
    reporter->OnRunStart(*exp, attempt, purpose);
  }
  RunResult result = deps_.runner->Run(spec);

  RunRecord& r = *record;
  r.experiment_id = exp->id;
  r.attempt = attempt;
  r.purpose = purpose;
  r.exit_code = result.end == RunResult::End::kExited ? result.exit_code : -1;
  r.signal = result.end == RunResult::End::kSignaled ? result.signal : 0;
  r.timed_out = result.end == RunResult::End::kTimedOut;
  r.wall_s = result.wall_s;
  r.cpu_s = result.cpu_s;
  r.peak_rss_mb = result.peak_rss_mb;
  r.log_path = RunDir(exp->id, false) + "/" + log_name;
  std::map<std::string, double> parsed = ParseSummary(result.tail);
  if (!config_.metric_regex.empty()) {
    double value = 0;
    if (ParseMetricRegex(result.tail, config_.metric_regex, &value))
      parsed[config_.metric_name] = value;
  }
  auto found = parsed.find(config_.metric_name);
  for (const auto& [name, value] : parsed)
    if (std::isfinite(value)) r.metrics[name] = value;
  if (found != parsed.end() && std::isfinite(found->second)) r.metric = found->second;
  if (!deps_.ledger->AddRun(r, err)) return false;

  // Classify: a status is a fact, so each failure says what was seen.
  *status = Status::kNone;
  const std::string name = config_.metric_name;
  const std::string printed =
      r.metric ? " after printing " + name + ": " + FormatMetric(*r.metric) : "";
  switch (result.end) {
    case RunResult::End::kCancelled:
      *status = Status::kInterrupted;
      *problem = "stopped by the user during the run";
      break;
    case RunResult::End::kTimedOut:
      *status = Status::kTimeout;
      *problem = "killed at run.timeout (" + FormatSeconds(config_.timeout_s) + ")";
      break;
    case RunResult::End::kFailedToStart:
      *status = Status::kCrash;
      *problem = "could not start: " + result.error;
      break;
    case RunResult::End::kLimit:
      *status = Status::kCrash;
      *problem = result.Describe();
      break;
    case RunResult::End::kSignaled:
      *status = Status::kCrash;
      *problem = "killed by " + result.Describe() + printed;
      break;
    case RunResult::End::kExited:
      if (result.exit_code != 0) {
        *status = Status::kCrash;
        *problem = result.Describe() + printed;
      } else if (found == parsed.end()) {
        *status = Status::kCrash;
        *problem = "no " + name + " in the output (expected a line '" + name +
                   ": <number>' after '---')";
      } else if (!std::isfinite(found->second)) {
        *status = Status::kCrash;
        *problem = name + " is " + (std::isnan(found->second) ? "nan" : "inf");
      }
      break;
  }
  if (result.output_truncated)
    Note("#" + std::to_string(exp->id) + ": output over run.log_limit was dropped (see " +
         r.log_path + ")");
  return true;
}

bool Engine::RunAndDecide(Experiment* exp, std::string* err) {
  if (!Enter(exp, Phase::kRunning, err)) return false;
  std::vector<RunRecord> runs;
  // Runs one attempt; false with *failed set when the experiment is over.
  auto attempt = [&](const std::string& purpose, bool* failed) -> bool {
    RunRecord record;
    std::string problem;
    Status status = Status::kNone;
    int n = static_cast<int>(runs.size()) + 1;
    if (!RunAttempt(exp, n, purpose, &record, &problem, &status, err)) return false;
    runs.push_back(record);
    exp->run_s += record.wall_s;
    exp->cpu_s += record.cpu_s;
    exp->peak_rss_mb = std::max(exp->peak_rss_mb, record.peak_rss_mb);
    if (n == 1) {
      exp->exit_code = record.exit_code;
      exp->signal = record.signal;
    }
    *failed = status != Status::kNone;
    if (*failed) {
      std::string prefix = n == 1 ? "" : purpose + " run " + std::to_string(n) + ": ";
      return Finish(exp, status, prefix + problem, err);
    }
    return true;
  };
  // Means over the runs so far.
  auto summarize = [&]() {
    std::vector<double> values;
    std::map<std::string, std::vector<double>> all;
    for (const RunRecord& r : runs) {
      values.push_back(*r.metric);
      for (const auto& [k, v] : r.metrics) all[k].push_back(v);
    }
    Spread s = SpreadOf(values);
    exp->metric = s.mean;
    exp->metric_stddev = s.stddev;
    exp->metric_n = s.n;
    exp->metrics.clear();
    for (const auto& [k, v] : all) exp->metrics[k] = SpreadOf(v).mean;
    return s;
  };

  bool failed = false;
  const int first_runs = exp->baseline ? config_.baseline_repeats : 1;
  for (int i = 0; i < first_runs; ++i) {
    if (!attempt(i == 0 ? "main" : "baseline_repeat", &failed)) return false;
    if (failed) return true;
  }
  Spread spread = summarize();

  // Verify: the run must not have touched what it may not, and the "after"
  // gates must pass.
  std::string problem;
  if (!CheckProtected(&problem, err)) return false;
  if (!problem.empty()) return Finish(exp, Status::kOutOfScope, problem + " during the run", err);
  for (const GateConfig& gate : config_.gates) {
    if (gate.when != GateConfig::When::kAfter) continue;
    std::string failure =
        RunStep(*exp, gate.command, gate.timeout_s, "gate-" + gate.name + ".log", nullptr);
    if (CancelRequested())
      return Finish(exp, Status::kInterrupted, "stopped by the user during a gate", err);
    if (!failure.empty())
      return Finish(exp, Status::kGateFailed, "gate " + gate.name + " failed: " + failure, err);
  }

  if (exp->baseline) {
    std::string reason = "baseline";
    if (spread.n > 1) {
      noise_sigma_ = spread.stddev;
      if (!deps_.ledger->SetMeta("noise_sigma", std::to_string(spread.stddev), err)) return false;
      reason += ": mean of " + std::to_string(spread.n) + " runs, run-to-run spread " +
                FormatMetric(spread.stddev);
    }
    for (const Constraint& c : config_.constraints) {
      auto it = exp->metrics.find(c.metric);
      if (it == exp->metrics.end() || !c.Holds(it->second))
        Note("warning: the baseline does not meet the constraint " + c.text);
    }
    return Finish(exp, Status::kKeep, reason, err);
  }

  const Experiment& incumbent = *Incumbent();
  AcceptInput input;
  input.candidate = spread;
  input.incumbent.mean = *incumbent.metric;
  input.incumbent.stddev = incumbent.metric_stddev;
  input.incumbent.n = std::max(1, incumbent.metric_n);
  input.noise_sigma = noise_sigma_;
  AcceptDecision decision = DecideAccept(input, config_, false);
  if (decision.needs_confirmation) {
    for (int i = 0; i < config_.confirm; ++i) {
      if (!attempt("confirm", &failed)) return false;
      if (failed) return true;
    }
    input.candidate = summarize();
    decision = DecideAccept(input, config_, true);
  }
  bool keep = decision.keep;
  std::string reason = decision.reason;
  if (deps_.hooks) {
    AcceptVerdict verdict = deps_.hooks->Accept(View(), *exp, incumbent);
    if (verdict.decided) {
      keep = verdict.keep;
      reason = verdict.reason + " (default rule: " + decision.reason + ")";
    }
  }
  if (keep) {
    for (const Constraint& c : config_.constraints) {
      auto it = exp->metrics.find(c.metric);
      if (it == exp->metrics.end()) {
        keep = false;
        reason = "constraint " + c.text + " cannot be checked: the run printed no " + c.metric;
        break;
      }
      if (!c.Holds(it->second)) {
        keep = false;
        reason = "violates constraint " + c.text + " (" + FormatMetric(it->second) + ")";
        break;
      }
    }
  }
  return Finish(exp, keep ? Status::kKeep : Status::kDiscard, reason, err);
}

bool Engine::Finish(Experiment* exp, Status status, const std::string& reason, std::string* err) {
  const Experiment* before = Incumbent();
  std::optional<Experiment> previous;
  if (before) previous = *before;
  exp->status = status;
  exp->reason = reason;
  exp->finished_at = deps_.clock->WallSeconds();
  if (deps_.hooks) exp->mechanisms = deps_.hooks->TakeTouched();
  if (!Enter(exp, Phase::kDecided, err)) return false;  // write-ahead of the git side effect
  if (!Settle(exp, err)) return false;
  history_.push_back(*exp);

  if (deps_.hooks) {
    LoopView view = View();
    deps_.hooks->OnResult(view, *exp);
    if (deps_.outer) deps_.outer->AfterExperiment(view, deps_.hooks, events_);
    std::vector<std::string> touched = deps_.hooks->TakeTouched();
    bool more = false;
    for (const std::string& name : touched) {
      if (std::find(exp->mechanisms.begin(), exp->mechanisms.end(), name) ==
          exp->mechanisms.end()) {
        exp->mechanisms.push_back(name);
        more = true;
      }
    }
    if (more) {
      history_.back().mechanisms = exp->mechanisms;
      if (!Write(*exp, err)) return false;
    }
    for (const auto& [key, calls] : deps_.hooks->TakeCounts())
      if (!deps_.ledger->AddMechanismCalls(key.first, key.second, calls, err)) return false;
  }
  AppendNotes(*exp, previous ? &*previous : nullptr);
  if (deps_.reporter) deps_.reporter->OnFinished(*exp, Incumbent());
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

}  // namespace ratchet
