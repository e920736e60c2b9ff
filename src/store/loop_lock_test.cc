#include "store/loop_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vcs/test_util.h"

namespace ratchet {
namespace {

using testing::TempDir;

/// A child process that takes the lock, reports on `ready_fd`, and waits to be killed.
pid_t HoldInChild(const std::string& lock_path) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    ::close(fds[0]);
    LoopLock lock;
    char ok = lock.Acquire(lock_path, "my-loop").ok() ? 1 : 0;
    if (::write(fds[1], &ok, 1) != 1) _exit(1);
    for (;;) ::pause();
  }
  ::close(fds[1]);
  char ok = 0;
  bool got = ::read(fds[0], &ok, 1) == 1 && ok == 1;
  ::close(fds[0]);
  if (!got) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

TEST(LoopLock, SecondProcessIsToldWhoHoldsIt) {
  TempDir dir;
  const std::string path = dir / "lock";
  pid_t holder = HoldInChild(path);
  ASSERT_GT(holder, 0);
  LoopLock lock;
  const Error busy = lock.Acquire(path, "my-loop");
  EXPECT_TRUE(busy.Is(Error::Kind::kBusy)) << KindName(busy.kind());
  EXPECT_EQ(busy.message(),
            "another `ratchet run` (pid " + std::to_string(holder) + ") holds the loop in my-loop");
  EXPECT_EQ(ReadLockPid(path), holder);

  // SIGKILL: no cleanup runs, yet the kernel releases the lock.
  ASSERT_EQ(::kill(holder, SIGKILL), 0);
  ASSERT_EQ(::waitpid(holder, nullptr, 0), holder);
  const Error taken = lock.Acquire(path, "my-loop");
  ASSERT_TRUE(taken.ok()) << taken.message();
  EXPECT_TRUE(lock.held());
  EXPECT_EQ(ReadLockPid(path), ::getpid());
}

TEST(LoopLock, ExclusiveWithinOneProcessAndReleased) {
  TempDir dir;
  const std::string path = dir / "lock";
  LoopLock a, b;
  ASSERT_TRUE(a.Acquire(path, "my-loop").ok());
  const Error busy = b.Acquire(path, "my-loop");
  EXPECT_TRUE(busy.Is(Error::Kind::kBusy)) << busy.message();
  EXPECT_NE(busy.message().find("(pid " + std::to_string(::getpid()) + ")"), std::string::npos)
      << busy.message();
  a.Release();
  EXPECT_FALSE(a.held());
  EXPECT_TRUE(b.Acquire(path, "my-loop").ok());
}

TEST(LoopLock, NotInheritedByChildProcesses) {
  // An experiment started while the lock is held must not keep it alive.
  TempDir dir;
  const std::string path = dir / "lock";
  auto lock = std::make_unique<LoopLock>();
  ASSERT_TRUE(lock->Acquire(path, "my-loop").ok());
  // The pipe closes in the child at exec (O_CLOEXEC): EOF means it has exec'd.
  int exec_fds[2];
  ASSERT_EQ(::pipe2(exec_fds, O_CLOEXEC), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(exec_fds[1]);
  char byte;
  while (::read(exec_fds[0], &byte, 1) > 0) {
  }
  ::close(exec_fds[0]);
  lock.reset();  // ratchet gone; the experiment lives on
  LoopLock again;
  const Error taken = again.Acquire(path, "my-loop");
  EXPECT_TRUE(taken.ok()) << taken.message();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST(LoopLock, MissingFolderIsAClearError) {
  TempDir dir;
  LoopLock lock;
  const Error e = lock.Acquire(dir / "no/such/lock", "my-loop");
  EXPECT_TRUE(e.Is(Error::Kind::kIO)) << KindName(e.kind());
  EXPECT_NE(e.message().find("cannot open the lock"), std::string::npos) << e.message();
}

}  // namespace
}  // namespace ratchet
