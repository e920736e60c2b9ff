// exec_bench [N]: runs /bin/true N times (default 500) each way, in two
// phases; within a phase the ways alternate, so that a busy machine slows
// them alike:
//   phase 1: spawn, runner, runner-nocg, sandbox, sandbox-nocg
//   phase 2: spawn, forked
// where
//   spawn         posix_spawn + waitpid: the floor for starting any process
//   runner        LocalProcessRunner::Run, as ratchet uses it for a trusted
//                 step: the supervisor sharing ratchet's memory, a cgroup per
//                 step where the machine allows (cgroup2 folder, the command
//                 joining it before exec, cpu.stat, rmdir)
//   runner-nocg   the same without the cgroup
//   sandbox       an untrusted step: the same, inside the sandbox (bwrap:
//                 user, pid, mount, ipc, uts, net namespaces, the view built
//                 from nothing), with its cgroup
//   sandbox-nocg  the sandbox without the cgroup (pid-namespace containment)
//   forked        runner with the supervisor started by fork() (the fallback)
// Forked gets a phase of its own because each fork leaves this process's
// pages copy-on-write, and the faults would be charged to whatever runs next.
// Prints, per way, the median and 90th percentile wall time, the CPU time per
// run (this process and its children), both as ratios to spawn, and the
// sandbox's cost as ratios to the runner.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "exec/cgroup.h"
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
  int n = argc > 1 ? std::atoi(argv[1]) : 500;
  ratchet::RunSpec plain, boxed;
  plain.argv = boxed.argv = {"/bin/true"};
  boxed.sandbox.enabled = true;
  ratchet::LocalProcessRunner runner, runner_nocg(ratchet::LocalRunnerOptions{.cgroups = false}),
      forked(ratchet::LocalRunnerOptions{.share_memory = false});
  std::string why;
  if (!runner.SandboxAvailable(&why)) {
    std::fprintf(stderr, "exec_bench: no sandbox here: %s\n", why.c_str());
    return 1;
  }
  const ratchet::CgroupPlaces& places = ratchet::ProbeCgroupPlaces();
  std::printf("cgroup: %s\n", places.v2.empty() ? ("none: " + places.why_not_v2).c_str()
                                                 : places.v2.c_str());
  char* true_argv[] = {const_cast<char*>("/bin/true"), nullptr};
  auto check = [](const ratchet::RunResult& r, const char* containment) {
    if (!r.ok()) std::fprintf(stderr, "%s: %s\n", r.Describe().c_str(), r.tail.c_str());
    return r.ok() && r.containment == containment;
  };
  bool cg = !places.v2.empty();
  std::vector<Way> ways = {
      {"spawn",
       [&] {
         pid_t pid;
         if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, true_argv, environ) != 0)
           return false;
         int status;
         return waitpid(pid, &status, 0) == pid && status == 0;
       }},
      {"runner", [&] { return check(runner.Run(plain), cg ? "cgroup" : "supervisor"); }},
      {"runner-nocg", [&] { return check(runner_nocg.Run(plain), "supervisor"); }},
      {"sandbox", [&] { return check(runner.Run(boxed), cg ? "cgroup" : "pid namespace"); }},
      {"sandbox-nocg", [&] { return check(runner_nocg.Run(boxed), "pid namespace"); }},
      {"forked", [&] { return check(forked.Run(plain), cg ? "cgroup" : "supervisor"); }},
  };
  std::vector<std::vector<size_t>> phases = {{0, 1, 2, 3, 4}, {0, 5}};
  std::printf("/bin/true x %d each way, alternating within a phase\n", n);
  std::printf("%-16s %10s %10s %12s %13s %10s\n", "phase: way", "median ms", "p90 ms", "CPU ms/run",
              "median/spawn", "CPU/spawn");
  for (size_t phase = 0; phase < phases.size(); ++phase) {
    for (size_t i : phases[phase]) ways[i].wall_ms.clear(), ways[i].cpu_s = 0;
    for (int k = 0; k < n; ++k) {
      for (size_t i : phases[phase]) {
        Way& w = ways[i];
        double c0 = CpuSeconds();
        auto t0 = Clock::now();
        if (!w.run()) {
          std::fprintf(stderr, "%s: /bin/true failed\n", w.name.c_str());
          return 1;
        }
        w.wall_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        w.cpu_s += CpuSeconds() - c0;
      }
    }
    double spawn_median = Quantile(ways[0].wall_ms, 0.5), spawn_cpu = ways[0].cpu_s;
    for (size_t i : phases[phase]) {
      Way& w = ways[i];
      std::string label = std::to_string(phase + 1) + ": " + w.name;
      std::printf("%-16s %10.3f %10.3f %12.3f %13.2f %10.2f\n", label.c_str(),
                  Quantile(w.wall_ms, 0.5), Quantile(w.wall_ms, 0.9), w.cpu_s / n * 1e3,
                  Quantile(w.wall_ms, 0.5) / spawn_median, w.cpu_s / spawn_cpu);
    }
  }
  auto ratio = [&](size_t a, size_t b) {
    std::printf("%-28s median %5.2fx  CPU %5.2fx  (+%.3f ms median, +%.3f ms CPU)\n",
                (ways[a].name + " / " + ways[b].name).c_str(),
                Quantile(ways[a].wall_ms, 0.5) / Quantile(ways[b].wall_ms, 0.5),
                ways[a].cpu_s / ways[b].cpu_s,
                Quantile(ways[a].wall_ms, 0.5) - Quantile(ways[b].wall_ms, 0.5),
                (ways[a].cpu_s - ways[b].cpu_s) / n * 1e3);
  };
  ratio(3, 1);  // the sandbox's cost
  ratio(1, 2);  // the cgroup's cost
  ratio(4, 2);  // the sandbox without cgroups
  return 0;
}
