#include "exec/thread_step_runner.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>

namespace ratchet {
namespace {

// A pipe whose ends are above fd 4 and close on exec (the runner dups them
// into place for the one process that gets them).
bool Pipe(int* read_end, int* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  for (int& fd : fds) {
    if (fd < 5) {
      int moved = fcntl(fd, F_DUPFD_CLOEXEC, 5);
      close(fd);
      fd = moved;
    }
  }
  *read_end = fds[0];
  *write_end = fds[1];
  return fds[0] >= 0 && fds[1] >= 0;
}

}  // namespace

ThreadStepRunner::~ThreadStepRunner() {
  std::list<std::unique_ptr<Step>> steps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& s : steps_) s->cancel = true;
    steps.swap(steps_);
  }
  for (auto& s : steps)
    if (s->thread.joinable()) s->thread.join();
}

StepRunner::StepId ThreadStepRunner::Launch(std::unique_ptr<Step> step) {
  Step* raw = step.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    raw->id = next_++;
    steps_.push_back(std::move(step));
  }
  raw->spec.cancel = &raw->cancel;
  raw->thread = std::thread([this, raw] {
    RunResult result = runner_->Run(raw->spec);
    for (int fd : raw->close_after_start) close(fd);
    std::lock_guard<std::mutex> lock(mu_);
    done_.push_back({raw->id, std::move(result)});
    cv_.notify_all();
  });
  return raw->id;
}

StepRunner::StepId ThreadStepRunner::Start(const RunSpec& spec) {
  auto step = std::make_unique<Step>();
  step->spec = spec;
  return Launch(std::move(step));
}

void ThreadStepRunner::StartConnected(const RunSpec& verifier, const std::vector<RunSpec>& servers,
                                      StepId* verifier_id, std::vector<StepId>* server_ids) {
  auto v = std::make_unique<Step>();
  v->spec = verifier;
  std::vector<std::unique_ptr<Step>> s;
  for (size_t k = 0; k < servers.size(); ++k) {
    int to_server_r = -1, to_server_w = -1, from_server_r = -1, from_server_w = -1;
    auto step = std::make_unique<Step>();
    step->spec = servers[k];
    const int base = 3 + 2 * static_cast<int>(k);
    if (Pipe(&to_server_r, &to_server_w) && Pipe(&from_server_r, &from_server_w)) {
      v->spec.fds.push_back({base, to_server_w});
      v->spec.fds.push_back({base + 1, from_server_r});
      step->spec.fds.push_back({0, to_server_r});
      step->spec.fds.push_back({1, from_server_w});
      // Each side's ends are closed here when that side is over, so the
      // other sees EOF once its partner is gone.
      v->close_after_start.insert(v->close_after_start.end(), {to_server_w, from_server_r});
      step->close_after_start = {to_server_r, from_server_w};
    }
    s.push_back(std::move(step));
  }
  *verifier_id = Launch(std::move(v));
  server_ids->clear();
  for (auto& step : s) server_ids->push_back(Launch(std::move(step)));
}

bool ThreadStepRunner::Wait(double max_wait_s, StepId* id, RunResult* result) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::duration<double>(max_wait_s),
               [this] { return !done_.empty() || woken_; });
  woken_ = false;
  if (done_.empty()) return false;
  *id = done_.front().first;
  *result = std::move(done_.front().second);
  done_.pop_front();
  for (auto it = steps_.begin(); it != steps_.end(); ++it) {
    if ((*it)->id != *id) continue;
    std::unique_ptr<Step> step = std::move(*it);
    steps_.erase(it);
    lock.unlock();
    if (step->thread.joinable()) step->thread.join();
    break;
  }
  return true;
}

void ThreadStepRunner::Cancel(StepId id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : steps_)
    if (s->id == id) s->cancel = true;
}

void ThreadStepRunner::Wake() {
  std::lock_guard<std::mutex> lock(mu_);
  woken_ = true;
  cv_.notify_all();
}

size_t ThreadStepRunner::Running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_.size();
}

}  // namespace ratchet
