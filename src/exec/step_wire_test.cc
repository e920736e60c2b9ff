#include "exec/step_wire.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

TEST(StepWireTest, SpecRoundTripsEveryFieldThatTravels) {
  RunSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo 'a b' \"$X\""};
  spec.cwd = "/loop/.ratchet/work/3";
  spec.env = {{"X", "1"}, {"EMPTY", ""}};
  spec.drop_secret_env = true;
  spec.timeout_s = 12.5;
  spec.grace_s = 2;
  spec.stop_signal = 2;
  spec.log_path = "/loop/.ratchet/runs/3/run.log";
  spec.log_limit_bytes = 1234;
  spec.stdin_data = std::string("in\0put", 6);
  spec.sandbox.enabled = true;
  spec.sandbox.mounts = {{"/a", "/b", Mount::Kind::kWritable, true},
                         {"", "/loop/.git", Mount::Kind::kHidden, false}};
  spec.sandbox.home = "/loop/.ratchet/runs/3/home/run";
  spec.sandbox.network = true;
  spec.limits = {1 << 30, 64, 1 << 20};
  spec.tail_bytes = 99;

  RunSpec back;
  std::string err;
  ASSERT_TRUE(RunSpecFromJson(RunSpecToJson(spec), &back, &err)) << err;
  EXPECT_EQ(back.argv, spec.argv);
  EXPECT_EQ(back.cwd, spec.cwd);
  EXPECT_EQ(back.env, spec.env);
  EXPECT_TRUE(back.drop_secret_env);
  EXPECT_DOUBLE_EQ(back.timeout_s, 12.5);
  EXPECT_DOUBLE_EQ(back.grace_s, 2);
  EXPECT_EQ(back.stop_signal, 2);
  EXPECT_EQ(back.log_path, spec.log_path);
  EXPECT_EQ(back.log_limit_bytes, 1234u);
  EXPECT_EQ(back.stdin_data, spec.stdin_data);
  ASSERT_EQ(back.sandbox.mounts.size(), 2u);
  EXPECT_EQ(back.sandbox.mounts[0].target, "/b");
  EXPECT_EQ(back.sandbox.mounts[0].kind, Mount::Kind::kWritable);
  EXPECT_TRUE(back.sandbox.mounts[0].optional);
  EXPECT_EQ(back.sandbox.mounts[1].kind, Mount::Kind::kHidden);
  EXPECT_TRUE(back.sandbox.enabled);
  EXPECT_TRUE(back.sandbox.network);
  EXPECT_EQ(back.sandbox.home, spec.sandbox.home);
  EXPECT_EQ(back.limits.memory_bytes, 1u << 30);
  EXPECT_EQ(back.limits.pids, 64u);
  EXPECT_EQ(back.limits.file_bytes, 1u << 20);
  EXPECT_EQ(back.tail_bytes, 99u);
}

TEST(StepWireTest, ResultRoundTripsAndKeepsBinaryOutput) {
  RunResult r;
  r.end = RunResult::End::kLimit;
  r.limit = RunResult::Limit::kMemory;
  r.wall_s = 3.25;
  r.cpu_s = 1.5;
  r.peak_rss_mb = 812;
  r.output_bytes = 4096;
  r.output_truncated = true;
  r.sandboxed = true;
  r.containment = "cgroup";
  r.limits_enforced = false;
  r.tail = "---\nscore: 1\n\xff\xfe";  // not UTF-8: replaced, still written
  r.error = "memory limit exceeded";
  RunResult back;
  std::string err;
  ASSERT_TRUE(RunResultFromJson(RunResultToJson(r), &back, &err)) << err;
  EXPECT_EQ(back.end, RunResult::End::kLimit);
  EXPECT_EQ(back.limit, RunResult::Limit::kMemory);
  EXPECT_DOUBLE_EQ(back.wall_s, 3.25);
  EXPECT_DOUBLE_EQ(back.peak_rss_mb, 812);
  EXPECT_TRUE(back.output_truncated);
  EXPECT_TRUE(back.sandboxed);
  EXPECT_FALSE(back.limits_enforced);
  EXPECT_EQ(back.containment, "cgroup");
  EXPECT_EQ(back.tail.rfind("---\nscore: 1\n", 0), 0u);
  EXPECT_EQ(back.error, r.error);
}

TEST(StepWireTest, DamagedFilesAreErrorsNotCrashes) {
  RunSpec spec;
  RunResult result;
  std::string err;
  EXPECT_FALSE(RunSpecFromJson("not json", &spec, &err));
  EXPECT_FALSE(RunSpecFromJson(R"({"argv": "sh"})", &spec, &err));
  EXPECT_NE(err.find("damaged"), std::string::npos) << err;
  EXPECT_FALSE(RunSpecFromJson(R"({"argv": [], "sandbox": {}, "limits": {}})", &spec, &err));
  EXPECT_NE(err.find("no command"), std::string::npos) << err;
  EXPECT_FALSE(RunResultFromJson(R"({"end": 42})", &result, &err));
  EXPECT_FALSE(RunResultFromJson(R"({"exit_code": 0})", &result, &err));
  EXPECT_FALSE(RunResultFromJson("[1]", &result, &err));
}

}  // namespace
}  // namespace ratchet
