#include "exec/supervisor_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "exec/supervisor.h"

namespace ratchet {
namespace {

// Runs `sh -c "exit 7"` under a supervisor started one way or the other, and
// checks both records it sends back.
void RunExit7(bool share_memory) {
  int out[2], status[2], control[2];
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(status, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(control, O_CLOEXEC), 0);
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  char sh[] = "/bin/sh", c[] = "-c", line[] = "exit 7";
  char* argv[] = {sh, c, line, nullptr};
  char* envp[] = {nullptr};
  SupervisorPlan plan;
  plan.path = "/bin/sh";
  plan.argv = argv;
  plan.envp = envp;
  plan.stdin_fd = devnull;
  plan.output_fd = out[1];
  plan.status_fd = status[1];
  plan.control_fd = control[0];

  SupervisorProcess process;
  std::string err;
  ASSERT_TRUE(process.Start(&plan, share_memory, &err)) << err;
  // Not a silent fallback: the fast path is the one in use.
  EXPECT_EQ(process.shares_memory(), share_memory && SupervisorProcess::CanShareMemory());
  for (int fd : {devnull, out[1], status[1], control[0]}) close(fd);

  SupervisorMessage started, done;
  ASSERT_EQ(read(status[0], &started, sizeof started), static_cast<ssize_t>(sizeof started));
  EXPECT_EQ(started.kind, SupervisorMessage::kStarted);
  EXPECT_EQ(started.error_stage, SupervisorMessage::kNoError);
  EXPECT_GT(started.leader_pid, 0);
  ASSERT_EQ(read(status[0], &done, sizeof done), static_cast<ssize_t>(sizeof done));
  EXPECT_EQ(done.kind, SupervisorMessage::kDone);
  EXPECT_EQ(done.leader_reaped, 1);
  EXPECT_TRUE(WIFEXITED(done.leader_status));
  EXPECT_EQ(WEXITSTATUS(done.leader_status), 7);
  process.Reap();
  char byte;
  EXPECT_EQ(read(status[0], &byte, 1), 0);  // the supervisor is gone
  for (int fd : {out[0], status[0], control[1]}) close(fd);
}

TEST(SupervisorProcessTest, SharingMemory) { RunExit7(true); }
TEST(SupervisorProcessTest, Forked) { RunExit7(false); }

}  // namespace
}  // namespace ratchet
