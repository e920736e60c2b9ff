#include "core/proposal_pool.h"

namespace ratchet {

ProposalPool::ProposalPool(Proposer* proposer, StepRunner* wake, Clock* clock)
    : proposer_(proposer), wake_(wake), clock_(clock) {}

ProposalPool::~ProposalPool() { JoinAll(); }

void ProposalPool::Start(int experiment_id, ProposalRequest request,
                         std::vector<Experiment> history, std::vector<Experiment> in_flight,
                         bool threaded) {
  auto job = std::make_unique<Job>();
  job->experiment_id = experiment_id;
  job->history = std::move(history);
  job->in_flight = std::move(in_flight);
  job->request = std::move(request);
  const int incumbent = job->request.incumbent ? job->request.incumbent->id : 0;
  job->request.history = &job->history;
  job->request.in_flight = &job->in_flight;
  job->request.incumbent = nullptr;
  for (const Experiment& e : job->history)
    if (e.id == incumbent) job->request.incumbent = &e;
  if (!threaded) {
    Run(job.get());
    return;
  }
  Job* raw = job.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++running_;
    jobs_.push_back(std::move(job));
  }
  raw->thread = std::thread([this, raw] { Run(raw); });
}

void ProposalPool::Run(Job* job) {
  const double t0 = clock_->MonotonicSeconds();
  Proposal proposal = proposer_->Propose(job->request);
  Done done{job->experiment_id, std::move(proposal), clock_->MonotonicSeconds() - t0};
  bool threaded = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_.push_back(std::move(done));
    for (const auto& j : jobs_) threaded = threaded || j.get() == job;
    if (threaded) --running_;
  }
  if (threaded && wake_) wake_->Wake();
}

std::vector<ProposalPool::Done> ProposalPool::TakeFinished() {
  std::vector<Done> out;
  std::vector<std::unique_ptr<Job>> finished_jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out.swap(finished_);
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      bool over = false;
      for (const Done& d : out) over = over || d.experiment_id == (*it)->experiment_id;
      if (over) {
        finished_jobs.push_back(std::move(*it));
        it = jobs_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& job : finished_jobs)
    if (job->thread.joinable()) job->thread.join();
  return out;
}

size_t ProposalPool::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

void ProposalPool::JoinAll() {
  std::list<std::unique_ptr<Job>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs.swap(jobs_);
  }
  for (auto& job : jobs)
    if (job->thread.joinable()) job->thread.join();
}

}  // namespace ratchet
