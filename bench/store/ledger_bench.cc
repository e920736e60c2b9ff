// The cost of the ledger writes the engine makes per experiment, at both
// durability levels, interleaved in one run. See README.md.
//
//   ledger_write_bench [experiments=300] [dir=$TMPDIR]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "store/sqlite_ledger.h"

namespace {

using Clock = std::chrono::steady_clock;
using ratchet::SqliteLedger;

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double P99(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() * 99 / 100];
}

ratchet::Experiment Row(int id, ratchet::Phase phase) {
  ratchet::Experiment e;
  e.id = id;
  e.session_id = 1;
  e.phase = phase;
  e.parent_commit = std::string(40, 'a');
  e.candidate_commit = std::string(40, 'b');
  e.proposer = "script";
  e.description = "change the learning rate to 0.04 and the warmup to 200 steps";
  e.metrics = {{"val_bpb", 0.99}, {"training_seconds", 300}, {"peak_vram_mb", 45000}};
  e.metric = 0.99;
  e.files_changed = {"train.py"};
  if (phase == ratchet::Phase::kDone) e.status = ratchet::Status::kDiscard;
  return e;
}

/// One experiment's writes, as the engine makes them: insert, three phase
/// updates, one run, the decision, one event. Each write's latency is pushed.
void OneExperiment(SqliteLedger* ledger, int id, std::vector<double>* us) {
  std::string err;
  auto t = Clock::now();
  auto lap = [&](bool ok) {
    if (!ok) {
      std::fprintf(stderr, "ledger_write_bench: %s\n", err.c_str());
      std::exit(1);
    }
    auto now = Clock::now();
    us->push_back(Us(now - t));
    t = now;
  };
  ratchet::Experiment row = Row(id, ratchet::Phase::kProposing);
  lap(ledger->InsertExperiment(&row, &err));
  lap(ledger->UpdateExperiment(Row(id, ratchet::Phase::kCommitted), &err));
  lap(ledger->UpdateExperiment(Row(id, ratchet::Phase::kRunning), &err));
  ratchet::RunRecord run;
  run.experiment_id = id;
  run.purpose = "main";
  run.metric = 0.99;
  run.metrics = {{"val_bpb", 0.99}};
  lap(ledger->AddRun(run, &err));
  lap(ledger->UpdateExperiment(Row(id, ratchet::Phase::kDecided), &err));
  lap(ledger->UpdateExperiment(Row(id, ratchet::Phase::kDone), &err));
  lap(ledger->AddEvent({0, 1.0 * id, id, "decided", "{}"}, &err));
}

}  // namespace

int main(int argc, char** argv) {
  const int experiments = argc > 1 ? std::atoi(argv[1]) : 300;
  const std::string dir = argc > 2 ? argv[2]
                                   : (std::filesystem::temp_directory_path() /
                                      ("ratchet-ledger-bench-" + std::to_string(::getpid())))
                                         .string();
  std::filesystem::create_directories(dir);
  std::unique_ptr<SqliteLedger> normal, full;
  std::string err;
  if (!SqliteLedger::Open(dir + "/normal.db", true, false, &normal).Report(&err) ||
      !SqliteLedger::Open(dir + "/full.db", true, false, &full).Report(&err) ||
      !full->SetDurability(SqliteLedger::Durability::kPowerLoss, &err)) {
    std::fprintf(stderr, "ledger_write_bench: %s\n", err.c_str());
    return 1;
  }
  std::vector<double> normal_us, full_us;
  for (int id = 1; id <= experiments; ++id) {
    OneExperiment(normal.get(), id, &normal_us);
    OneExperiment(full.get(), id, &full_us);
  }
  normal.reset();
  full.reset();
  if (argc <= 2) std::filesystem::remove_all(dir);
  std::printf("%d experiments x 7 writes, ledger in %s\n", experiments, dir.c_str());
  std::printf("synchronous=NORMAL (default)  median %.1f us, p99 %.1f us per write\n",
              Median(normal_us), P99(normal_us));
  std::printf("synchronous=FULL   (fsync)    median %.1f us, p99 %.1f us per write\n",
              Median(full_us), P99(full_us));
  std::printf("ratio FULL / NORMAL: %.1fx\n", Median(full_us) / Median(normal_us));
  return 0;
}
