// LocalStepRunner with real processes: many steps in flight, each with its
// own deadline; Wait, Wake and Cancel; and two steps wired together through
// pipes the way a trusted verifier talks to a candidate's model server.
#include "exec/step_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "exec/test_util.h"

namespace ratchet {
namespace {

using testing::OwnChildren;
using End = RunResult::End;
using Id = StepRunner::StepId;
using SteadyClock = std::chrono::steady_clock;

RunSpec Shell(const std::string& line, double timeout_s = 20) {
  RunSpec spec;
  spec.argv = ShellCommand(line);
  spec.timeout_s = timeout_s;
  spec.grace_s = 0.2;
  return spec;
}

double Since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

// Waits for every step; returns the results by id, in the order they came.
std::vector<std::pair<Id, RunResult>> WaitAll(LocalStepRunner* runner, double limit_s = 20) {
  std::vector<std::pair<Id, RunResult>> out;
  auto t0 = SteadyClock::now();
  while (runner->Running() > 0 && Since(t0) < limit_s) {
    Id id;
    RunResult r;
    if (runner->Wait(1, &id, &r)) out.emplace_back(id, r);
  }
  return out;
}

TEST(StepRunnerTest, StepsInFlightKeepTheirOwnDeadlines) {
  LocalStepRunner runner;
  auto t0 = SteadyClock::now();
  Id slow = runner.Start(Shell("echo $$; sleep 30", 0.8));
  Id quick = runner.Start(Shell("sleep 0.1; echo quick", 0));
  Id fast_timeout = runner.Start(Shell("sleep 30", 0.3));
  EXPECT_EQ(runner.Running(), 3u);
  auto results = WaitAll(&runner);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].first, quick);
  EXPECT_TRUE(results[0].second.ok());
  EXPECT_EQ(results[0].second.tail, "quick\n");
  EXPECT_EQ(results[1].first, fast_timeout);
  EXPECT_EQ(results[1].second.end, End::kTimedOut);
  EXPECT_EQ(results[2].first, slow);
  EXPECT_EQ(results[2].second.end, End::kTimedOut);
  EXPECT_GE(results[2].second.wall_s, 0.8);
  EXPECT_LT(Since(t0), 3);  // side by side, not one after another
  EXPECT_EQ(runner.Running(), 0u);
  EXPECT_TRUE(OwnChildren().empty());
}

TEST(StepRunnerTest, ManyShortStepsAtOnce) {
  LocalStepRunner runner;
  std::map<Id, int> code;
  for (int i = 0; i < 20; ++i) code[runner.Start(Shell("exit " + std::to_string(i % 7)))] = i % 7;
  auto results = WaitAll(&runner);
  ASSERT_EQ(results.size(), 20u);
  for (auto& [id, r] : results) {
    EXPECT_EQ(r.end, End::kExited) << r.Describe();
    EXPECT_EQ(r.exit_code, code[id]);
  }
  EXPECT_TRUE(OwnChildren().empty());
}

TEST(StepRunnerTest, WaitReturnsOnTimeoutAndWhenNothingRuns) {
  LocalStepRunner runner;
  Id id;
  RunResult r;
  auto t0 = SteadyClock::now();
  EXPECT_FALSE(runner.Wait(5, &id, &r));  // nothing running: at once
  EXPECT_LT(Since(t0), 0.5);
  Id sleeper = runner.Start(Shell("sleep 30"));
  t0 = SteadyClock::now();
  EXPECT_FALSE(runner.Wait(0.1, &id, &r));
  EXPECT_GE(Since(t0), 0.09);
  EXPECT_LT(Since(t0), 2);
  EXPECT_FALSE(runner.Wait(0, &id, &r));
  EXPECT_EQ(runner.Running(), 1u);
  runner.Cancel(sleeper);
  runner.Cancel(12345);  // unknown ids are ignored
  auto results = WaitAll(&runner);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].first, sleeper);
  EXPECT_EQ(results[0].second.end, End::kCancelled);
}

TEST(StepRunnerTest, WakeFromAnotherThreadEndsAWait) {
  LocalStepRunner runner;
  Id sleeper = runner.Start(Shell("sleep 30"));
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    runner.Wake();
  });
  Id id;
  RunResult r;
  auto t0 = SteadyClock::now();
  EXPECT_FALSE(runner.Wait(20, &id, &r));
  EXPECT_LT(Since(t0), 5);
  waker.join();
  // A Wake with no Wait in progress ends the next one at once.
  runner.Wake();
  t0 = SteadyClock::now();
  EXPECT_FALSE(runner.Wait(20, &id, &r));
  EXPECT_LT(Since(t0), 1);
  runner.Cancel(sleeper);
  EXPECT_EQ(WaitAll(&runner).size(), 1u);
}

TEST(StepRunnerTest, AStepThatCannotStartIsReportedByWait) {
  LocalStepRunner runner;
  RunSpec spec;
  spec.argv = {"ratchet-no-such-program"};
  Id bad = runner.Start(spec);
  EXPECT_EQ(runner.Running(), 1u);
  Id id;
  RunResult r;
  ASSERT_TRUE(runner.Wait(0, &id, &r));
  EXPECT_EQ(id, bad);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_EQ(r.error, "cannot run 'ratchet-no-such-program': No such file or directory");
  EXPECT_EQ(runner.Running(), 0u);
}

TEST(StepRunnerTest, OnLineMayCancelAndStart) {
  LocalStepRunner runner;
  Id first = 0, second = 0;
  RunSpec spec = Shell("echo ready; sleep 30");
  spec.on_line = [&](std::string_view line) {
    if (line == "ready" && second == 0) {
      runner.Cancel(first);
      second = runner.Start(Shell("echo started-from-a-callback"));
    }
  };
  first = runner.Start(spec);
  auto results = WaitAll(&runner);
  ASSERT_EQ(results.size(), 2u);
  std::map<Id, RunResult> by_id(results.begin(), results.end());
  EXPECT_EQ(by_id[first].end, End::kCancelled);
  EXPECT_EQ(by_id[second].tail, "started-from-a-callback\n");
}

TEST(StepRunnerTest, DestroyingTheRunnerKillsWhatStillRuns) {
  testing::TempDir dir;
  std::string pids = dir.File("pids");
  {
    LocalStepRunner runner;
    runner.Start(Shell("setsid sleep 30 & echo $! >> " + pids + "; echo $$ >> " + pids + "; wait"));
    ASSERT_TRUE(testing::WaitFor([&] { return testing::ReadPids(pids).size() == 2; }, 10));
  }
  EXPECT_EQ(testing::Survivors(testing::ReadPids(pids)), "");
  EXPECT_TRUE(OwnChildren().empty());
}

// The verifier writes questions on fd 3 and reads answers on fd 4; the
// server answers on stdin/stdout. Two pipes connect them; both steps start
// together, and only the verifier's stderr-and-stdout, and the server's
// stderr, are captured.
void VerifierAndServer(bool sandboxed) {
  int q[2], a[2];
  ASSERT_EQ(pipe2(q, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(a, O_CLOEXEC), 0);
  RunSpec server = Shell("while read line; do echo \"echo:$line\"; done; echo server-done >&2");
  server.fds = {{0, q[0]}, {1, a[1]}};
  RunSpec verifier = Shell(
      "echo hello >&3; echo world >&3; exec 3>&-; read one <&4; read two <&4; "
      "echo \"got $one $two\"; ls /proc/self/fd | sort -n | tr '\\n' ' '");
  verifier.fds = {{3, q[1]}, {4, a[0]}};
  server.sandbox.enabled = verifier.sandbox.enabled = sandboxed;
  LocalStepRunner runner;
  Id s = runner.Start(server);
  Id v = runner.Start(verifier);
  for (int fd : {q[0], q[1], a[0], a[1]}) close(fd);  // the steps hold their own now
  auto results = WaitAll(&runner);
  ASSERT_EQ(results.size(), 2u);
  std::map<Id, RunResult> by_id(results.begin(), results.end());
  const RunResult& vr = by_id[v];
  const RunResult& sr = by_id[s];
  EXPECT_TRUE(vr.ok()) << vr.Describe() << vr.error << vr.tail;
  EXPECT_TRUE(sr.ok()) << sr.Describe() << sr.error << sr.tail;
  EXPECT_EQ(vr.sandboxed, sandboxed);
  // fd 3 was closed by the shell; ls's own descriptor for /proc/self/fd is 3.
  EXPECT_EQ(vr.tail, "got echo:hello echo:world\n0 1 2 3 4 ") << vr.tail;
  EXPECT_EQ(sr.tail, "server-done\n");  // stdout went to the verifier
}

TEST(StepRunnerTest, VerifierAndServerConnectedByTwoPipes) { VerifierAndServer(false); }

TEST(StepRunnerTest, VerifierAndServerConnectedByTwoPipesInTheSandbox) {
  std::string why;
  if (!LocalStepRunner().SandboxAvailable(&why)) GTEST_SKIP() << "no sandbox here: " << why;
  VerifierAndServer(true);
}

TEST(StepRunnerTest, DescriptorsThatAreNotOpenFailToStart) {
  LocalStepRunner runner;
  RunSpec spec = Shell("true");
  spec.fds = {{3, 987}};
  runner.Start(spec);
  Id id;
  RunResult r;
  ASSERT_TRUE(runner.Wait(0, &id, &r));
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_NE(r.error.find("descriptor 987 (to become 3) is not open"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace ratchet
