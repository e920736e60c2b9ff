#include "exec/line_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "exec/sandbox_probe.h"

namespace ratchet {
namespace {

LineProcess::Options Sh(const std::string& script) {
  LineProcess::Options o;
  o.argv = {"/bin/sh", "-c", script};
  return o;
}

TEST(LineProcess, AnswersLineByLine) {
  LineProcess p;
  std::string err, answer;
  ASSERT_TRUE(p.Start(Sh("while IFS= read -r l; do echo \"got $l\"; done"), &err)) << err;
  EXPECT_EQ(p.Exchange("one", 5, &answer), LineProcess::Outcome::kAnswered);
  EXPECT_EQ(answer, "got one");
  EXPECT_EQ(p.Exchange("two", 5, &answer), LineProcess::Outcome::kAnswered);
  EXPECT_EQ(answer, "got two");
  p.Stop(5);
  EXPECT_FALSE(p.running());
  EXPECT_EQ(p.exit_description(), "exit 0");  // it saw the end of its input
}

TEST(LineProcess, AHangIsKilledAtTheDeadlineWithItsChildren) {
  LineProcess p;
  std::string err, answer;
  // The answer never comes; a child of the mechanism sleeps too.
  ASSERT_TRUE(p.Start(Sh("read l; sleep 300 & echo $! >/dev/null; wait"), &err)) << err;
  const pid_t pid = p.pid();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(p.Exchange("hello", 0.3, &answer), LineProcess::Outcome::kTimedOut);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5);
  EXPECT_FALSE(p.running());
  // The killed child may linger a moment as a zombie of its new parent.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (kill(-pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_NE(kill(-pid, 0), 0) << "the process group is gone";
}

TEST(LineProcess, ACrashIsSeenWithItsExitStatus) {
  LineProcess p;
  std::string err, answer;
  ASSERT_TRUE(p.Start(Sh("read l; echo 'dying' >&2; exit 3"), &err)) << err;
  EXPECT_EQ(p.Exchange("hello", 5, &answer), LineProcess::Outcome::kExited);
  EXPECT_EQ(p.exit_description(), "exit 3");
  EXPECT_EQ(p.Exchange("again", 5, &answer), LineProcess::Outcome::kExited);
}

TEST(LineProcess, AMechanismThatStopsReadingDoesNotBlockOrKillUs) {
  LineProcess p;
  std::string err, answer;
  ASSERT_TRUE(p.Start(Sh("exec 0<&-; sleep 300"), &err)) << err;
  // A request far larger than a pipe holds: writing fails, nothing hangs.
  const LineProcess::Outcome o = p.Exchange(std::string(1 << 20, 'x'), 0.5, &answer);
  EXPECT_TRUE(o == LineProcess::Outcome::kExited || o == LineProcess::Outcome::kTimedOut);
  EXPECT_FALSE(p.running());
}

TEST(LineProcess, AnEndlessLineIsCutOff) {
  LineProcess::Options o = Sh("read l; while :; do printf xxxxxxxxxxxxxxxx; done");
  o.max_line_bytes = 4096;
  LineProcess p;
  std::string err, answer;
  ASSERT_TRUE(p.Start(o, &err)) << err;
  EXPECT_EQ(p.Exchange("hello", 5, &answer), LineProcess::Outcome::kTooLong);
  EXPECT_FALSE(p.running());
}

TEST(LineProcess, AProgramThatDoesNotExist) {
  LineProcess p;
  LineProcess::Options o;
  o.argv = {"no-such-mechanism-program"};
  std::string err;
  EXPECT_FALSE(p.Start(o, &err));
  EXPECT_NE(err.find("no-such-mechanism-program"), std::string::npos) << err;
}

// A mechanism an agent wrote runs in the sandbox: it sees its own folder
// (read-only) and the system, not the loop's files, not ratchet's
// processes, not the user's credentials; stopping it ends its namespace.
TEST(LineProcess, InTheSandboxItSeesOnlyItsFolder) {
  if (!ProbeSandbox("bwrap").works) GTEST_SKIP() << "no working bwrap: " << ProbeSandbox("bwrap").why;
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ratchet_mech_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "mech");
  std::ofstream(dir / "secret.txt") << "loop data";
  std::ofstream(dir / "mech" / "mechanism") << R"SH(#!/bin/sh
while IFS= read -r l; do
  if [ -e "$1/secret.txt" ]; then s=seen; else s=hidden; fi
  if touch "$1/mech/x" 2>/dev/null; then w=wrote; else w=readonly; fi
  if kill -0 "$2" 2>/dev/null; then p=reached; else p=unreached; fi
  echo "$s $w $p key=${RATCHET_TEST_API_KEY:-none} uid=$(id -u)"
done
)SH";
  fs::permissions(dir / "mech" / "mechanism", fs::perms::owner_all);
  ::setenv("RATCHET_TEST_API_KEY", "sk-123", 1);
  LineProcess p;
  LineProcess::Options o;
  o.argv = {(dir / "mech" / "mechanism").string(), dir.string(), std::to_string(getpid())};
  o.cwd = (dir / "mech").string();
  o.sandbox.enabled = true;
  o.sandbox.mounts.push_back({(dir / "mech").string(), "", Mount::Kind::kReadOnly, false});
  std::string err, answer;
  ASSERT_TRUE(p.Start(o, &err)) << err;
  ::unsetenv("RATCHET_TEST_API_KEY");
  ASSERT_EQ(p.Exchange("hello", 10, &answer), LineProcess::Outcome::kAnswered) << answer;
  EXPECT_EQ(answer.rfind("hidden readonly unreached key=none uid=", 0), 0u) << answer;
  if (::geteuid() == 0) {
    EXPECT_EQ(answer, "hidden readonly unreached key=none uid=65534") << "root is nobody inside";
  }
  p.Stop(1);
  EXPECT_FALSE(p.running());
  EXPECT_FALSE(fs::exists(dir / "mech" / "x"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ratchet
