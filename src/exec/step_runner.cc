#include "exec/step_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <vector>

#include "exec/block_sigpipe.h"
#include "exec/sandbox_probe.h"
#include "exec/step.h"

namespace ratchet {

using Clock = std::chrono::steady_clock;

LocalStepRunner::LocalStepRunner(LocalRunnerOptions options)
    : options_(std::move(options)), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

LocalStepRunner::~LocalStepRunner() {
  ScopedBlockSigpipe no_sigpipe;
  // Kill them all first, then wait for each: they die side by side.
  for (auto& [id, step] : steps_) step->KillNow();
  steps_.clear();
}

bool LocalStepRunner::SandboxAvailable(std::string* why) {
  const SandboxProbe& probe = ProbeSandbox(options_.bwrap);
  if (why) *why = probe.why;
  return probe.works;
}

StepRunner::StepId LocalStepRunner::Start(const RunSpec& spec) {
  StepContext context;
  context.share_memory = options_.share_memory;
  context.cgroups = options_.cgroups;
  if (spec.sandbox.enabled) {
    const SandboxProbe& probe = ProbeSandbox(options_.bwrap);
    if (probe.works) {
      context.sandbox = &probe.host;
    } else {
      context.sandbox_why = probe.why;
    }
  } else if (!spec.readonly_paths.empty() && ProbeLegacySandbox(options_.bwrap).works) {
    context.legacy_bwrap = options_.bwrap;
  }
  StepId id = next_id_++;
  auto step = std::make_unique<Step>(spec, context);
  if (step->Start()) {
    steps_.emplace(id, std::move(step));
  } else {
    finished_.emplace_back(id, step->result());
  }
  return id;
}

namespace {

// A pipe whose ends are far above the descriptors a step is given (0-2 and
// 3 + 2k), so that wiring one never overwrites another; both close on exec.
bool HighPipe(UniqueFd* read_end, UniqueFd* write_end) {
  constexpr int kAbove = 64;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end->Reset(fcntl(fds[0], F_DUPFD_CLOEXEC, kAbove));
  write_end->Reset(fcntl(fds[1], F_DUPFD_CLOEXEC, kAbove));
  close(fds[0]);
  close(fds[1]);
  return read_end->valid() && write_end->valid();
}

}  // namespace

void LocalStepRunner::StartConnected(const RunSpec& verifier, const std::vector<RunSpec>& servers,
                                     StepId* verifier_id, std::vector<StepId>* server_ids) {
  RunSpec v = verifier;
  std::vector<RunSpec> s = servers;
  // Held until every process is started: each has its own copies by then,
  // and a side sees EOF once its partner is gone.
  std::vector<UniqueFd> ends;
  for (size_t k = 0; k < s.size(); ++k) {
    UniqueFd to_r, to_w, from_r, from_w;
    if (!HighPipe(&to_r, &to_w) || !HighPipe(&from_r, &from_w)) continue;  // EOF for both
    const int base = 3 + 2 * static_cast<int>(k);
    v.fds.push_back({base, to_w.get()});
    v.fds.push_back({base + 1, from_r.get()});
    s[k].fds.push_back({0, to_r.get()});
    s[k].fds.push_back({1, from_w.get()});
    for (UniqueFd* fd : {&to_r, &to_w, &from_r, &from_w}) ends.push_back(std::move(*fd));
  }
  *verifier_id = Start(v);
  server_ids->clear();
  for (const RunSpec& spec : s) server_ids->push_back(Start(spec));
}

Clock::time_point LocalStepRunner::TickAll() {
  // A snapshot: on_line callbacks (called from Tick) may start steps.
  std::vector<std::pair<StepId, Step*>> steps;
  for (auto& [id, step] : steps_) steps.emplace_back(id, step.get());
  auto next = Clock::time_point::max();
  auto now = Clock::now();
  for (auto& [id, step] : steps) {
    next = std::min(next, step->Tick(now));
    if (step->done()) {
      finished_.emplace_back(id, step->result());
      steps_.erase(id);
    }
  }
  return next;
}

bool LocalStepRunner::Wait(double max_wait_s, StepId* id, RunResult* result) {
  ScopedBlockSigpipe no_sigpipe;
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(std::max(0.0, max_wait_s)));
  bool woken = false, polled = false;
  std::vector<pollfd> fds;
  std::vector<Step*> polled_steps;
  for (;;) {
    auto next = TickAll();
    if (!finished_.empty()) {
      *id = finished_.front().first;
      *result = std::move(finished_.front().second);
      finished_.pop_front();
      return true;
    }
    if (woken || steps_.empty()) return false;
    auto now = Clock::now();
    if (polled && now >= until) return false;
    next = std::min(next, until);
    int timeout_ms = 0;
    if (next > now) {
      timeout_ms = static_cast<int>(std::min<double>(
          std::ceil(std::chrono::duration<double, std::milli>(next - now).count()), 1 << 30));
    }
    fds.clear();
    polled_steps.clear();
    fds.push_back({wake_.get(), POLLIN, 0});
    for (auto& [sid, step] : steps_) {
      step->AddPollFds(&fds);
      polled_steps.push_back(step.get());
    }
    int r = poll(fds.data(), fds.size(), timeout_ms);
    polled = true;
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;  // cannot happen with valid descriptors; the caller waits again
    }
    if (fds[0].revents) {
      uint64_t count;
      while (read(wake_.get(), &count, sizeof count) > 0) {
      }
      woken = true;
    }
    for (Step* step : polled_steps) step->HandleEvents(fds);
  }
}

void LocalStepRunner::Cancel(StepId id) {
  auto it = steps_.find(id);
  if (it != steps_.end()) it->second->Cancel();
}

void LocalStepRunner::Wake() {
  uint64_t one = 1;
  // EAGAIN: the counter is already huge, a wake-up is pending anyway.
  while (write(wake_.get(), &one, sizeof one) < 0 && errno == EINTR) {
  }
}

size_t LocalStepRunner::Running() const { return steps_.size() + finished_.size(); }

}  // namespace ratchet
