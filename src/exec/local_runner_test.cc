// LocalProcessRunner with real processes: starting, exit statuses, the
// environment, output capture, stdin, resources, the sandbox. The hostile
// cases (timeouts, escapes, endless output) are in hostile_runs_test.cc.
#include "exec/local_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "exec/cgroup.h"
#include "exec/supervisor_process.h"
#include "exec/system_clock.h"
#include "exec/test_util.h"

extern char** environ;

namespace ratchet {
namespace {

using testing::OwnChildren;
using testing::ReadFile;
using testing::TempDir;
using testing::TestChild;
using End = RunResult::End;

RunSpec Shell(const std::string& line) {
  RunSpec spec;
  spec.argv = ShellCommand(line);
  spec.timeout_s = 20;  // a safety net: no test here should come near it
  return spec;
}

RunResult RunIt(const RunSpec& spec) {
  LocalProcessRunner runner;
  RunResult r = runner.Run(spec);
  EXPECT_TRUE(OwnChildren().empty()) << "a process of the run is still our child";
  return r;
}

TEST(SystemClockTest, TicksForward) {
  Clock* clock = SystemClock();
  double a = clock->MonotonicSeconds();
  double b = clock->MonotonicSeconds();
  EXPECT_LE(a, b);
  EXPECT_GT(clock->WallSeconds(), 1.6e9);  // after 2020
}

TEST(LocalRunnerTest, ExitCodes) {
  RunResult ok = RunIt(Shell("exit 0"));
  EXPECT_EQ(ok.end, End::kExited);
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.Describe(), "exit 0");

  RunResult three = RunIt(Shell("exit 3"));
  EXPECT_EQ(three.end, End::kExited);
  EXPECT_EQ(three.exit_code, 3);
  EXPECT_FALSE(three.ok());
  EXPECT_EQ(three.Describe(), "exit 3");
}

TEST(LocalRunnerTest, WorksWhenRatchetIgnoresSigchld) {
  // With SIGCHLD ignored the kernel reaps children on its own; the
  // supervisor must still see the command's exit status.
  struct sigaction ign = {}, old;
  ign.sa_handler = SIG_IGN;
  sigaction(SIGCHLD, &ign, &old);
  for (bool share : {true, false}) {
    RunResult r =
        LocalProcessRunner(LocalRunnerOptions{.share_memory = share}).Run(Shell("exit 5"));
    EXPECT_EQ(r.end, End::kExited) << r.Describe() << r.error;
    EXPECT_EQ(r.exit_code, 5);
  }
  sigaction(SIGCHLD, &old, nullptr);
  EXPECT_TRUE(OwnChildren().empty());
}

TEST(LocalRunnerTest, SignalsRatchetIgnoresAreNotIgnoredByTheRun) {
  // Ignored signals survive execve; a run that inherited an ignored SIGTERM
  // could only be stopped by SIGKILL.
  struct sigaction ign = {}, old_term, old_usr2;
  ign.sa_handler = SIG_IGN;
  sigaction(SIGTERM, &ign, &old_term);
  sigaction(SIGUSR2, &ign, &old_usr2);
  RunResult r = RunIt(Shell("grep SigIgn /proc/self/status"));
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGUSR2, &old_usr2, nullptr);
  EXPECT_EQ(r.tail, "SigIgn:\t0000000000000000\n");
}

TEST(LocalRunnerTest, DeathBySignal) {
  RunResult r = RunIt(Shell("kill -USR1 $$"));
  EXPECT_EQ(r.end, End::kSignaled);
  EXPECT_EQ(r.signal, SIGUSR1);
  EXPECT_NE(r.Describe().find("signal 10"), std::string::npos) << r.Describe();
}

TEST(LocalRunnerTest, MissingProgram) {
  RunSpec spec;
  spec.argv = {"ratchet-no-such-program", "x"};
  RunResult r = RunIt(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_EQ(r.error, "cannot run 'ratchet-no-such-program': No such file or directory");
  EXPECT_EQ(r.Describe(),
            "failed to start: cannot run 'ratchet-no-such-program': No such file or directory");

  spec.argv = {"/nonexistent/dir/prog"};
  r = RunIt(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_EQ(r.error, "cannot run '/nonexistent/dir/prog': No such file or directory");
}

TEST(LocalRunnerTest, NotExecutableAndBadFormat) {
  TempDir dir;
  testing::WriteFile(dir.File("plain"), "hello\n");
  RunSpec spec;
  spec.argv = {dir.File("plain")};
  RunResult r = RunIt(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_NE(r.error.find("Permission denied"), std::string::npos) << r.error;

  // Executable but neither a binary nor a script: only execve, in the child,
  // can tell; the error comes back through the supervisor.
  testing::WriteFile(dir.File("garbage"), std::string("\x01\x02\x03garbage", 10));
  chmod(dir.File("garbage").c_str(), 0755);
  spec.argv = {dir.File("garbage")};
  r = RunIt(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_EQ(r.error, "cannot run '" + dir.File("garbage") + "': Exec format error");
}

TEST(LocalRunnerTest, BadWorkingDirectory) {
  RunSpec spec = Shell("true");
  spec.cwd = "/nonexistent/ratchet-dir";
  RunResult r = RunIt(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_EQ(r.error,
            "cannot run '/bin/sh': working directory '/nonexistent/ratchet-dir': No such file or "
            "directory");
}

TEST(LocalRunnerTest, EnvironmentAndWorkingDirectory) {
  TempDir dir;
  RunSpec spec = Shell("echo \"$RATCHET_TEST_VAR $HOME\"; pwd");
  spec.env = {{"RATCHET_TEST_VAR", "hello"}, {"HOME", "/ratchet-home"}};
  spec.cwd = dir.path();
  RunResult r = RunIt(spec);
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(r.tail, "hello /ratchet-home\n" + dir.path() + "\n");
}

TEST(LocalRunnerTest, ProgramIsLookedUpInTheRunsPath) {
  TempDir dir;
  std::filesystem::create_directory(dir.File("bin"));
  testing::WriteFile(dir.File("bin/ratchet-test-prog"), "#!/bin/sh\necho found \"$@\"\n");
  chmod(dir.File("bin/ratchet-test-prog").c_str(), 0755);
  RunSpec spec;
  spec.argv = {"ratchet-test-prog", "a", "b c"};
  spec.env = {{"PATH", dir.File("bin") + ":/usr/bin:/bin"}};
  RunResult r = RunIt(spec);
  ASSERT_TRUE(r.ok()) << r.Describe() << r.error;
  EXPECT_EQ(r.tail, "found a b c\n");

  // A relative path is taken from the run's working directory.
  spec.argv = {"./bin/ratchet-test-prog"};
  spec.cwd = dir.path();
  r = RunIt(spec);
  ASSERT_TRUE(r.ok()) << r.Describe() << r.error;
  EXPECT_EQ(r.tail, "found\n");
}

TEST(LocalRunnerTest, StdinIsDevNullAndOnlyStdFdsAreInherited) {
  RunResult r = RunIt(Shell("readlink /proc/self/fd/0"));
  EXPECT_EQ(r.tail, "/dev/null\n");

  RunSpec spec;
  spec.argv = {TestChild(), "fds"};
  r = RunIt(spec);
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(r.tail, "0 1 2\n");
}

TEST(LocalRunnerTest, OwnProcessGroupWithStdoutAndStderrTogether) {
  RunSpec spec;
  spec.argv = {TestChild(), "pgid"};
  RunResult r = RunIt(spec);
  ASSERT_TRUE(r.ok()) << r.Describe();
  long pid = 0, pgid = 0, sid = 0;
  ASSERT_EQ(std::sscanf(r.tail.c_str(), "%ld %ld %ld", &pid, &pgid, &sid), 3) << r.tail;
  EXPECT_EQ(pid, pgid);  // leads its own group
  EXPECT_NE(pgid, getpgrp());
  EXPECT_EQ(sid, getsid(0));  // same session: only the group is new

  r = RunIt(Shell("echo out; echo err >&2; echo out2"));
  EXPECT_EQ(r.tail, "out\nerr\nout2\n");
}

TEST(LocalRunnerTest, OutputGoesToLogTailAndLines) {
  TempDir dir;
  RunSpec spec = Shell("echo one; echo; printf 'two\\nthree'");
  spec.log_path = dir.File("run.log");
  std::vector<std::string> lines;
  spec.on_line = [&](std::string_view line) { lines.emplace_back(line); };
  RunResult r = RunIt(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ReadFile(spec.log_path), "one\n\ntwo\nthree");
  EXPECT_EQ(r.tail, "one\n\ntwo\nthree");
  EXPECT_EQ(r.output_bytes, 14u);
  EXPECT_FALSE(r.output_truncated);
  // The last line has no newline; it still arrives, once the output ends.
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "", "two", "three"}));
}

TEST(LocalRunnerTest, LinesArriveWhileTheRunGoesOn) {
  // The command waits for its own first line to have been seen: it only
  // goes on once on_line created a file, so this fails if lines are only
  // delivered at the end.
  TempDir dir;
  std::string flag = dir.File("seen");
  RunSpec spec = Shell("echo first; while [ ! -e " + flag + " ]; do sleep 0.01; done; echo second");
  spec.timeout_s = 10;
  std::vector<std::string> lines;
  spec.on_line = [&](std::string_view line) {
    lines.emplace_back(line);
    if (line == "first") testing::WriteFile(flag, "");
  };
  RunResult r = RunIt(spec);
  EXPECT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(lines, (std::vector<std::string>{"first", "second"}));
}

TEST(LocalRunnerTest, LogPathThatCannotBeOpened) {
  RunSpec spec = Shell("true");
  spec.log_path = "/nonexistent/dir/run.log";
  RunResult r = RunIt(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_NE(r.error.find("cannot open the log '/nonexistent/dir/run.log'"), std::string::npos)
      << r.error;
}

TEST(LocalRunnerTest, StdinDataLargerThanThePipeBuffer) {
  // 4 MiB echoed back by cat: reading output and feeding input must
  // interleave, or both sides block on full pipes.
  std::string data;
  for (int i = 0; data.size() < (4u << 20); ++i) data += "input line " + std::to_string(i) + "\n";
  TempDir dir;
  RunSpec spec;
  spec.argv = {"cat"};
  spec.stdin_data = data;
  spec.log_path = dir.File("run.log");
  spec.timeout_s = 20;
  RunResult r = RunIt(spec);
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(r.output_bytes, data.size());
  EXPECT_TRUE(ReadFile(spec.log_path) == data);

  // A command that never reads its input: no deadlock, no SIGPIPE for us.
  spec.argv = {"true"};
  r = RunIt(spec);
  EXPECT_TRUE(r.ok()) << r.Describe();
  EXPECT_LT(r.wall_s, 5);

  spec = Shell("wc -c");
  spec.stdin_data = std::string(1 << 20, 'x');
  r = RunIt(spec);
  EXPECT_EQ(r.tail, "1048576\n");
}

TEST(LocalRunnerTest, CpuTimeOfTheWholeTree) {
  std::string child = TestChild();
  RunResult r = RunIt(Shell(child + " spin 0.25 & " + child + " spin 0.25 & wait"));
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_GE(r.cpu_s, 0.45);
  EXPECT_LT(r.cpu_s, 5);
}

TEST(LocalRunnerTest, PeakMemoryOfTheWholeTree) {
  // Two processes holding 64 MiB each at the same time: the tree's peak is
  // their sum, which only sampling /proc sees (rusage knows each alone).
  std::string child = TestChild();
  RunResult r = RunIt(Shell(child + " mem 64 0.6 & " + child + " mem 64 0.6 & wait"));
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_GE(r.peak_rss_mb, 120);
  EXPECT_LT(r.peak_rss_mb, 1024);

  // A process too short for any sample: its peak still counts (rusage).
  RunSpec spec;
  spec.argv = {child, "mem", "80", "0"};
  r = RunIt(spec);
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_GE(r.peak_rss_mb, 78);
  EXPECT_LT(r.peak_rss_mb, 1024);
}

TEST(LocalRunnerTest, NoOpReturnsFast) {
  // The end of a no-op is an event (pidfd), not a polling tick: compared
  // with a bare posix_spawn + waitpid, measured alternately so a busy
  // machine slows both.
  if (!SupervisorProcess::CanShareMemory()) GTEST_SKIP() << "timings mean nothing under sanitizers";
  std::vector<double> runs, spawns;
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  for (int i = 0; i < 15; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid;
    ASSERT_EQ(posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ), 0);
    int status;
    waitpid(pid, &status, 0);
    spawns.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    RunSpec spec;
    spec.argv = {"/bin/true"};
    runs.push_back(RunIt(spec).wall_s);
  }
  std::sort(runs.begin(), runs.end());
  std::sort(spawns.begin(), spawns.end());
  EXPECT_LT(runs[runs.size() / 2], 2 * spawns[spawns.size() / 2] + 0.005);
}

TEST(LocalRunnerTest, ContainmentIsACgroupWhereTheMachineAllows) {
  RunSpec spec = Shell("cat /proc/self/cgroup");
  RunResult r = RunIt(spec);
  ASSERT_TRUE(r.ok()) << r.Describe();
  const CgroupPlaces& places = ProbeCgroupPlaces();
  if (places.v2.empty()) {
    EXPECT_EQ(r.containment, "supervisor") << places.why_not_v2;
  } else {
    EXPECT_EQ(r.containment, "cgroup");
    // The command was in its step's cgroup from its first instruction.
    std::string v2_line = r.tail.substr(r.tail.find("0::"));
    EXPECT_NE(v2_line.find("/ratchet-" + std::to_string(getpid()) + "/step-"), std::string::npos)
        << r.tail;
  }
  r = LocalProcessRunner(LocalRunnerOptions{.cgroups = false}).Run(spec);
  EXPECT_EQ(r.containment, "supervisor");
  EXPECT_EQ(r.tail.find("/ratchet-"), std::string::npos) << r.tail;
}

TEST(LocalRunnerTest, AProcessLimitWithoutACgroupIsNotEnforcedAndSaysSo) {
  RunSpec spec = Shell("true");
  spec.limits.pids = 10;
  RunResult r = LocalProcessRunner(LocalRunnerOptions{.cgroups = false}).Run(spec);
  EXPECT_TRUE(r.ok()) << r.Describe();
  EXPECT_FALSE(r.limits_enforced);
  EXPECT_NE(r.error.find("the process limit is not enforced here"), std::string::npos) << r.error;
  // The memory limit falls back to sampling the tree: still enforced.
  spec = Shell(std::string(TestChild()) + " mem 300 10");
  spec.limits.memory_bytes = 32 << 20;
  r = LocalProcessRunner(LocalRunnerOptions{.cgroups = false}).Run(spec);
  EXPECT_EQ(r.end, End::kLimit) << r.Describe();
  EXPECT_EQ(r.limit, RunResult::Limit::kMemory);
  EXPECT_TRUE(r.limits_enforced);
  EXPECT_EQ(r.Describe(), "memory limit exceeded");
  EXPECT_LT(r.wall_s, 8);
}

TEST(LocalRunnerTest, DescriptorsReplaceStdoutAndKeepTheirNumbers) {
  TempDir dir;
  int out = open(dir.File("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);  // no O_CLOEXEC
  int extra = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(out, 0);
  RunSpec spec;
  spec.argv = {TestChild(), "fds"};
  spec.fds = {{1, out}, {7, extra}};
  RunResult r = RunIt(spec);
  close(out);
  close(extra);
  ASSERT_TRUE(r.ok()) << r.Describe() << r.error;
  EXPECT_EQ(r.tail, "");  // stdout went to the file; stderr alone is captured
  // Exactly 0-2 and 7: neither the sources nor anything else leaked.
  EXPECT_EQ(ReadFile(dir.File("out")), "0 1 2 7\n");
}

TEST(LocalRunnerTest, DoesNotWaitForOrKillProcessesItDidNotStart) {
  pid_t mine;
  char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
  ASSERT_EQ(posix_spawnp(&mine, "sleep", nullptr, nullptr, argv, environ), 0);
  // A run that ends at once, and one that leaves a child to be killed.
  LocalProcessRunner runner;
  EXPECT_TRUE(runner.Run(Shell("true")).ok());
  EXPECT_TRUE(runner.Run(Shell("sleep 30 & exit 0")).ok());
  int status;
  EXPECT_EQ(waitpid(mine, &status, WNOHANG), 0) << "our own child was reaped by a run";
  EXPECT_TRUE(testing::Alive(mine));
  kill(mine, SIGKILL);
  EXPECT_EQ(waitpid(mine, &status, 0), mine);
}

TEST(LocalRunnerTest, ConcurrentRunsKeepToThemselves) {
  TempDir dir;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      LocalProcessRunner runner;
      for (int i = 0; i < 5; ++i) {
        std::string pids = dir.File("pids-" + std::to_string(t));
        // Each run leaves an escaped process behind and exits with its own code.
        RunSpec spec = Shell("setsid sleep 30 & echo $! >> " + pids + "; echo run-" +
                             std::to_string(t) + "; exit " + std::to_string(t));
        RunResult r = runner.Run(spec);
        if (r.end != End::kExited || r.exit_code != t ||
            r.tail != "run-" + std::to_string(t) + "\n")
          ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < 4; ++t) {
    auto pids = testing::ReadPids(dir.File("pids-" + std::to_string(t)));
    EXPECT_EQ(pids.size(), 5u);
    EXPECT_EQ(testing::Survivors(pids), "");
  }
  EXPECT_TRUE(OwnChildren().empty());
}

TEST(SandboxTest, ReadonlyPathsUnderBwrapOrAVisibleFallback) {
  TempDir dir;
  std::string guarded = dir.File("guarded.txt"), open_file = dir.File("open.txt");
  testing::WriteFile(guarded, "original\n");
  RunSpec spec = Shell("echo written > " + open_file + "; echo changed > " + guarded);
  spec.readonly_paths = {guarded};

  LocalProcessRunner runner;
  std::string why;
  bool available = runner.SandboxAvailable(&why);
  RunResult r = RunIt(spec);
  EXPECT_EQ(r.sandboxed, available) << why;
  if (available) {
    EXPECT_EQ(r.end, End::kExited);
    EXPECT_NE(r.exit_code, 0);  // the shell could not write the guarded file
    EXPECT_NE(r.tail.find("Read-only file system"), std::string::npos) << r.tail;
    EXPECT_EQ(ReadFile(guarded), "original\n");
    EXPECT_EQ(ReadFile(open_file), "written\n");  // the rest is writable as before
  } else {
    std::printf("bwrap does not work here (%s); tested the fallback only\n", why.c_str());
  }

  // Without bwrap the run goes on unprotected, and says so.
  testing::WriteFile(guarded, "original\n");
  LocalProcessRunner none(LocalRunnerOptions{.bwrap = "/nonexistent/bwrap"});
  EXPECT_FALSE(none.SandboxAvailable(&why));
  EXPECT_NE(why.find("/nonexistent/bwrap"), std::string::npos) << why;
  r = none.Run(spec);
  EXPECT_TRUE(r.ok()) << r.Describe();
  EXPECT_FALSE(r.sandboxed);
  EXPECT_EQ(ReadFile(guarded), "changed\n");

  // No readonly paths: no sandbox needed, none used.
  spec.readonly_paths.clear();
  EXPECT_FALSE(runner.Run(spec).sandboxed);
}

TEST(SandboxTest, SandboxedRunsAreStillFullyControlled) {
  LocalProcessRunner runner;
  std::string why;
  if (!runner.SandboxAvailable(&why)) GTEST_SKIP() << "bwrap does not work here: " << why;
  TempDir dir;
  std::string pids = dir.File("pids");
  RunSpec spec = Shell("setsid sleep 30 & echo $! >> " + pids + "; sleep 30 & echo $! >> " + pids +
                       "; echo ready; exit 4");
  spec.readonly_paths = {dir.File("nothing-here")};  // missing paths are skipped
  RunResult r = RunIt(spec);
  EXPECT_TRUE(r.sandboxed);
  EXPECT_EQ(r.end, End::kExited);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(testing::ReadPids(pids).size(), 2u);
  EXPECT_EQ(testing::Survivors(testing::ReadPids(pids)), "");

  spec = Shell("trap '' TERM; echo ready; sleep 30");
  spec.readonly_paths = {dir.path()};
  spec.timeout_s = 0.2;
  spec.grace_s = 0.2;
  r = RunIt(spec);
  EXPECT_EQ(r.end, End::kTimedOut);
  EXPECT_LT(r.wall_s, 5);
}

}  // namespace
}  // namespace ratchet
