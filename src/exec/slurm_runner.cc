#include "exec/slurm_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "base/durable_file.h"
#include "base/read_file.h"
#include "exec/local_runner.h"
#include "exec/step_wire.h"

namespace ratchet {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Past timeout + grace, how long a job may still run before this side
// cancels it itself (the node's runner should have ended it by then).
constexpr double kBackstopMargin_s = 10;
// Polls a finished job may go without its result file before it is reported
// from Slurm's state alone (the node writes the file just before it exits;
// a shared file system may show it a moment later).
constexpr int kTerminalPolls = 3;
// Polls a job may be missing from squeue (purged, or the controller is
// restarting) before it is given up.
constexpr int kMissingPolls = 40;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::optional<std::string> Slurp(const std::string& path) {
  std::string content;
  if (!ReadWholeFile(path, &content)) return std::nullopt;
  return content;
}

std::string SingleQuoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// sbatch, squeue and scancel: trusted, short, plain processes.
RunResult Tool(const std::vector<std::string>& argv) {
  LocalRunnerOptions options;
  options.bwrap = "";
  options.cgroups = false;
  LocalProcessRunner runner(options);
  RunSpec spec;
  spec.argv = argv;
  spec.timeout_s = 60;
  spec.grace_s = 2;
  return runner.Run(spec);
}

std::string ToolOutput(const RunResult& r) {
  std::string tail = Trimmed(r.tail);
  if (tail.empty()) tail = r.error;
  return tail.empty() ? r.Describe() : tail;
}

bool Terminal(const std::string& state) {
  static const std::set<std::string> kTerminal = {
      "COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT",   "NODE_FAIL",
      "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY", "REVOKED"};
  return kTerminal.count(state) > 0;
}

// "%i %T" lines: job id and state.
std::map<std::string, std::string> ParseQueue(const std::string& text) {
  std::map<std::string, std::string> states;
  std::istringstream in(text);
  std::string id, state;
  while (in >> id >> state) states[id] = state;
  return states;
}

std::string JoinIds(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

// The state of each job of `ids` that squeue still knows. squeue fails for
// a list whose every job is purged; then every one is missing.
std::map<std::string, std::string> QueueStates(const std::vector<std::string>& ids) {
  RunResult q = Tool({"squeue", "-h", "-t", "all", "-o", "%i %T", "-j", JoinIds(ids)});
  return q.ok() ? ParseQueue(q.tail) : std::map<std::string, std::string>{};
}

}  // namespace

struct SlurmStepRunner::Job {
  RunSpec spec;
  std::string dir;     // state folder of this job
  std::string job_id;  // Slurm's
  Clock::time_point submitted = Clock::now();
  std::optional<Clock::time_point> running_since;
  uint64_t log_offset = 0;
  std::string partial;  // an incomplete last line of the log
  int misses = 0;       // polls without a result where one was due
  bool cancel_requested = false;
  bool backstop = false;  // cancelled here for running past its deadline
};

SlurmStepRunner::SlurmStepRunner(SlurmOptions options, std::unique_ptr<StepRunner> local)
    : options_(std::move(options)), local_(std::move(local)) {
  if (options_.ratchet_exe.empty()) {
    std::error_code ec;
    options_.ratchet_exe = fs::read_symlink("/proc/self/exe", ec).string();
  }
  std::error_code ec;
  fs::create_directories(options_.state_dir, ec);
  FindLeftovers();
}

SlurmStepRunner::~SlurmStepRunner() {
  std::vector<std::string> ids;
  for (auto& [id, job] : jobs_) ids.push_back(job->job_id);
  if (!ids.empty()) {
    std::vector<std::string> argv = {"scancel"};
    argv.insert(argv.end(), ids.begin(), ids.end());
    Tool(argv);
  }
  std::error_code ec;
  for (auto& [id, job] : jobs_) fs::remove_all(job->dir, ec);
}

bool SlurmStepRunner::ClusterReachable(std::string* why) {
  RunResult r = Tool({"squeue", "-h", "-o", "%i"});
  if (r.ok()) return true;
  if (why) *why = "squeue: " + ToolOutput(r);
  return false;
}

void SlurmStepRunner::FindLeftovers() {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(options_.state_dir, ec)) {
    const std::string dir = entry.path().string();
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos)
      next_folder_ = std::max<uint64_t>(next_folder_, std::stoull(name) + 1);
    Leftover left;
    left.dir = dir;
    left.job_id = Trimmed(Slurp(dir + "/job").value_or(""));
    RunSpec spec;
    std::string err;
    auto text = Slurp(dir + "/spec.json");
    // A folder without a job or a readable spec (killed mid-submission) is
    // keyed by its path: never reattached, still cleaned up.
    const std::string key =
        text && RunSpecFromJson(*text, &spec, &err) && !spec.log_path.empty() ? spec.log_path
                                                                               : "folder:" + dir;
    if (!left.job_id.empty()) ids.push_back(left.job_id);
    leftovers_[key] = left;
  }
  if (ids.empty()) return;
  const std::map<std::string, std::string> states = QueueStates(ids);
  for (auto& [key, left] : leftovers_) {
    auto s = states.find(left.job_id);
    left.live = s != states.end() && !Terminal(s->second);
    left.reattachable = key.rfind("folder:", 0) != 0 &&
                        (left.live || fs::exists(left.dir + "/result.json"));
  }
}

bool SlurmStepRunner::CanReattach(const std::string& log_path) const {
  auto it = leftovers_.find(log_path);
  return it != leftovers_.end() && it->second.reattachable;
}

std::vector<std::string> SlurmStepRunner::EndLeftovers() {
  std::vector<std::string> notes;
  std::vector<std::string> ids;
  for (const auto& [key, left] : leftovers_)
    if (!left.job_id.empty()) ids.push_back(left.job_id);
  if (!ids.empty()) {
    std::vector<std::string> argv = {"scancel"};
    argv.insert(argv.end(), ids.begin(), ids.end());
    Tool(argv);
    // Their processes are gone once Slurm says the jobs are over: wait for
    // that, so that no step of the earlier session still holds a slot.
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline) {
      bool live = false;
      for (const auto& [id, state] : QueueStates(ids)) live |= !Terminal(state);
      if (!live) break;
      usleep(200 * 1000);
    }
    for (const auto& [key, left] : leftovers_)
      if (left.live)
        notes.push_back("cancelled slurm job " + left.job_id +
                        ", left running by an earlier session");
  }
  std::error_code ec;
  for (const auto& [key, left] : leftovers_) fs::remove_all(left.dir, ec);
  leftovers_.clear();
  return notes;
}

StepRunner::StepId SlurmStepRunner::Start(const RunSpec& spec) {
  if (!spec.batch) return local_->Start(spec);
  const StepId id = next_id_++;
  auto job = std::make_unique<Job>();
  job->spec = spec;
  if (auto left = leftovers_.find(spec.log_path);
      !spec.log_path.empty() && left != leftovers_.end() && left->second.reattachable) {
    // The earlier session's job of this very step: follow it. Its log so far
    // is replayed to on_line by the first Tail.
    job->dir = left->second.dir;
    job->job_id = left->second.job_id;
    leftovers_.erase(left);
    jobs_[id] = std::move(job);
    next_poll_ = std::min(next_poll_, Clock::now());
    return id;
  }
  job->dir = options_.state_dir + "/" + std::to_string(next_folder_++);
  auto fail = [&](const std::string& why) {
    RunResult r;
    r.end = RunResult::End::kFailedToStart;
    r.error = why;
    finished_.emplace_back(id, r);
    std::error_code ec;
    fs::remove_all(job->dir, ec);
    return id;
  };

  std::error_code ec;
  fs::create_directories(job->dir, ec);
  if (ec) return fail("cannot make " + job->dir + ": " + ec.message());
  std::string err;
  const std::string spec_path = job->dir + "/spec.json";
  const std::string script = job->dir + "/job.sh";
  if (!ReplaceFile(spec_path, RunSpecToJson(spec), &err) ||
      !ReplaceFile(script,
                   "#!/bin/sh\nexec " + SingleQuoted(options_.ratchet_exe) + " exec-step " +
                       SingleQuoted(spec_path) + " " + SingleQuoted(job->dir + "/result.json") +
                       "\n",
                   &err, ReplaceOptions{0755, true}))
    return fail(err);
  // Only what the node writes from now on is this step's output.
  if (!spec.log_path.empty()) fs::remove(spec.log_path, ec);

  std::string name = fs::path(spec.log_path).stem().string();
  std::vector<std::string> argv = {"sbatch", "--parsable",
                                   "--job-name=ratchet-" + (name.empty() ? "step" : name),
                                   "--output=" + job->dir + "/slurm.out"};
  if (spec.timeout_s > 0) {
    const double minutes = std::ceil((spec.timeout_s + spec.grace_s) / 60.0) + 1;
    argv.push_back("--time=" + std::to_string(static_cast<long>(minutes)));
  }
  argv.insert(argv.end(), options_.sbatch.begin(), options_.sbatch.end());
  argv.insert(argv.end(), spec.batch_options.begin(), spec.batch_options.end());
  argv.push_back(script);
  RunResult r = Tool(argv);
  if (!r.ok()) return fail("sbatch: " + ToolOutput(r));
  // --parsable: "<id>" or "<id>;<cluster>".
  job->job_id = Trimmed(r.tail.substr(0, r.tail.find(';')));
  if (job->job_id.empty() ||
      job->job_id.find_first_not_of("0123456789") != std::string::npos)
    return fail("sbatch printed no job id: " + ToolOutput(r));
  if (!ReplaceFile(job->dir + "/job", job->job_id + "\n", &err)) {
    Tool({"scancel", job->job_id});
    return fail(err);
  }
  job->submitted = Clock::now();
  jobs_[id] = std::move(job);
  // Follow the new job from the next Wait on.
  next_poll_ = std::min(next_poll_, Clock::now());
  return id;
}

void SlurmStepRunner::StartConnected(const RunSpec& verifier, const std::vector<RunSpec>& servers,
                                     StepId* verifier_id, std::vector<StepId>* server_ids) {
  // Connected by pipes, so on this machine.
  local_->StartConnected(verifier, servers, verifier_id, server_ids);
}

void SlurmStepRunner::Tail(Job& job) {
  if (job.spec.log_path.empty() || !job.spec.on_line) return;
  std::ifstream in(job.spec.log_path, std::ios::binary);
  if (!in) return;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(std::max<std::streamoff>(0, in.tellg()));
  if (size < job.log_offset) job.log_offset = 0, job.partial.clear();  // rewritten
  if (size == job.log_offset) return;
  const uint64_t n = std::min<uint64_t>(size - job.log_offset, 1 << 20);
  std::string chunk(n, '\0');
  in.seekg(static_cast<std::streamoff>(job.log_offset));
  in.read(chunk.data(), static_cast<std::streamsize>(n));
  chunk.resize(static_cast<size_t>(in.gcount()));
  job.log_offset += chunk.size();
  job.partial += chunk;
  size_t start = 0;
  for (size_t nl; (nl = job.partial.find('\n', start)) != std::string::npos; start = nl + 1)
    job.spec.on_line(std::string_view(job.partial).substr(start, nl - start));
  job.partial.erase(0, start);
}

RunResult SlurmStepRunner::Collect(Job& job, const std::string& state) {
  Tail(job);
  if (!job.partial.empty() && job.spec.on_line) job.spec.on_line(job.partial);
  RunResult r;
  std::string err;
  auto text = Slurp(job.dir + "/result.json");
  if (!text || !RunResultFromJson(*text, &r, &err)) {
    r = RunResult();
    r.wall_s = Since(job.submitted);
    const std::string said = Trimmed(Slurp(job.dir + "/slurm.out").value_or(""));
    const std::string where = said.empty() ? "" : " (" + said.substr(said.size() > 400 ? said.size() - 400 : 0) + ")";
    if (state == "TIMEOUT" || state == "DEADLINE") {
      r.end = RunResult::End::kTimedOut;
      r.error = "slurm ended job " + job.job_id + " at its time limit";
    } else if (state == "OUT_OF_MEMORY") {
      r.end = RunResult::End::kLimit;
      r.limit = RunResult::Limit::kMemory;
      r.error = "slurm ended job " + job.job_id + ": out of memory";
    } else {
      r.end = RunResult::End::kFailedToStart;
      r.error = "slurm job " + job.job_id + " ended " + (state.empty() ? "(gone)" : state) +
                " without a result" + (text ? ": " + err : "") + where;
    }
    if (!job.spec.log_path.empty()) {
      const std::string log = Slurp(job.spec.log_path).value_or("");
      r.tail = log.substr(log.size() > job.spec.tail_bytes ? log.size() - job.spec.tail_bytes : 0);
    }
  }
  if (job.backstop) {
    r.end = RunResult::End::kTimedOut;
    r.error = "slurm job " + job.job_id + " ran past its deadline and was cancelled";
  } else if (job.cancel_requested) {
    r.end = RunResult::End::kCancelled;
  }
  return r;
}

void SlurmStepRunner::Poll() {
  std::vector<std::string> ids;
  std::vector<StepId> polled;
  for (auto& [id, job] : jobs_) {
    ids.push_back(job->job_id);
    polled.push_back(id);
  }
  if (ids.empty()) return;
  const std::map<std::string, std::string> states = QueueStates(ids);
  for (StepId id : polled) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    Job& job = *it->second;
    Tail(job);
    auto s = states.find(job.job_id);
    const std::string state = s == states.end() ? "" : s->second;
    if (state == "RUNNING" && !job.running_since) job.running_since = Clock::now();
    if (job.running_since && job.spec.timeout_s > 0 && !job.backstop &&
        Since(*job.running_since) > job.spec.timeout_s + job.spec.grace_s + kBackstopMargin_s) {
      job.backstop = true;
      Tool({"scancel", job.job_id});
    }
    const bool has_result = fs::exists(job.dir + "/result.json");
    bool over = has_result && (state.empty() || Terminal(state));
    if (!over && (Terminal(state) || state.empty()))
      over = ++job.misses >= (state.empty() ? kMissingPolls : kTerminalPolls);
    if (!over) continue;
    RunResult r = Collect(job, state);
    std::error_code ec;
    fs::remove_all(job.dir, ec);
    finished_.emplace_back(id, r);
    jobs_.erase(id);
  }
}

bool SlurmStepRunner::Wait(double max_wait_s, StepId* id, RunResult* result) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(max_wait_s));
  for (;;) {
    if (!finished_.empty()) {
      *id = finished_.front().first;
      *result = std::move(finished_.front().second);
      finished_.pop_front();
      return true;
    }
    if (!jobs_.empty() && Clock::now() >= next_poll_) {
      next_poll_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(options_.poll_s));
      Poll();
      if (!finished_.empty()) continue;
    }
    if (woken_.exchange(false)) return false;
    auto until = deadline;
    if (!jobs_.empty()) until = std::min(until, next_poll_);
    const double slice = std::max(0.0, std::chrono::duration<double>(until - Clock::now()).count());
    if (local_->Wait(slice, id, result)) return true;
    if (woken_.exchange(false) || Clock::now() >= deadline) return false;
  }
}

void SlurmStepRunner::Cancel(StepId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return local_->Cancel(id);
  Job& job = *it->second;
  if (job.cancel_requested) return;
  job.cancel_requested = true;
  Tool({"scancel", job.job_id});
}

void SlurmStepRunner::Wake() {
  woken_ = true;
  local_->Wake();
}

size_t SlurmStepRunner::Running() const {
  return local_->Running() + jobs_.size() + finished_.size();
}

}  // namespace ratchet
