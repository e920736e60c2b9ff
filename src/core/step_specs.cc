#include "core/step_specs.h"

#include <cmath>
#include <cstdio>

namespace ratchet {
namespace {

std::string BudgetText(double seconds) {
  char buf[32];
  if (seconds == std::floor(seconds)) std::snprintf(buf, sizeof buf, "%.0f", seconds);
  else std::snprintf(buf, sizeof buf, "%.3f", seconds);
  return buf;
}

// ~/x with the user's real home; other paths as they are.
std::string Expand(const std::string& path, const std::string& home) {
  if (path.rfind("~/", 0) == 0) return home + path.substr(1);
  if (path == "~") return home;
  return path;
}

void AddExtraMounts(const LoopConfig& config, const SandboxPlan& plan, SandboxSpec* s) {
  for (const std::string& p : config.sandbox.readable)
    s->mounts.push_back({Expand(p, plan.home), "", Mount::Kind::kReadOnly, true});
  for (const std::string& p : config.sandbox.writable)
    s->mounts.push_back({Expand(p, plan.home), "", Mount::Kind::kWritable, true});
}

// The working copy writable, its protected files read-only on top.
// The loop directory and the user's home are hidden first, so that neither
// shows through a system folder the sandbox binds whole (a loop under /opt
// or /usr/local, a home under /opt): its data, .git, the ledger and the
// ledger's key stay out of sight. What is bound after this shows on top.
void HideHost(const std::string& loop, const std::string& home, SandboxSpec* s) {
  for (const std::string& path : {home, loop})
    if (!path.empty() && path != "/") s->mounts.push_back({"", path, Mount::Kind::kHidden, false});
}

void AddCopy(const ExperimentPaths& paths, const SandboxPlan& plan, Mount::Kind kind,
             SandboxSpec* s) {
  HideHost(paths.loop, plan.home, s);
  s->mounts.push_back({paths.copy, "", kind, false});
  if (kind != Mount::Kind::kWritable) return;
  for (const std::string& rel : plan.protected_paths)
    s->mounts.push_back({paths.copy + "/" + rel, "", Mount::Kind::kReadOnly, true});
}

}  // namespace

uint64_t RunSeed(uint64_t loop_seed, int attempt) {
  return attempt <= 1 ? loop_seed : loop_seed + 1000003ull * static_cast<uint64_t>(attempt - 1);
}

std::string ExperimentPaths::Artifacts(int attempt) const {
  if (attempt == 0) return run_dir + "/preflight";
  return run_dir + (attempt == 1 ? "/out" : "/out-" + std::to_string(attempt));
}

std::string ExperimentPaths::Home(const std::string& step) const {
  return run_dir + "/home/" + step;
}

std::string ExperimentPaths::Log(const std::string& step) const {
  return run_dir + "/" + step + ".log";
}

ExperimentPaths PathsOf(const std::string& loop, int experiment_id) {
  ExperimentPaths p;
  p.loop = loop;
  p.copy = loop + "/.ratchet/work/" + std::to_string(experiment_id);
  p.run_dir = loop + "/.ratchet/runs/" + std::to_string(experiment_id);
  return p;
}

std::vector<std::pair<std::string, std::string>> StepEnv(const LoopConfig& config,
                                                         const Experiment& exp,
                                                         const ExperimentPaths& paths,
                                                         const StepRequest& step) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"RATCHET_BUDGET_SECONDS", BudgetText(step.budget_s >= 0 ? step.budget_s : config.budget_s)},
      {"RATCHET_EXPERIMENT", std::to_string(exp.id)},
      {"RATCHET_SEED", std::to_string(RunSeed(config.seed, step.attempt))},
      {"RATCHET_ATTEMPT", std::to_string(step.attempt)},
      {"RATCHET_RUN_DIR", paths.Artifacts(step.attempt)},
      // A working copy lives inside the loop's repository: git run there
      // must not find it (without the sandbox it could commit to it).
      {"GIT_CEILING_DIRECTORIES", paths.loop + "/.ratchet/work"},
  };
  if (step.kind == StepKind::kTrusted) {
    env.push_back({"RATCHET_VERIFY_SPLIT", step.split});
    env.push_back({"RATCHET_SERVE_WRITE_FD", "3"});
    env.push_back({"RATCHET_SERVE_READ_FD", "4"});
    if (step.servers > 1) {
      env.push_back({"RATCHET_PROBE_WRITE_FD", "5"});
      env.push_back({"RATCHET_PROBE_READ_FD", "6"});
    }
  }
  if (!config.slots.empty()) {
    const SlotConfig& slot = config.slots[static_cast<size_t>(step.worker) % config.slots.size()];
    env.push_back({"RATCHET_SLOT", slot.name});
    env.insert(env.end(), slot.env.begin(), slot.env.end());
  } else {
    env.push_back({"RATCHET_SLOT", std::to_string(step.worker)});
  }
  env.insert(env.end(), config.env.begin(), config.env.end());
  return env;
}

SandboxSpec FolderSandbox(const LoopConfig& config, const std::string& loop,
                          const std::string& user_home, const std::string& dir, Mount::Kind kind) {
  SandboxSpec s;
  s.enabled = true;
  HideHost(loop, user_home, &s);
  s.mounts.push_back({dir, "", kind, false});
  if (dir == loop)
    for (const char* own : {"/.git", "/.ratchet"})
      s.mounts.push_back({"", loop + own, Mount::Kind::kHidden, false});
  SandboxPlan plan;
  plan.home = user_home;
  AddExtraMounts(config, plan, &s);
  return s;
}

SandboxSpec ProposerSandbox(const LoopConfig& config, const ExperimentPaths& paths,
                            const SandboxPlan& plan) {
  SandboxSpec s;
  s.enabled = plan.use;
  s.home = paths.Home("propose");
  s.network = false;  // a proposer that needs it (an agent CLI) turns it on for itself
  SandboxPlan copy_only;  // the proposer's edits are checked for scope afterwards
  copy_only.home = plan.home;
  AddCopy(paths, copy_only, Mount::Kind::kWritable, &s);
  // What ratchet wrote for the proposer (history, prompt) is in the run folder.
  s.mounts.push_back({paths.run_dir, "", Mount::Kind::kReadOnly, false});
  AddExtraMounts(config, plan, &s);
  return s;
}

RunSpec StepSpec(const LoopConfig& config, const Experiment& exp, const ExperimentPaths& paths,
                 const StepRequest& step, const SandboxPlan& plan) {
  RunSpec spec;
  spec.argv = ShellCommand(step.command);
  spec.env = StepEnv(config, exp, paths, step);
  spec.timeout_s = step.timeout_s;
  spec.grace_s = config.grace_s;
  spec.log_path = paths.Log(step.name);
  spec.log_limit_bytes = config.log_limit_bytes;
  const std::string artifacts = paths.Artifacts(step.attempt);
  // The candidate's code has no use for the user's credentials.
  spec.drop_secret_env = step.kind == StepKind::kBuild || step.kind == StepKind::kGate ||
                         step.kind == StepKind::kRun || step.kind == StepKind::kServe;

  // Build, gates and runs are what a cluster is for; the verifier and the
  // model servers are connected to each other by pipes, so stay here.
  spec.batch = config.executor.slurm() && (step.kind == StepKind::kBuild ||
                                           step.kind == StepKind::kGate ||
                                           step.kind == StepKind::kRun);
  if (spec.batch && !config.slots.empty())
    spec.batch_options =
        config.slots[static_cast<size_t>(step.worker) % config.slots.size()].sbatch;

  SandboxSpec& s = spec.sandbox;
  s.enabled = plan.use;
  s.home = paths.Home(step.name);
  switch (step.kind) {
    case StepKind::kPropose:
    case StepKind::kBuild:
    case StepKind::kGate:
    case StepKind::kRun:
      spec.cwd = paths.copy;
      s.network = config.sandbox.network;
      AddCopy(paths, plan, Mount::Kind::kWritable, &s);
      for (const std::string& rel : config.sees)
        s.mounts.push_back({paths.loop + "/" + rel, paths.copy + "/" + rel,
                            Mount::Kind::kReadOnly, true});
      if (step.kind == StepKind::kRun)
        s.mounts.push_back({artifacts, "", Mount::Kind::kWritable, false});
      AddExtraMounts(config, plan, &s);
      spec.limits = {config.memory_bytes, config.max_pids, config.disk_bytes};
      break;
    case StepKind::kServe:
      spec.cwd = paths.copy;
      spec.log_path = paths.Log(step.name);
      AddCopy(paths, plan, Mount::Kind::kReadOnly, &s);
      // Optional: a gate's partner runs before any run has saved anything.
      s.mounts.push_back({artifacts, "", Mount::Kind::kReadOnly, true});
      AddExtraMounts(config, plan, &s);
      spec.limits = {config.memory_bytes, config.max_pids, config.disk_bytes};
      break;
    case StepKind::kTrusted:
      spec.cwd = paths.loop;
      s.mounts.push_back({paths.loop, "", Mount::Kind::kReadOnly, false});
      s.mounts.push_back({"", paths.loop + "/.git", Mount::Kind::kHidden, false});
      s.mounts.push_back({"", paths.loop + "/.ratchet", Mount::Kind::kHidden, false});
      s.mounts.push_back({artifacts, "", Mount::Kind::kReadOnly, true});  // none before a run
      AddExtraMounts(config, plan, &s);
      spec.tail_bytes = 1 << 20;  // the summary is the score: keep all of it
      break;
  }
  return spec;
}

}  // namespace ratchet
