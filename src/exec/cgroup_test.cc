// Finding the cgroup hierarchies (parsing, no host needed), and a step's
// cgroups on this machine when it allows them (root on CI).
#include "exec/cgroup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/test_util.h"

namespace ratchet {
namespace {

const char* kMountinfo =
    "23 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 31 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
    "39 31 0:36 /docker/abc /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/uni\\040fied rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(CgroupParseTest, MountsAndTheirControllers) {
  std::vector<CgroupMount> m = ParseCgroupMounts(kMountinfo);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].point, "/sys/fs/cgroup/memory");
  EXPECT_FALSE(m[0].v2);
  EXPECT_EQ(m[0].controllers, std::vector<std::string>{"memory"});
  EXPECT_EQ(m[1].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ(m[2].root, "/docker/abc");
  EXPECT_TRUE(m[3].controllers.empty());  // name=systemd: no controller
  EXPECT_TRUE(m[4].v2);
  EXPECT_EQ(m[4].point, "/sys/fs/cgroup/uni fied");  // \040 is a space
}

TEST(CgroupParseTest, OwnCgroupPerHierarchy) {
  const char* own =
      "9:name=systemd:/\n8:pids:/docker/abc/x\n4:memory:/process_api/h1\n2:cpu,cpuacct:/c\n0::/u/"
      "v\n";
  std::string path;
  ASSERT_TRUE(FindProcCgroup(own, "", &path));
  EXPECT_EQ(path, "/u/v");
  ASSERT_TRUE(FindProcCgroup(own, "memory", &path));
  EXPECT_EQ(path, "/process_api/h1");
  ASSERT_TRUE(FindProcCgroup(own, "cpuacct", &path));
  EXPECT_EQ(path, "/c");
  EXPECT_FALSE(FindProcCgroup(own, "freezer", &path));
  EXPECT_FALSE(FindProcCgroup("4:memory:/x\n", "", &path));  // pure v1: no "0::"
}

TEST(CgroupParseTest, FolderUnderTheMountsRoot) {
  CgroupMount root{"/sys/fs/cgroup/memory", "/", false, {"memory"}};
  EXPECT_EQ(CgroupFolder(root, "/process_api/h1"), "/sys/fs/cgroup/memory/process_api/h1");
  EXPECT_EQ(CgroupFolder(root, "/"), "/sys/fs/cgroup/memory");
  // A container's mount shows only its own part of the hierarchy.
  CgroupMount docker{"/sys/fs/cgroup/pids", "/docker/abc", false, {"pids"}};
  EXPECT_EQ(CgroupFolder(docker, "/docker/abc/x"), "/sys/fs/cgroup/pids/x");
  EXPECT_EQ(CgroupFolder(docker, "/docker/abc"), "/sys/fs/cgroup/pids");
  EXPECT_EQ(CgroupFolder(docker, "/docker/abcd"), "");
  EXPECT_EQ(CgroupFolder(docker, "/other"), "");
}

TEST(StepCgroupTest, MadeLimitedKilledAndRemovedWhereTheMachineAllows) {
  const CgroupPlaces& places = ProbeCgroupPlaces();
  if (places.v2.empty()) GTEST_SKIP() << "no cgroup here: " << places.why_not_v2;
  std::string parent = places.v2;
  struct stat st;
  ASSERT_EQ(stat(parent.c_str(), &st), 0);
  EXPECT_NE(parent.find("/ratchet-" + std::to_string(getpid())), std::string::npos) << parent;

  std::string dir;
  {
    StepCgroup cg;
    std::string notes;
    StepLimits limits;
    limits.memory_bytes = 64 << 20;
    limits.pids = 16;
    cg.Create(places, limits, &notes);
    ASSERT_TRUE(cg.contained()) << notes;
    dir = cg.folder();
    EXPECT_EQ(dir.rfind(parent + "/step-", 0), 0u) << dir;
    // This machine has both limits either in v2 or in v1 hierarchies.
    bool memory_possible = places.v2_memory || !places.v1_memory.empty();
    bool pids_possible = places.v2_pids || !places.v1_pids.empty();
    EXPECT_EQ(cg.memory_limited(), memory_possible) << notes;
    EXPECT_EQ(cg.pids_limited(), pids_possible) << notes;
    EXPECT_EQ(cg.procs_fds().size(), 1u + (cg.memory_limited() && !places.v2_memory) +
                                         (cg.pids_limited() && !places.v2_pids));
    EXPECT_FALSE(cg.Populated());
    double cpu = -1;
    EXPECT_TRUE(cg.CpuSeconds(&cpu));
    EXPECT_EQ(cpu, 0);
    EXPECT_EQ(cg.OomKills(), 0u);
    EXPECT_EQ(cg.PidsMaxHits(), 0u);
    EXPECT_TRUE(cg.Kill());  // an empty cgroup can be killed too
    EXPECT_TRUE(cg.Remove());
    EXPECT_FALSE(cg.contained());
  }
  EXPECT_NE(stat(dir.c_str(), &st), 0) << dir << " is left";
}

TEST(StepCgroupTest, StaleFoldersOfGoneRatchetsAreSwept) {
  const CgroupPlaces& places = ProbeCgroupPlaces();
  if (places.v2.empty()) GTEST_SKIP() << "no cgroup here: " << places.why_not_v2;
  std::string base = places.v2.substr(0, places.v2.rfind('/'));
  // A pid that cannot exist (above pid_max) stands for a ratchet that died.
  std::string stale = base + "/ratchet-99999999";
  ASSERT_EQ(mkdir(stale.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((stale + "/step-3").c_str(), 0755), 0);
  // A forked child probes afresh (its own pid), and sweeps on the way.
  pid_t child = fork();
  if (child == 0) {
    const CgroupPlaces& mine = ProbeCgroupPlaces();
    bool ok = mine.v2.ends_with("/ratchet-" + std::to_string(getpid()));
    rmdir(mine.v2.c_str());
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(status, 0);
  struct stat st;
  EXPECT_NE(stat(stale.c_str(), &st), 0) << stale << " was not swept";
  rmdir((stale + "/step-3").c_str());
  rmdir(stale.c_str());
}

}  // namespace
}  // namespace ratchet
