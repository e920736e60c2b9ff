#include "exec/proc_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "exec/test_util.h"

extern char** environ;

namespace ratchet {
namespace {

std::vector<pid_t> Sorted(const pid_t* p, int n) {
  std::vector<pid_t> v(p, p + n);
  std::sort(v.begin(), v.end());
  return v;
}

TEST(ProcTreeTest, ChildrenFilesAndProcScanAgree) {
  // sh -> (sleep, sleep): three descendants, two levels.
  testing::TempDir dir;
  std::string ready = dir.File("ready");
  std::string script = "sleep 30 & sleep 30 & touch " + ready + "; wait";
  char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"), script.data(), nullptr};
  pid_t sh;
  ASSERT_EQ(posix_spawnp(&sh, "sh", nullptr, nullptr, argv, environ), 0);
  ASSERT_TRUE(testing::WaitFor([&] { return access(ready.c_str(), F_OK) == 0; }, 10));

  pid_t a[64], b[64];
  int na = 0, nb = 0;
  // The sleeps may still be between fork and exec: wait for three.
  ASSERT_TRUE(testing::WaitFor([&] { return (na = ListDescendants(getpid(), a, 64)) == 3; }, 10));
  nb = ListDescendants(getpid(), b, 64, nullptr, ProcWalk::kScanProc);
  EXPECT_EQ(a[0], sh);  // parents first
  EXPECT_EQ(Sorted(a, na), Sorted(b, nb));

  // A small buffer: says it is truncated.
  bool truncated = false;
  pid_t one[1];
  EXPECT_EQ(ListDescendants(getpid(), one, 1, &truncated), 1);
  EXPECT_TRUE(truncated);

  ProcMemory mem;
  EXPECT_TRUE(ReadProcMemory(sh, &mem));
  EXPECT_GT(mem.rss_kb, 0u);
  EXPECT_GE(mem.hwm_kb, mem.rss_kb);

  for (int i = na - 1; i >= 0; --i) kill(a[i], SIGKILL);
  int status;
  waitpid(sh, &status, 0);
  EXPECT_FALSE(ReadProcMemory(sh, &mem));  // gone
}

TEST(ProcTreeTest, NoDescendants) {
  pid_t out[4];
  bool truncated = true;
  EXPECT_EQ(ListDescendants(getpid(), out, 4, &truncated), 0);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(ListDescendants(999999999, out, 4), 0);  // no such process
}

}  // namespace
}  // namespace ratchet
