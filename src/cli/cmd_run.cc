// `ratchet run DIR`: wires the real ports to the engine and runs the loop.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/loop_dir.h"
#include "cli/schedule.h"
#include "cli/terminal_reporter.h"
#include "core/accept.h"
#include "core/engine.h"
#include "exec/local_runner.h"
#include "exec/slurm_runner.h"
#include "exec/step_runner.h"
#include "exec/system_clock.h"
#include "notify/ledger_steering.h"
#include "notify/notify_reporter.h"
#include "outer/outer_loop.h"
#include "propose/judge.h"
#include "propose/registry.h"
#include "propose/reviewer.h"
#include "propose/search/search_proposer.h"
#include "store/ledger_files.h"
#include "store/loop_lock.h"
#include "store/sqlite_ledger.h"
#include "vcs/file_state_guard.h"
#include "vcs/git_repo.h"
#include "vcs/stale_locks.h"
#include "vcs/workspace_fs.h"

namespace ratchet {
namespace {

// `ratchet run`'s exit status, one per outcome (README.md, "Exit status").
enum RunExit : int {
  kExitTarget = 0,          // stop.target reached
  kExitEngineError = 1,     // git or ledger trouble: the loop cannot go on
  kExitConfigError = 2,     // bad ratchet.toml, bad arguments, refused start
  kExitRuleStop = 3,        // max_experiments, wall, patience, cost or tokens
  kExitBaselineFailed = 4,  // the unchanged baseline produced no result
  kExitCircuitBreaker = 5,  // consecutive failures, or the loop cannot usefully go on
  kExitInterrupted = 130,   // Ctrl-C (128 + SIGINT)
};

int ExitFor(StopKind kind) {
  switch (kind) {
    case StopKind::kTarget: return kExitTarget;
    case StopKind::kRule: return kExitRuleStop;
    case StopKind::kCircuitBreaker: return kExitCircuitBreaker;
    case StopKind::kBaselineFailed: return kExitBaselineFailed;
    case StopKind::kInterrupted: return kExitInterrupted;
  }
  return kExitEngineError;
}

int ConfigFail(const std::string& message) {
  Fail(message);
  return kExitConfigError;
}

// `--if-idle` found the loop held by another run: not a failure, so 0
// (README.md, "Exit status").
int NothingToDo(const Error& busy) {
  std::printf("ratchet: %s; nothing to do\n", busy.message().c_str());
  return 0;
}

// How long a git lock file must outlive our loop lock to count as stale: a
// git command of the user's holds one for milliseconds.
constexpr double kGitLockSettleSeconds = 2.0;

std::atomic<int> g_interrupts{0};
std::atomic<bool> g_cancel{false};

void OnSignal(int signo) {
  // Only async-signal-safe calls here: atomics and write(2).
  int n = ++g_interrupts;
  if (signo == SIGTERM || n >= 2) {
    g_cancel = true;
    const char msg[] = "\nratchet: stopping now: killing the current run\n";
    (void)!::write(2, msg, sizeof msg - 1);
  } else {
    const char msg[] =
        "\nratchet: will stop after this experiment (Ctrl-C again to stop now)\n";
    (void)!::write(2, msg, sizeof msg - 1);
  }
}

void InstallSignalHandlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

struct RunOptions {
  std::string dir;
  int max_experiments = 0;
  double target = std::numeric_limits<double>::quiet_NaN();
  bool target_set = false;
  bool if_idle = false;         // exit 0 quietly when the loop runs already
  std::string until;            // (scheduled runs) do not start after this time
  std::string schedule_name;    // the schedule to remove once past `until`
};

// A run started by `ratchet schedule` past its --until: removes the schedule
// instead of starting. True when the run should not start.
bool ScheduleOver(const RunOptions& options, const LoopPaths& paths, int* code) {
  if (options.until.empty()) return false;
  double until = 0;
  std::string err;
  const double now = SystemClock()->WallSeconds();
  if (!ParseUntil(options.until, now, &until, &err)) {
    *code = Fail(err);
    return true;
  }
  if (now < until) return false;
  std::printf("ratchet: the schedule of %s ended at %s; not starting\n", paths.dir.c_str(),
              FormatUtcMinute(until).c_str());
  *code = 0;
  if (options.schedule_name.empty()) return true;
  bool found = false;
  std::vector<std::string> done;
  if (!RemoveSchedule(options.schedule_name, &found, &done, &err)) *code = Fail(err);
  for (const std::string& line : done) std::printf("%s\n", line.c_str());
  return true;
}

void PrintSummary(const StopSummary& s, const LoopConfig& config) {
  std::printf("stopped: %s\n", s.reason.c_str());
  if (s.best) {
    std::printf("best: #%d %s=%s (commit %s): %s\n", s.best->id, config.metric_name.c_str(),
                s.best->metric ? FormatMetric(*s.best->metric).c_str() : "-",
                Short(s.best->candidate_commit).c_str(), s.best->description.c_str());
  }
  std::string counts;
  for (const auto& [status, n] : s.counts)
    counts += (counts.empty() ? "" : ", ") + std::string(StatusName(status)) + " " +
              std::to_string(n);
  std::printf("experiments: %d (%s)\n", s.experiments, counts.c_str());
}

int Run(const RunOptions& options) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(options.dir, &paths, &err)) return ConfigFail(err);
  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return ConfigFail(err);
  if (options.max_experiments > 0) config.max_experiments = options.max_experiments;
  if (options.target_set) config.target = options.target;
  // loops: [judge] must not be the writer; its command reaches the run's environment.
  if (!ApplyJudge(&config, &err)) return ConfigFail(err);
  // loops: [notify] is read (and its environment variables checked) before anything runs.
  NotifyConfig notify_config;
  if (config.notify.present()) {
    ConfigSection section = config.notify;
    if (!ReadNotifyConfig(section, std::getenv, &notify_config, &err)) return ConfigFail(err);
  }

  // A scheduled start (`ratchet run --if-idle`): a loop that runs already is
  // not an error, and is checked before anything else (its tree is mid-experiment).
  LoopLock lock;
  if (options.if_idle && FileExists(paths.lock)) {
    const Error locked = lock.Acquire(paths.lock, paths.dir);
    if (locked.Is(Error::Kind::kBusy)) return NothingToDo(locked);
    if (!locked.ok()) return Fail(locked.message());
  }
  if (int code = 0; ScheduleOver(options, paths, &code)) return code;

  std::unique_ptr<GitRepo> repo;
  if (!GitRepo::Open(paths.dir, &repo, &err)) return ConfigFail(err);
  LocalProcessRunner runner;
  // Every step of every experiment, in flight at once: here, or build, gates
  // and runs as Slurm jobs ([executor] kind = "slurm", from when the lock is held).
  std::unique_ptr<StepRunner> steps = std::make_unique<LocalStepRunner>();
  if (config.executor.slurm() && !SlurmStepRunner::ClusterReachable(&err))
    return ConfigFail(config.file + ": [executor] kind = \"slurm\", but the cluster does not "
                      "answer: " + err);
  FsWorkspace workspace(paths.dir);
  // External proposers and the reviewer must leave .git and .ratchet as they
  // were; the ledger's files are held open for the whole run.
  LedgerFiles ledger_files;
  StateGuardFactory state_guards = FileStateGuard::Factory(&ledger_files);
  ProposerDeps proposer_deps{&runner, &workspace, SystemClock(), state_guards};
  std::unique_ptr<Proposer> proposer =
      CreateProposer(config.propose_kind, config, proposer_deps, &err);
  if (!proposer) return ConfigFail(err);
  if (!ValidateProposerSections(config, proposer_deps, &err)) return ConfigFail(err);
  // [review]: a separate program approves or rejects each candidate before it runs.
  HookSet hooks;
  if (config.review.present()) {
    ConfigSection review = config.review;
    std::shared_ptr<Mechanism> reviewer = MakeReviewer(
        review, config, ReviewerDeps{&runner, &workspace, repo.get(), state_guards}, &err);
    if (!reviewer) return ConfigFail(err);
    hooks.Add(reviewer);
  }
  // [outer]: the outer loop watches the inner one and changes how it searches
  // (docs/outer.md). Read now, so a bad key fails before anything is written.
  OuterConfig outer_config;
  if (config.outer.present()) {
    ConfigSection section = config.outer;
    if (!ReadOuterConfig(section, &outer_config, &err)) return ConfigFail(err);
  }

  EngineDeps deps;
  deps.clock = SystemClock();
  deps.steps = steps.get();
  deps.repo = repo.get();
  deps.workspace = &workspace;
  deps.proposer = proposer.get();
  if (!hooks.Names().empty()) deps.hooks = &hooks;
  deps.interrupts = &g_interrupts;
  deps.cancel = &g_cancel;
  deps.pid = ::getpid();
  deps.sandbox_available = runner.SandboxAvailable(&deps.sandbox_why);
  if (const char* home = std::getenv("HOME")) deps.home = home;

  // Everything is checked before the first write: a new loop is preflighted
  // against an empty in-memory ledger, so a refused start leaves no trace.
  const bool new_loop = !FileExists(paths.ledger);
  if (new_loop) {
    std::unique_ptr<SqliteLedger> scratch;
    if (!SqliteLedger::Open(":memory:", true, false, &scratch).Report(&err)) return Fail(err);
    deps.ledger = scratch.get();
    Engine check(config, deps);
    if (!check.Preflight(&err)) return ConfigFail(err);
  }

  if (!repo->EnsureExcluded(".ratchet/", &err)) return Fail(err);
  if (!workspace.MakeDirs(".ratchet", &err)) return Fail(err);
  if (!lock.held()) {
    const Error locked = lock.Acquire(paths.lock, paths.dir);
    if (options.if_idle && locked.Is(Error::Kind::kBusy)) return NothingToDo(locked);
    if (!locked.ok()) return ConfigFail(locked.message());
  }
  if (config.executor.slurm()) {
    // An earlier session's jobs: the engine reattaches to its runs and ends
    // the rest (StepRunner::EndLeftovers) once it has recovered the ledger.
    SlurmOptions slurm{paths.state + "/slurm", config.executor.sbatch, config.executor.poll_s, ""};
    steps = std::make_unique<SlurmStepRunner>(std::move(slurm), std::move(steps));
    deps.steps = steps.get();
  }
  std::vector<std::string> stale_locks;
  if (!RemoveStaleGitLocks(repo->GitDirs(), kGitLockSettleSeconds, &stale_locks, &err))
    return Fail(err);
  for (const auto& path : stale_locks)
    std::printf("ratchet: removed %s, left by a git write that never finished (a killed ratchet)\n",
                path.c_str());
  std::unique_ptr<SqliteLedger> ledger;
  if (!SqliteLedger::Open(paths.ledger, /*create=*/true, /*read_only=*/false, &ledger).Report(&err))
    return Fail(err);
  deps.ledger = ledger.get();

  std::unique_ptr<OuterLoop> outer;
  if (config.outer.present()) {
    OuterDeps outer_deps;
    outer_deps.runner = &runner;
    outer_deps.workspace = &workspace;
    outer_deps.seed = config.seed;
    outer_deps.sandbox = deps.sandbox_available;
    outer_deps.user_home = deps.home;
    if (const SearchSpace* space = proposer->search_space()) {
      outer_deps.space = space;
      outer_deps.seed = proposer->search_seed();
    }
    std::vector<Experiment> history;
    if (!ledger->LoadExperiments(&history, &err)) return Fail(err);
    outer = std::make_unique<OuterLoop>(outer_config, config, outer_deps);
    if (!outer->Install(&hooks, history, &err)) return Fail(err);
    deps.hooks = &hooks;
    deps.outer = outer.get();
  }

  TerminalReporter reporter(config, paths.live, SystemClock(), deps.pid, stdout);
  deps.reporter = &reporter;
  // loops: [notify] webhooks hear what the terminal hears, on their own thread.
  std::unique_ptr<NotifyReporter> notifier;
  std::unique_ptr<TeeReporter> tee;
  if (!notify_config.webhooks.empty()) {
    LoopIdentity loop{config.tag, paths.dir, config.metric_name, config.goal == Goal::kMin};
    notifier = std::make_unique<NotifyReporter>(
        notify_config, loop, SystemClock(), [&reporter](const std::string& line) { reporter.OnNote(line); });
    std::vector<Experiment> history;
    if (!ledger->LoadExperiments(&history, &err)) return Fail(err);
    for (auto it = history.rbegin(); it != history.rend(); ++it) {
      if (it->status == Status::kKeep) {
        notifier->Seed(&*it);
        break;
      }
    }
    tee = std::make_unique<TeeReporter>(std::vector<Reporter*>{&reporter, notifier.get()});
    deps.reporter = tee.get();
  }
  // steering: `ratchet note` / `pause` / `resume` reach the engine through the ledger.
  LedgerSteering steering(ledger.get());
  deps.steering = &steering;
  Engine engine(config, deps);
  if (!engine.Preflight(&err)) return ConfigFail(err);

  std::printf("ratchet: loop %s, branch ratchet/%s, %s %s, proposer %s\n", paths.dir.c_str(),
              config.tag.c_str(), config.goal == Goal::kMin ? "minimising" : "maximising",
              config.metric_name.c_str(), config.propose_kind.c_str());
  std::fflush(stdout);
  InstallSignalHandlers();
  StopSummary summary;
  if (!engine.Run(&summary, &err)) {
    if (notifier) {
      notifier->OnStop("error: " + err);
      notifier->Close();
    }
    return Fail(err);
  }
  if (notifier) notifier->Close();  // waits at most [notify] timeout
  PrintSummary(summary, config);
  return g_interrupts > 0 ? kExitInterrupted : ExitFor(summary.kind);
}

}  // namespace

void AddRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run the loop in DIR: the baseline first, then experiments until a stop rule fires. "
      "Resumes a loop that has a ledger. Ctrl-C once stops after the experiments in flight; "
      "twice kills their steps and stops. Exit status: 0 stop.target reached, 1 engine error "
      "(git, ledger), 2 configuration error or refused start, 3 another stop rule "
      "(max_experiments, wall, patience, cost, tokens), 4 the baseline failed, 5 circuit "
      "breaker (or the loop cannot usefully go on), 130 interrupted.");
  cmd->add_option("dir", options->dir, "The loop directory (a git repository with ratchet.toml)")
      ->required();
  cmd->add_option("--max-experiments", options->max_experiments,
                  "Override stop.max_experiments (counts all experiments, baseline included)")
      ->check(CLI::PositiveNumber);
  cmd->add_option_function<double>(
      "--target",
      [options](double v) {
        options->target = v;
        options->target_set = true;
      },
      "Override stop.target");
  cmd->add_flag("--if-idle", options->if_idle,
                "Exit 0 quietly when the loop is running already (for `ratchet schedule`)");
  cmd->add_option("--until", options->until,
                  "Do not start after TIME (\"YYYY-MM-DD HH:MM\", @UNIX_SECONDS); set by "
                  "`ratchet schedule --until`");
  cmd->add_option("--schedule-name", options->schedule_name,
                  "The schedule to remove once past --until (set by `ratchet schedule`)");
  cmd->callback([options] { ExitCode() = Run(*options); });
}

}  // namespace ratchet
