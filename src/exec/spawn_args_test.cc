#include "exec/spawn_args.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "exec/sandbox.h"
#include "exec/test_util.h"

namespace ratchet {
namespace {

using testing::TempDir;
using testing::WriteFile;

TEST(FindProgramTest, SearchesPathLikeExecvp) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("a"));
  std::filesystem::create_directories(dir.File("b"));
  WriteFile(dir.File("a/tool"), "#!/bin/sh\n");  // not executable: skipped
  WriteFile(dir.File("b/tool"), "#!/bin/sh\n");
  chmod(dir.File("b/tool").c_str(), 0755);
  std::string found, err;
  ASSERT_TRUE(FindProgram("tool", dir.File("a") + ":" + dir.File("b"), "", &found, &err)) << err;
  EXPECT_EQ(found, dir.File("b/tool"));

  // Only a non-executable candidate: EACCES, as execvp says.
  EXPECT_FALSE(FindProgram("tool", dir.File("a"), "", &found, &err));
  EXPECT_EQ(err, "cannot run 'tool': Permission denied");
  EXPECT_FALSE(FindProgram("tool", "/nonexistent", "", &found, &err));
  EXPECT_EQ(err, "cannot run 'tool': No such file or directory");
  // A directory is not a program.
  EXPECT_FALSE(FindProgram(dir.path(), "", "", &found, &err));
  // Empty PATH: the default one.
  ASSERT_TRUE(FindProgram("sh", "", "", &found, &err));
  EXPECT_EQ(found, "/bin/sh");
}

TEST(FindProgramTest, SlashNamesAreRelativeToTheRunsDirectory) {
  TempDir dir;
  WriteFile(dir.File("run.sh"), "#!/bin/sh\n");
  chmod(dir.File("run.sh").c_str(), 0755);
  std::string found, err;
  ASSERT_TRUE(FindProgram("./run.sh", "", dir.path(), &found, &err)) << err;
  EXPECT_EQ(found, "./run.sh");  // execve resolves it after the chdir
  EXPECT_FALSE(FindProgram("./run.sh", "", "/", &found, &err));
}

TEST(EnvironmentTest, MergeOverridesAndAppends) {
  char a[] = "A=1", b[] = "B=2", ab[] = "AB=3";
  char* base[] = {a, b, ab, nullptr};
  auto env = MergeEnvironment(base, {{"A", "x"}, {"C", "y=z"}});
  EXPECT_EQ(env, (std::vector<std::string>{"A=x", "B=2", "AB=3", "C=y=z"}));
  std::string v;
  EXPECT_TRUE(FindEnv(env, "C", &v));
  EXPECT_EQ(v, "y=z");
  EXPECT_FALSE(FindEnv(env, "D", &v));
  CStringArray arr(env);
  EXPECT_STREQ(arr.get()[0], "A=x");
  EXPECT_EQ(arr.get()[4], nullptr);
}

TEST(EnvironmentTest, CredentialsAreLeftOutWhenAsked) {
  char path[] = "PATH=/usr/bin", key[] = "ANTHROPIC_API_KEY=sk-1", hook[] = "SLACK_TOKEN=t",
       mine[] = "RATCHET_KEY_FILE=/k", pw[] = "db_password=p", lang[] = "LANG=C";
  char* base[] = {path, key, hook, mine, pw, lang, nullptr};
  auto env = MergeEnvironment(base, {{"HF_TOKEN", "given"}}, /*drop_secrets=*/true);
  // What the step's own env sets passes; nothing inherited that names a credential.
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "LANG=C", "HF_TOKEN=given"}));
  EXPECT_EQ(MergeEnvironment(base, {}).size(), 6u) << "kept unless asked";
}

TEST(SandboxArgvTest, BindsEverythingAndTheReadonlyPathsOnTop) {
  auto argv = BwrapArgv("bwrap", {"/abs/file", "rel/dir"}, "/work", "/usr/bin/python3",
                        {"python3", "train.py"});
  EXPECT_EQ(argv,
            (std::vector<std::string>{"bwrap", "--dev-bind", "/", "/", "--ro-bind-try", "/abs/file",
                                      "/abs/file", "--ro-bind-try", "/work/rel/dir",
                                      "/work/rel/dir", "--", "/usr/bin/python3", "train.py"}));
}

}  // namespace
}  // namespace ratchet
