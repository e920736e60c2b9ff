// exec_bench [N]: runs /bin/true N times (default 1000) each way, in two
// phases; within a phase the ways alternate, so that a busy machine slows
// them alike:
//   phase 1: spawn vs runner
//   phase 2: spawn vs forked
// where
//   spawn   posix_spawn + waitpid: the floor for starting any process
//   runner  LocalProcessRunner::Run, as ratchet uses it (the supervisor
//           shares ratchet's memory): process group, pipes, pidfd, the
//           supervisor's /proc sweep for leftovers, rusage
//   forked  the same with the supervisor started by fork() (the fallback)
// Forked gets a phase of its own because each fork leaves this process's
// pages copy-on-write, and the faults would be charged to whatever runs next.
// Prints, per way, the median and 90th percentile wall time, the CPU time per
// run (this process and its children), and both as ratios to spawn.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "exec/local_runner.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

// CPU seconds used so far by this process and its reaped children: less
// sensitive to a busy machine than wall time.
double CpuSeconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    struct rusage ru;
    getrusage(who, &ru);
    total += ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
             ru.ru_stime.tv_usec / 1e6;
  }
  return total;
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1))];
}

struct Way {
  std::string name;
  std::function<bool()> run;
  std::vector<double> wall_ms = {};
  double cpu_s = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  ratchet::RunSpec spec;
  spec.argv = {"/bin/true"};
  ratchet::LocalProcessRunner shared, forked(ratchet::LocalRunnerOptions{.share_memory = false});
  char* true_argv[] = {const_cast<char*>("/bin/true"), nullptr};
  std::vector<Way> ways = {
      {"spawn",
       [&] {
         pid_t pid;
         if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, true_argv, environ) != 0)
           return false;
         int status;
         return waitpid(pid, &status, 0) == pid && status == 0;
       }},
      {"runner", [&] { return shared.Run(spec).ok(); }},
      {"forked", [&] { return forked.Run(spec).ok(); }},
  };
  std::printf("/bin/true x %d each way, alternating within a phase\n", n);
  std::printf("%-16s %10s %10s %12s %13s %10s\n", "phase: way", "median ms", "p90 ms", "CPU ms/run",
              "median/spawn", "CPU/spawn");
  for (int phase = 1; phase <= 2; ++phase) {
    std::vector<Way*> in_phase = {&ways[0], &ways[phase]};
    ways[0].wall_ms.clear();  // each phase measures its own spawn
    ways[0].cpu_s = 0;
    for (int i = 0; i < n; ++i) {
      for (Way* w : in_phase) {
        double c0 = CpuSeconds();
        auto t0 = Clock::now();
        if (!w->run()) {
          std::fprintf(stderr, "%s: /bin/true failed\n", w->name.c_str());
          return 1;
        }
        w->wall_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        w->cpu_s += CpuSeconds() - c0;
      }
    }
    double spawn_median = Quantile(ways[0].wall_ms, 0.5), spawn_cpu = ways[0].cpu_s;
    for (Way* w : in_phase) {
      double median = Quantile(w->wall_ms, 0.5);
      std::string label = std::to_string(phase) + ": " + w->name;
      std::printf("%-16s %10.3f %10.3f %12.3f %13.2f %10.2f\n", label.c_str(), median,
                  Quantile(w->wall_ms, 0.9), w->cpu_s / n * 1e3, median / spawn_median,
                  w->cpu_s / spawn_cpu);
    }
  }
  return 0;
}
