// The session around the experiments: loading the ledger, recovering an
// unfinished experiment, stop rules, and settling a decided experiment.
// The steps of one experiment are in engine_steps.cc.
#include "core/engine.h"

#include <nlohmann/json.hpp>

#include "core/accept.h"
#include "core/scope.h"
#include "core/stop.h"

namespace ratchet {

uint64_t RunSeed(uint64_t loop_seed, int attempt) {
  return attempt <= 1 ? loop_seed : loop_seed + 1000003ull * static_cast<uint64_t>(attempt - 1);
}

Engine::Engine(const LoopConfig& config, const EngineDeps& deps)
    : config_(config), deps_(deps), branch_("ratchet/" + config.tag) {}

namespace {

std::string ShortSha(const std::string& sha) { return sha.substr(0, 7); }

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

}  // namespace

void Engine::Note(const std::string& line) {
  if (deps_.reporter) deps_.reporter->OnNote(line);
}

bool Engine::Interrupted() const { return deps_.interrupts && deps_.interrupts->load() > 0; }
bool Engine::CancelRequested() const { return deps_.cancel && deps_.cancel->load(); }

const Experiment* Engine::Incumbent() const {
  for (auto it = history_.rbegin(); it != history_.rend(); ++it)
    if (it->status == Status::kKeep) return &*it;
  return nullptr;
}

std::string Engine::IncumbentCommit() const {
  const Experiment* best = Incumbent();
  return best ? best->candidate_commit : start_commit_;
}

LoopView Engine::View() const {
  LoopView view;
  view.config = &config_;
  view.history = &history_;
  view.incumbent = Incumbent();
  view.next_id = static_cast<int>(history_.size()) + 1;
  return view;
}

double Engine::ElapsedWall() const {
  return earlier_sessions_s_ + (deps_.clock->MonotonicSeconds() - session_started_mono_);
}

bool Engine::Load(std::string* err) {
  if (loaded_) return true;
  if (!deps_.ledger->LoadExperiments(&history_, err)) return false;
  if (!deps_.ledger->GetMeta("start_commit", &start_commit_, err)) return false;
  std::string text;
  if (!deps_.ledger->GetMeta("protected_hashes", &text, err)) return false;
  if (!text.empty()) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) {
      *err = "the ledger's protected_hashes entry is damaged";
      return false;
    }
    for (auto& [path, hash] : j.items()) protected_hashes_[path] = hash.get<std::string>();
  }
  if (!deps_.ledger->GetMeta("noise_sigma", &text, err)) return false;
  if (!text.empty()) noise_sigma_ = std::stod(text);
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

bool Engine::Preflight(std::string* err) {
  if (!Load(err)) return false;
  const bool pending = !history_.empty() && history_.back().phase != Phase::kDone;
  if (!start_commit_.empty() && !CheckBranch(pending, err)) return false;
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
  return true;
}

bool Engine::CheckBranch(bool pending, std::string* err) {
  std::string tip;
  if (!deps_.repo->ResolveRef("refs/heads/" + branch_, &tip, err)) return false;
  if (tip.empty()) return true;  // created again from the ledger's incumbent
  std::string expected = IncumbentCommit();
  bool explained = tip == expected;
  // Killed between deciding a keep and moving the branch, or the reverse.
  if (pending && (tip == history_.back().parent_commit || tip == history_.back().candidate_commit))
    explained = true;
  if (!explained) {
    *err = "branch " + branch_ + " is at " + ShortSha(tip) + " but the ledger's best is " +
           ShortSha(expected) + "; was it moved by hand? Put it back with `git branch -f " +
           branch_ + " " + expected + "` (while on another branch)";
    return false;
  }
  return true;
}

bool Engine::Write(const Experiment& exp, std::string* err) {
  return deps_.ledger->UpdateExperiment(exp, err);
}

bool Engine::Enter(Experiment* exp, Phase phase, std::string* err) {
  exp->phase = phase;
  if (!Write(*exp, err)) return false;
  if (deps_.reporter) deps_.reporter->OnPhase(*exp);
  return true;
}

bool Engine::Recover(std::string* err) {
  if (history_.empty() || history_.back().phase == Phase::kDone) return true;
  Experiment exp = history_.back();
  history_.pop_back();
  if (exp.status == Status::kNone) {
    // Keep whatever the proposer had written: nothing tried is ever lost.
    if (exp.candidate_commit.empty() && !exp.parent_commit.empty()) {
      std::vector<FileChange> changes;
      if (!deps_.repo->Changes(exp.parent_commit, &changes, err)) return false;
      if (!changes.empty()) {
        std::string sha;
        if (!deps_.repo->CommitWorktree(exp.parent_commit,
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
    Note("#" + std::to_string(exp.id) + " was interrupted (" + exp.reason +
         "); the tree is back at the incumbent");
  } else {
    Note("#" + std::to_string(exp.id) + " was decided (" + StatusName(exp.status) +
         ") before ratchet stopped; finishing it");
  }
  if (!Settle(&exp, err)) return false;
  history_.push_back(exp);
  return true;
}

bool Engine::Settle(Experiment* exp, std::string* err) {
  if (exp->status == Status::kKeep && !exp->baseline) {
    std::string tip;
    if (!deps_.repo->ResolveRef("refs/heads/" + branch_, &tip, err)) return false;
    if (tip == exp->candidate_commit) {
      if (!deps_.repo->RestoreTo(exp->candidate_commit, err)) return false;
    } else if (!deps_.repo->AdvanceBranch(branch_, exp->candidate_commit, exp->parent_commit,
                                          err)) {
      return false;
    }
  } else {
    // The parent is the incumbent the candidate was proposed from.
    if (!deps_.repo->RestoreTo(exp->parent_commit, err)) return false;
  }
  exp->phase = Phase::kDone;
  return Write(*exp, err);
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
  return deps_.repo->CheckoutBranch(branch_, IncumbentCommit(), err);
}

bool Engine::CheckProtected(std::string* problem, std::string* err) {
  std::map<std::string, std::string> now;
  if (!deps_.workspace->HashFiles(config_.protected_files, &now, err)) return false;
  *problem = CompareProtectedHashes(protected_hashes_, now);
  return true;
}

bool Engine::Run(StopSummary* summary, std::string* err) {
  if (!Load(err) || !Recover(err) || !StartLoop(err)) return false;

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

  Session session;
  session.pid = deps_.pid;
  session.started_at = deps_.clock->WallSeconds();
  if (!deps_.ledger->BeginSession(session, &session_id_, err)) return false;
  session_started_mono_ = deps_.clock->MonotonicSeconds();
  if (deps_.reporter) deps_.reporter->OnSessionStart(session_id_);
  LedgerEvents events(deps_.ledger, deps_.clock, deps_.reporter);
  events.Record(0, "session_start",
                nlohmann::json{{"session", session_id_}, {"pid", deps_.pid}}.dump());

  std::string reason;
  while (true) {
    StopInput input;
    input.history = &history_;
    input.incumbent = Incumbent();
    input.elapsed_wall_s = ElapsedWall();
    input.interrupts = deps_.interrupts ? deps_.interrupts->load() : 0;
    reason = stop_reason_.empty() ? CheckStop(input, config_) : stop_reason_;
    if (!reason.empty()) break;
    // steering: `ratchet pause` holds the loop here, between experiments;
    // after a wait the stop rules are checked again (Ctrl-C, stop.wall).
    if (deps_.steering &&
        deps_.steering->WaitWhilePaused([this] { return Interrupted(); },
                                        [this](const std::string& line) { Note(line); }))
      continue;
    if (!RunOne(&events, err)) {
      reason = "error: " + *err;
      deps_.ledger->EndSession(session_id_, deps_.clock->WallSeconds(), reason, err);
      return false;
    }
  }

  if (!deps_.ledger->EndSession(session_id_, deps_.clock->WallSeconds(), reason, err))
    return false;
  events.Record(0, "stop", nlohmann::json{{"reason", reason}}.dump());
  if (deps_.reporter) deps_.reporter->OnStop(reason);

  summary->reason = reason;
  summary->experiments = static_cast<int>(history_.size());
  for (const Experiment& e : history_) ++summary->counts[e.status];
  if (const Experiment* best = Incumbent()) summary->best = *best;
  return true;
}

}  // namespace ratchet
