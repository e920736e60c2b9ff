// The sandbox's command line (pure), and what a sandboxed run sees on this
// machine (real bwrap). The hostile cases, as root and as an ordinary user,
// are in contained_runs_test.cc.
#include "exec/sandbox.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "exec/local_runner.h"
#include "exec/test_util.h"

namespace ratchet {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;
using End = RunResult::End;

SandboxHost FixedHost() {
  SandboxHost host;
  host.bwrap = "/usr/bin/bwrap";
  host.disable_userns = true;
  host.as_root = true;
  host.system_dirs = {{"/usr", ""}, {"/bin", "usr/bin"}, {"/etc", ""}};
  host.devices = {"/dev/nvidia0", "/dev/nvidiactl", "/dev/dri"};
  return host;
}

TEST(SandboxArgvTest, AViewBuiltFromNothing) {
  SandboxSpec spec;
  spec.enabled = true;
  spec.home = "/scratch/home-7";
  spec.mounts = {{"/loop/wt-7", "/work", Mount::Kind::kWritable, false},
                 {"/data/train", "", Mount::Kind::kReadOnly, true},
                 {"", "/work/.git", Mount::Kind::kHidden, false},
                 {"/dev/fuse", "", Mount::Kind::kDevice, false}};
  auto argv = SandboxArgv(FixedHost(), spec, "/work", 5, {"python3", "train.py"});
  std::vector<std::string> want = {"/usr/bin/bwrap",
                                   "--unshare-user",
                                   "--uid",
                                   "65534",
                                   "--gid",
                                   "65534",
                                   "--unshare-pid",
                                   "--unshare-ipc",
                                   "--unshare-uts",
                                   "--unshare-cgroup-try",
                                   "--unshare-net",
                                   "--die-with-parent",
                                   "--new-session",
                                   "--cap-drop",
                                   "ALL",
                                   "--disable-userns",
                                   "--ro-bind-try",
                                   "/usr",
                                   "/usr",
                                   "--symlink",
                                   "usr/bin",
                                   "/bin",
                                   "--ro-bind-try",
                                   "/etc",
                                   "/etc",
                                   "--proc",
                                   "/proc",
                                   "--dev",
                                   "/dev",
                                   "--dev-bind-try",
                                   "/dev/nvidia0",
                                   "/dev/nvidia0",
                                   "--dev-bind-try",
                                   "/dev/nvidiactl",
                                   "/dev/nvidiactl",
                                   "--dev-bind-try",
                                   "/dev/dri",
                                   "/dev/dri",
                                   "--perms",
                                   "1777",
                                   "--tmpfs",
                                   "/tmp",
                                   "--perms",
                                   "1777",
                                   "--tmpfs",
                                   "/dev/shm",
                                   "--bind",
                                   "/scratch/home-7",
                                   "/home/sandbox",
                                   "--bind",
                                   "/loop/wt-7",
                                   "/work",
                                   "--ro-bind-try",
                                   "/data/train",
                                   "/data/train",
                                   "--tmpfs",
                                   "/work/.git",
                                   "--dev-bind",
                                   "/dev/fuse",
                                   "/dev/fuse",
                                   "--setenv",
                                   "HOME",
                                   "/home/sandbox",
                                   "--chdir",
                                   "/work",
                                   "--json-status-fd",
                                   "5",
                                   "--",
                                   "python3",
                                   "train.py"};
  EXPECT_EQ(argv, want);
}

TEST(SandboxArgvTest, NetworkNestedNamespacesAndAnOrdinaryUser) {
  SandboxHost host = FixedHost();
  host.as_root = false;  // the caller's own uid inside: no --uid
  host.devices.clear();
  SandboxSpec spec;
  spec.enabled = true;
  spec.network = true;
  spec.nested_namespaces = true;
  auto argv = SandboxArgv(host, spec, "", -1, {"true"});
  auto has = [&](const std::string& a) {
    return std::find(argv.begin(), argv.end(), a) != argv.end();
  };
  EXPECT_FALSE(has("--uid"));
  EXPECT_FALSE(has("--unshare-net"));
  EXPECT_FALSE(has("--disable-userns"));
  EXPECT_FALSE(has("--chdir"));
  EXPECT_FALSE(has("--json-status-fd"));
  EXPECT_TRUE(has("--unshare-pid"));
  // No home folder: an empty tmpfs.
  auto home = std::find(argv.begin(), argv.end(), "/home/sandbox");
  ASSERT_NE(home, argv.end());
  EXPECT_EQ(*(home - 1), "--tmpfs");
  // bwrap without --disable-userns (before 0.8.0): not asked for.
  host.disable_userns = false;
  spec.nested_namespaces = false;
  argv = SandboxArgv(host, spec, "", -1, {"true"});
  EXPECT_FALSE(has("--disable-userns"));
}

TEST(SandboxArgvTest, HostPathOfWhatTheSandboxShows) {
  TempDir dir;
  SandboxSpec spec;
  spec.enabled = true;
  spec.home = "/scratch/h";
  spec.mounts = {{"/loop/wt", "/work", Mount::Kind::kWritable, false},
                 {"", "/work/.git", Mount::Kind::kHidden, false},
                 {dir.File("absent"), "/opt/x", Mount::Kind::kReadOnly, true}};
  SandboxHost host = FixedHost();
  bool root = false;
  EXPECT_EQ(SandboxHostPath(host, spec, "/usr/bin/python3"), "/usr/bin/python3");
  EXPECT_EQ(SandboxHostPath(host, spec, "/bin/sh"), "/bin/sh");
  EXPECT_EQ(SandboxHostPath(host, spec, "/work/train.py"), "/loop/wt/train.py");
  EXPECT_EQ(SandboxHostPath(host, spec, "/work/./sub/../a"), "/loop/wt/a");
  EXPECT_EQ(SandboxHostPath(host, spec, "/work/.git/config"), "");  // hidden
  EXPECT_EQ(SandboxHostPath(host, spec, "/home/sandbox/.cache"), "/scratch/h/.cache");
  EXPECT_EQ(SandboxHostPath(host, spec, "/opt/x/y"), "");   // optional and absent
  EXPECT_EQ(SandboxHostPath(host, spec, "/srv/data"), "");  // outside the view
  EXPECT_EQ(SandboxHostPath(host, spec, "/tmp", &root), "");
  EXPECT_TRUE(root);
  EXPECT_EQ(SandboxHostPath(host, spec, "/tmp/x", &root), "");
  EXPECT_FALSE(root);
  EXPECT_EQ(SandboxHostPath(host, spec, "/work/.git", &root), "");
  EXPECT_TRUE(root);
}

class SandboxRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!LocalProcessRunner().SandboxAvailable(&why)) GTEST_SKIP() << "no sandbox here: " << why;
  }
  RunSpec Sandboxed(const std::string& line) {
    RunSpec spec;
    spec.argv = ShellCommand(line);
    spec.timeout_s = 20;
    spec.sandbox.enabled = true;
    return spec;
  }
};

TEST_F(SandboxRunTest, OnlyTheViewExists) {
  TempDir dir, home;
  WriteFile(dir.File("ro.txt"), "original\n");
  std::filesystem::create_directory(dir.File("rw"));
  std::filesystem::create_directory(dir.File("rw/secret"));
  WriteFile(dir.File("rw/secret/key"), "k\n");
  WriteFile(dir.File("not-mounted.txt"), "x\n");
  RunSpec spec = Sandboxed(
      "ls /; echo \"home=$HOME pwd=$(pwd)\"; cat /in/ro.txt; echo changed > /in/ro.txt; "
      "echo made > /out/made.txt; ls /out/secret | wc -l; test -e " +
      dir.File("not-mounted.txt") + " && echo host-visible; echo scratch > $HOME/f; exit 3");
  spec.sandbox.home = home.path();
  spec.sandbox.mounts = {{dir.File("ro.txt"), "/in/ro.txt", Mount::Kind::kReadOnly, false},
                         {dir.File("rw"), "/out", Mount::Kind::kWritable, false},
                         {"", "/out/secret", Mount::Kind::kHidden, false}};
  spec.cwd = "/out";
  RunResult r = LocalProcessRunner().Run(spec);
  EXPECT_TRUE(r.sandboxed);
  EXPECT_EQ(r.end, End::kExited) << r.Describe() << r.tail;
  EXPECT_EQ(r.exit_code, 3);
  // The root holds the system folders and what the spec added, nothing else
  // of the host (lib32/libx32/opt/sbin appear where the host has them).
  for (const char* absent : {"work", "root", "var", "srv", "mnt"}) {
    EXPECT_EQ(r.tail.find(std::string("\n") + absent + "\n"), std::string::npos) << r.tail;
  }
  EXPECT_NE(r.tail.find("home=/home/sandbox pwd=/out\n"), std::string::npos) << r.tail;
  EXPECT_NE(r.tail.find("original\n"), std::string::npos);
  EXPECT_NE(r.tail.find("Read-only file system"), std::string::npos) << r.tail;
  EXPECT_NE(r.tail.find("\n0\n"), std::string::npos) << "the hidden folder is empty: " << r.tail;
  EXPECT_EQ(r.tail.find("host-visible"), std::string::npos);
  EXPECT_EQ(ReadFile(dir.File("ro.txt")), "original\n");
  EXPECT_EQ(ReadFile(dir.File("rw/made.txt")), "made\n");
  EXPECT_EQ(ReadFile(home.File("f")), "scratch\n");
  EXPECT_EQ(ReadFile(dir.File("rw/secret/key")), "k\n");
}

TEST_F(SandboxRunTest, ProgramsAndFoldersAreLookedUpInsideTheSandbox) {
  TempDir dir;
  WriteFile(dir.File("tool"), "#!/bin/sh\necho tool ran\n");
  chmod(dir.File("tool").c_str(), 0755);
  // On the host, not in the sandbox's view: cannot start.
  RunSpec spec = Sandboxed("true");
  spec.argv = {dir.File("tool")};
  RunResult r = LocalProcessRunner().Run(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_EQ(r.error,
            "cannot run '" + dir.File("tool") + "': No such file or directory (in the sandbox)");
  // Mounted, and found through PATH inside.
  spec.argv = {"tool"};
  // Under a read-only folder a mount point must exist already.
  spec.sandbox.mounts = {{dir.path(), "/usr/ratchet-no-such-dir", Mount::Kind::kReadOnly, false}};
  r = LocalProcessRunner().Run(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_NE(r.error.find("mount point '/usr/ratchet-no-such-dir' does not exist under the "
                         "read-only '/usr'"),
            std::string::npos)
      << r.error;
  spec.sandbox.mounts = {{dir.path(), "/tools", Mount::Kind::kReadOnly, false}};
  spec.env = {{"PATH", "/tools:/usr/bin:/bin"}};
  r = LocalProcessRunner().Run(spec);
  EXPECT_TRUE(r.ok()) << r.Describe() << r.tail;
  EXPECT_EQ(r.tail, "tool ran\n");
  // A working directory that does not exist inside.
  spec.cwd = dir.path();
  r = LocalProcessRunner().Run(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_NE(r.error.find("does not exist in the sandbox"), std::string::npos) << r.error;
  // A mount whose source is missing.
  spec.cwd = "";
  spec.sandbox.mounts.push_back({dir.File("absent"), "/x", Mount::Kind::kReadOnly, false});
  r = LocalProcessRunner().Run(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_NE(r.error.find("mount source"), std::string::npos) << r.error;
}

TEST_F(SandboxRunTest, ExitStatusesComeThroughBwrap) {
  RunResult r = LocalProcessRunner().Run(Sandboxed("exit 7"));
  EXPECT_EQ(r.end, End::kExited);
  EXPECT_EQ(r.exit_code, 7);
  r = LocalProcessRunner().Run(Sandboxed("kill -USR1 $$"));
  EXPECT_EQ(r.end, End::kExited);
  EXPECT_EQ(r.exit_code, 128 + SIGUSR1);
}

TEST_F(SandboxRunTest, SigtermReachesTheCommandFirst) {
  // The namespace's init must not die of the SIGTERM: the command gets its
  // grace period.
  RunSpec spec = Sandboxed("trap 'echo got-term; exit 3' TERM; echo ready; sleep 30 & wait");
  spec.timeout_s = 0.5;
  spec.grace_s = 10;
  RunResult r = LocalProcessRunner().Run(spec);
  EXPECT_EQ(r.end, End::kTimedOut);
  EXPECT_NE(r.tail.find("got-term"), std::string::npos) << r.tail;
  EXPECT_LT(r.wall_s, 5);
}

TEST(SandboxAvailabilityTest, NoBwrapFailsToStartInsteadOfRunningUnconfined) {
  LocalProcessRunner none(LocalRunnerOptions{.bwrap = "/nonexistent/bwrap"});
  std::string why;
  EXPECT_FALSE(none.SandboxAvailable(&why));
  EXPECT_NE(why.find("/nonexistent/bwrap"), std::string::npos) << why;
  RunSpec spec;
  spec.argv = {"true"};
  spec.sandbox.enabled = true;
  RunResult r = none.Run(spec);
  EXPECT_EQ(r.end, End::kFailedToStart);
  EXPECT_FALSE(r.sandboxed);
  EXPECT_NE(r.error.find("in the sandbox: "), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("/nonexistent/bwrap"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace ratchet
