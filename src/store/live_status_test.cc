#include "store/live_status.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "vcs/test_util.h"

namespace ratchet {
namespace {

using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

LiveStatus Sample() {
  LiveStatus s;
  s.pid = 12345;
  s.session_id = 2;
  s.experiment_id = 17;
  s.phase = "running";
  s.phase_started_at = 1764680000.5;
  s.run_started_at = 1764680003.1;
  s.budget_s = 60;
  s.timeout_s = 120;
  s.progress = "progress: elapsed=12.3 loss=2.41";
  s.updated_at = 1764680015.2;
  return s;
}

TEST(LiveStatus, WriteThenReadRoundTrips) {
  TempDir dir;
  const std::string path = dir / "live.json";
  std::string err;
  ASSERT_TRUE(WriteLiveStatus(path, Sample(), &err)) << err;
  LiveStatus got;
  ASSERT_TRUE(ReadLiveStatus(path, &got, &err)) << err;
  LiveStatus want = Sample();
  EXPECT_EQ(got.pid, want.pid);
  EXPECT_EQ(got.session_id, want.session_id);
  EXPECT_EQ(got.experiment_id, want.experiment_id);
  EXPECT_EQ(got.phase, want.phase);
  EXPECT_EQ(got.phase_started_at, want.phase_started_at);
  EXPECT_EQ(got.run_started_at, want.run_started_at);
  EXPECT_EQ(got.budget_s, want.budget_s);
  EXPECT_EQ(got.timeout_s, want.timeout_s);
  EXPECT_EQ(got.progress, want.progress);
  EXPECT_EQ(got.updated_at, want.updated_at);
  EXPECT_EQ(got.stop_reason, want.stop_reason);
  // Replacing leaves no temporary file behind.
  want.phase = "stopped";
  want.stop_reason = "target reached";
  ASSERT_TRUE(WriteLiveStatus(path, want, &err)) << err;
  ASSERT_TRUE(ReadLiveStatus(path, &got, &err)) << err;
  EXPECT_EQ(got.stop_reason, "target reached");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) (void)e, ++files;
  EXPECT_EQ(files, 1);
}

TEST(LiveStatus, DocumentedKeys) {
  nlohmann::json j = nlohmann::json::parse(LiveStatusJson(Sample()));
  for (const char* key :
       {"pid", "session_id", "experiment_id", "phase", "phase_started_at", "run_started_at",
        "budget_s", "timeout_s", "progress", "updated_at", "stop_reason"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j.size(), 11u);
}

TEST(LiveStatus, MissingMalformedAndPartial) {
  TempDir dir;
  LiveStatus got;
  std::string err;
  EXPECT_FALSE(ReadLiveStatus(dir / "live.json", &got, &err));
  WriteText(dir / "live.json", "{\"pid\": 12");
  EXPECT_FALSE(ReadLiveStatus(dir / "live.json", &got, &err));
  WriteText(dir / "live.json", "{\"pid\": \"twelve\"}");
  EXPECT_FALSE(ReadLiveStatus(dir / "live.json", &got, &err));
  // Unknown keys are ignored, missing ones keep defaults.
  WriteText(dir / "live.json", "{\"pid\": 7, \"phase\": \"building\", \"future\": [1]}");
  ASSERT_TRUE(ReadLiveStatus(dir / "live.json", &got, &err)) << err;
  EXPECT_EQ(got.pid, 7);
  EXPECT_EQ(got.phase, "building");
  EXPECT_EQ(got.experiment_id, 0);
}

}  // namespace
}  // namespace ratchet
