#include "web/testing/loop_fixture.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "store/live_status.h"

namespace ratchet {
namespace {

namespace fs = std::filesystem;

const char* const kIdeas[] = {
    "raise learning rate to 3e-3",
    "warmdown over the last 40%",
    "add QK-norm scale",
    "wider MLP (4x -> 5x)",
    "drop weight decay on norms",
    "rotary base 50000",
    "batch 48 instead of 32",
    "GELU -> ReLU^2",
    "untie embeddings",
    "muon momentum 0.97",
    "shorter warmup",
    "value residual",
    "fewer heads, wider head dim",
    "z-loss 1e-4",
    "logit soft-capping at 30",
    "depth 10, width 640",
    "fused attention kernel",
    "cosine schedule",
};

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool WriteText(const fs::path& path, const std::string& text, std::string* err) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.good()) {
    *err = "cannot write " + path.string();
    return false;
  }
  return true;
}

// Runs git in `dir`; the first output line goes to *out.
bool Git(const std::string& dir, const std::string& args, std::string* out, std::string* err) {
  std::string cmd = "git -C '" + dir + "' -c user.name=fixture -c user.email=f@x " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    *err = "cannot run git";
    return false;
  }
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  int rc = pclose(p);
  if (rc != 0) {
    *err = "git " + args + " failed: " + text;
    return false;
  }
  if (out) *out = text.substr(0, text.find('\n'));
  return true;
}

// Commits train.cfg = `content` on top of `parent`; returns the sha.
bool CommitCandidate(const std::string& dir, const std::string& parent, const std::string& content,
                     const std::string& message, std::string* sha, std::string* err) {
  if (!Git(dir, "checkout -q --detach " + parent, nullptr, err)) return false;
  if (!WriteText(fs::path(dir) / "train.cfg", content, err)) return false;
  return Git(dir, "commit -q -am '" + message + "'", nullptr, err) &&
         Git(dir, "rev-parse HEAD", sha, err);
}

std::string Config(int id, double lr) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "# experiment %d\nlr = %.5f\ndepth = %d\n", id, lr, 8 + id % 4);
  return buf;
}

std::string LogText(int id, std::optional<double> metric, bool crash) {
  std::string log;
  for (int step = 0; step < 40; ++step) {
    char line[96];
    std::snprintf(line, sizeof line, "step %d loss %.4f\n", step, 4.0 - step * 0.05 + id * 1e-3);
    log += line;
  }
  if (crash) return log + "Traceback: CUDA error: an illegal memory access was encountered\n";
  char summary[128];
  std::snprintf(summary, sizeof summary, "---\nval_bpb: %.6f\ntraining_seconds: 60.0\n",
                metric.value_or(0));
  return log + summary;
}

struct Writer {
  Writer(std::string d, Ledger* l, FixtureSummary* s) : dir(std::move(d)), ledger(l), summary(s) {}
  std::string dir;
  Ledger* ledger;
  FixtureSummary* summary;
  int session = 0;
  double clock = 0;
};

// Records one decided experiment: the row is inserted while proposing and
// rewritten when done, as the engine does.
bool Record(Writer& w, Experiment exp, bool logs, std::string* err) {
  exp.session_id = w.session;
  exp.started_at = w.clock;
  exp.propose_s = 3;
  exp.build_s = 2;
  exp.run_s = exp.status == Status::kTimeout ? 90 : 60;
  exp.finished_at = w.clock + exp.propose_s + exp.build_s + exp.run_s;
  w.clock = exp.finished_at + 1;
  exp.proposer = "script";
  exp.log_path = ".ratchet/runs/" + std::to_string(exp.id) + "/run.log";
  if (exp.metric)
    exp.metrics = {
        {"val_bpb", *exp.metric}, {"training_seconds", 60.0}, {"peak_mem_mb", 5000.0 + exp.id}};
  Experiment proposing = exp;
  proposing.phase = Phase::kProposing;
  proposing.status = Status::kNone;
  proposing.metric.reset();
  proposing.metrics.clear();
  if (!w.ledger->InsertExperiment(&proposing, err)) return false;
  exp.id = proposing.id;
  exp.phase = Phase::kDone;
  if (!w.ledger->UpdateExperiment(exp, err)) return false;
  RunRecord run;
  run.experiment_id = exp.id;
  run.purpose = exp.baseline ? "baseline_repeat" : "main";
  run.exit_code = exp.exit_code;
  run.timed_out = exp.status == Status::kTimeout;
  run.wall_s = exp.run_s;
  run.metric = exp.metric;
  run.metrics = exp.metrics;
  run.log_path = exp.log_path;
  // A learning curve: the loss falls towards a level set by the final score
  // (the whole run, or up to the crash or the kill).
  const int points = exp.status == Status::kCrash ? 4 : 10;
  for (int k = 1; k <= points; ++k) {
    const double t = exp.run_s * k / 10;
    run.curve.push_back(CurvePoint{t, {{"loss", 3 * exp.metric.value_or(1.1) + 2.0 / k}}});
  }
  if (!w.ledger->AddRun(run, err)) return false;
  if (logs && !WriteText(fs::path(w.dir) / exp.log_path,
                         LogText(exp.id, exp.metric, exp.status == Status::kCrash), err)) {
    return false;
  }
  ++w.summary->experiments;
  if (exp.status == Status::kKeep) ++w.summary->kept;
  if (exp.status == Status::kCrash || exp.status == Status::kTimeout) ++w.summary->failed;
  return true;
}

}  // namespace

bool WriteLoopFixture(const std::string& dir, Ledger* ledger, const FixtureOptions& options,
                      FixtureSummary* summary, std::string* err) {
  *summary = {};
  char toml[512];
  std::snprintf(toml, sizeof toml,
                "[edit]\nfiles = [\"train.cfg\"]\n\n[run]\ncommand = \"sh run.sh\"\n"
                "budget = \"60s\"\ntimeout = \"90s\"\n\n[metric]\nname = \"val_bpb\"\n"
                "goal = \"min\"\n\n[stop]\nmax_experiments = %d\ntarget = %g\n",
                options.experiments + 100, options.target);
  if (!WriteText(fs::path(dir) / "ratchet.toml", toml, err)) return false;
  if (!WriteText(fs::path(dir) / ".gitignore", ".ratchet/\n", err)) return false;
  if (!WriteText(fs::path(dir) / "train.cfg", Config(0, 0.001), err)) return false;
  std::string incumbent;
  if (options.git) {
    if (!Git(dir, "init -q -b main", nullptr, err) || !Git(dir, "add -A", nullptr, err) ||
        !Git(dir, "commit -q -m 'the loop'", nullptr, err) ||
        !Git(dir, "rev-parse HEAD", &incumbent, err)) {
      return false;
    }
  }
  std::string e;
  ledger->SetMeta("metric_name", "val_bpb", &e);
  ledger->SetMeta("goal", "min", &e);
  Writer w(dir, ledger, summary);
  w.clock = Now() - options.experiments * 70.0;
  Session s;
  s.pid = getpid();
  s.started_at = w.clock;
  if (!ledger->BeginSession(s, &w.session, err)) return false;

  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> unit(0, 1);
  // Candidates are a little worse than the incumbent on average, and their
  // spread shrinks as the loop goes on, so keeps become rare (as in real loops).
  std::normal_distribution<double> noise(0.004, 0.012);
  double best = 1.0;
  for (int id = 1; id <= options.experiments; ++id) {
    Experiment exp;
    exp.id = id;
    exp.baseline = id == 1;
    exp.parent_commit = incumbent;
    exp.description = id == 1 ? "baseline" : kIdeas[(id * 7 + options.seed) % std::size(kIdeas)];
    double roll = unit(rng);
    if (id == 1) {
      exp.status = Status::kKeep;
      exp.metric = best;
      exp.exit_code = 0;
    } else if (roll < 0.15) {
      exp.status = Status::kCrash;
      exp.exit_code = 1;
      exp.reason = "exit 1, no val_bpb in the output";
    } else if (roll < 0.2) {
      exp.status = Status::kTimeout;
      exp.signal = 9;
      exp.reason = "killed at the 90s timeout";
    } else {
      double metric = best + 0.004 + (noise(rng) - 0.004) / std::sqrt(1 + id / 30.0);
      exp.metric = metric;
      exp.exit_code = 0;
      exp.status = metric < best - 0.001 ? Status::kKeep : Status::kDiscard;
      exp.reason = exp.status == Status::kKeep ? "improved" : "no improvement";
    }
    if (options.git && id > 1) {
      std::string sha;
      if (!CommitCandidate(dir, incumbent, Config(id, 0.001 + id * 1e-4), exp.description, &sha,
                           err)) {
        return false;
      }
      exp.candidate_commit = sha;
      exp.diff_stat = "1 file, +2 -2";
      exp.files_changed = {"train.cfg"};
      if (exp.status == Status::kKeep) incumbent = sha;
    } else if (id == 1) {
      exp.candidate_commit = incumbent;
    }
    if (exp.status == Status::kKeep) best = *exp.metric;
    if (!Record(w, std::move(exp), options.logs, err)) return false;
  }
  if (options.git && !Git(dir, "checkout -q -B main " + incumbent, nullptr, err)) return false;
  summary->incumbent = incumbent;
  return true;
}

bool AppendFixtureExperiment(const std::string& dir, Ledger* ledger, const std::string& description,
                             double metric, FixtureSummary* summary, std::string* err) {
  std::vector<Experiment> all;
  std::vector<Session> sessions;
  if (!ledger->LoadExperiments(&all, err) || !ledger->LoadSessions(&sessions, err)) return false;
  Experiment exp;
  exp.id = all.empty() ? 1 : all.back().id + 1;
  exp.description = description;
  exp.metric = metric;
  exp.exit_code = 0;
  exp.status = Status::kKeep;
  exp.reason = "improved";
  bool git = fs::exists(fs::path(dir) / ".git");
  if (git) {
    std::string head, sha;
    if (!Git(dir, "rev-parse HEAD", &head, err) ||
        !CommitCandidate(dir, head, Config(exp.id, 0.01), description, &sha, err) ||
        !Git(dir, "checkout -q -B main " + sha, nullptr, err)) {
      return false;
    }
    exp.parent_commit = head;
    exp.candidate_commit = sha;
    summary->incumbent = sha;
  }
  Writer w(dir, ledger, summary);
  w.session = sessions.empty() ? 1 : sessions.back().id;
  w.clock = Now() - 66;
  return Record(w, std::move(exp), true, err);
}

bool WriteFixtureLive(const std::string& dir, long long pid, int id, const std::string& phase,
                      double elapsed_s, const std::string& progress, std::string* err) {
  double now = Now();
  LiveStatus live;
  live.pid = pid;
  live.session_id = 1;
  live.experiment_id = id;
  live.phase = phase;
  live.phase_started_at = now - elapsed_s;
  live.run_started_at = phase == "running" ? now - elapsed_s : 0.0;
  live.budget_s = 60;
  live.timeout_s = 90;
  live.progress = progress;
  live.updated_at = now;
  return WriteLiveStatus(dir + "/.ratchet/live.json", live, err);
}

}  // namespace ratchet
