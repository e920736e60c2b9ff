// `ratchet plot` on a recorded loop: the real ledger, read back read-only.
#include "web/plot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "store/sqlite_ledger.h"
#include "web/loop_directory.h"
#include "web/svg_painter.h"
#include "web/testing/loop_fixture.h"

namespace ratchet {
namespace {

namespace fs = std::filesystem;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PlotTest, RecordedLoop) {
  fs::path dir = fs::temp_directory_path() / ("ratchet_plotloop_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / ".ratchet");
  std::string err;
  FixtureSummary summary;
  {
    std::unique_ptr<SqliteLedger> writer;
    ASSERT_TRUE(SqliteLedger::Open((dir / ".ratchet" / "ledger.db").string(), true, false, &writer)
                    .Report(&err))
        << err;
    FixtureOptions options;
    options.git = false;
    ASSERT_TRUE(WriteLoopFixture(dir.string(), writer.get(), options, &summary, &err)) << err;
  }
  std::unique_ptr<LoopDirectory> loop;
  ASSERT_TRUE(OpenLoopDirectory(dir.string(), &loop, &err)) << err;
  LedgerView ledger;
  ASSERT_TRUE(loop->LoadLedger(&ledger, &err)) << err;
  LoopSettings settings = loop->Settings();
  EXPECT_EQ(settings.metric_name, "val_bpb");
  ASSERT_TRUE(settings.target.has_value());
  ChartOptions options{settings.metric_name, settings.minimize, settings.target, ""};

  std::string out = (dir / "progress.svg").string();
  ASSERT_TRUE(WritePlot(ledger.experiments, options, out, PlotSize{}, &err)) << err;
  std::ifstream in(out);
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t kept = Count(svg, "<circle class=\"kept\"");
  size_t others = Count(svg, "<circle class=\"point");
  size_t failed = Count(svg, "<path class=\"crash\"");
  EXPECT_EQ(kept + others + failed, 30u);
  EXPECT_EQ(kept, static_cast<size_t>(summary.kept));
  EXPECT_EQ(failed, static_cast<size_t>(summary.failed));
  // Every kept experiment is labelled with its description.
  for (const Experiment& e : ledger.experiments) {
    if (e.status != Status::kKeep) continue;
    EXPECT_NE(svg.find(">" + XmlEscape(e.description) + "</text>"), std::string::npos)
        << "#" << e.id << " " << e.description;
  }
  EXPECT_NE(svg.find(">target</text>"), std::string::npos);
  ASSERT_TRUE(
      WritePlot(ledger.experiments, options, (dir / "progress.png").string(), PlotSize{}, &err))
      << err;
  EXPECT_GT(fs::file_size(dir / "progress.png"), 10000u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ratchet
