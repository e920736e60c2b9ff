#include "store/tsv_export.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ratchet {
namespace {

Experiment Row(int id, Status status, std::optional<double> metric, const std::string& desc) {
  Experiment e;
  e.id = id;
  e.phase = Phase::kDone;
  e.status = status;
  e.metric = metric;
  e.description = desc;
  e.parent_commit = "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  e.candidate_commit = "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
  return e;
}

TEST(ResultsTsv, AutoresearchColumnsThenOtherMetrics) {
  Experiment base = Row(1, Status::kKeep, 0.9979, "baseline");
  base.baseline = true;
  base.candidate_commit.clear();  // the baseline is the parent itself
  base.peak_rss_mb = 2048;
  base.metrics = {{"val_bpb", 0.9979}, {"training_seconds", 300.1}};
  Experiment better = Row(2, Status::kKeep, 0.9932, "lr\t0.04\nand warmup");
  better.metrics = {{"val_bpb", 0.9932}, {"peak_vram_mb", 45060.2}, {"training_seconds", 300.4}};
  better.peak_rss_mb = 1000;
  Experiment crash = Row(3, Status::kCrash, std::nullopt, "double the width (OOM)");
  Experiment running = Row(4, Status::kNone, std::nullopt, "still running");
  running.phase = Phase::kRunning;

  EXPECT_EQ(ResultsTsv({base, better, crash, running}, "val_bpb"),
            "commit\tval_bpb\tmemory_gb\tstatus\tdescription\tpeak_vram_mb\ttraining_seconds\n"
            "1111111\t0.997900\t2.0\tkeep\tbaseline\t0.000000\t300.100000\n"
            "2222222\t0.993200\t44.0\tkeep\tlr 0.04 and warmup\t45060.200000\t300.400000\n"
            "2222222\t0.000000\t0.0\tcrash\tdouble the width (OOM)\t0.000000\t0.000000\n");
}

TEST(ResultsTsv, PeakMemMetricWinsOverRss) {
  Experiment e = Row(1, Status::kDiscard, 1.5, "x");
  e.metrics = {{"peak_mem_mb", 512}, {"peak_vram_mb", 4096}};
  e.peak_rss_mb = 9999;
  const std::string tsv = ResultsTsv({e}, "loss");
  EXPECT_NE(tsv.find("\t1.500000\t0.5\tdiscard\t"), std::string::npos) << tsv;
}

TEST(ResultsTsv, EmptyHasHeaderOnly) {
  EXPECT_EQ(ResultsTsv({}, "score"), "commit\tscore\tmemory_gb\tstatus\tdescription\n");
}

TEST(ExperimentsToJson, OneObjectPerExperimentWithEveryField) {
  Experiment a = Row(1, Status::kKeep, 0.5, "first");
  a.metrics = {{"val_bpb", 0.5}};
  a.params_json = "{\"lr\":0.1}";
  a.files_changed = {"train.py"};
  a.usage = {10, 20, 0.5};
  a.mechanisms = {"plateau"};
  Experiment b = Row(2, Status::kCrash, std::nullopt, "second");
  const std::string text = ExperimentsToJson({a, b});
  nlohmann::json j = nlohmann::json::parse(text);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["id"], 1);
  EXPECT_EQ(j[0]["status"], "keep");
  EXPECT_EQ(j[0]["phase"], "done");
  EXPECT_EQ(j[0]["metric"], 0.5);
  EXPECT_EQ(j[0]["metrics"]["val_bpb"], 0.5);
  EXPECT_EQ(j[0]["params"]["lr"], 0.1);
  EXPECT_EQ(j[0]["files_changed"][0], "train.py");
  EXPECT_EQ(j[0]["usage"]["output_tokens"], 20);
  EXPECT_EQ(j[0]["mechanisms"][0], "plateau");
  EXPECT_TRUE(j[1]["metric"].is_null());
  EXPECT_TRUE(j[1]["params"].is_null());
  // Every field of the struct is there.
  for (const char* key : {"id",         "session_id",    "phase",         "status",
                          "reason",     "baseline",      "parent_commit", "candidate_commit",
                          "proposer",   "description",   "hypothesis",    "params",
                          "metric",     "metric_stddev", "metric_n",      "metrics",
                          "started_at", "finished_at",   "propose_s",     "build_s",
                          "run_s",      "cpu_s",         "peak_rss_mb",   "exit_code",
                          "signal",     "diff_stat",     "files_changed", "log_path",
                          "usage",      "mechanisms"}) {
    EXPECT_TRUE(j[1].contains(key)) << key;
  }
  EXPECT_EQ(j[1].size(), 34u);
  // One experiment per line, for grep and jq -c alike.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  EXPECT_EQ(ExperimentsToJson({}), "[]");
}

TEST(ExperimentsToJson, InvalidUtf8DoesNotThrow) {
  Experiment a = Row(1, Status::kKeep, 1, std::string("bad \xff byte"));
  nlohmann::json j = nlohmann::json::parse(ExperimentsToJson({a}));
  EXPECT_EQ(j[0]["description"], "bad \xEF\xBF\xBD byte");
}

}  // namespace
}  // namespace ratchet
