#include "outer/mechanism_store.h"

#include <gtest/gtest.h>

#include "core/testing/fakes.h"

namespace ratchet {
namespace {

// A coding agent writes in a mechanism's folder: whatever manifest.json
// holds is read back without throwing, wrong fields left at their defaults.
TEST(MechanismStoreTest, AManifestIsUntrustedInput) {
  FakeRepo repo({});
  FakeWorkspace workspace(&repo);
  MechanismStore store(&workspace);
  std::string err;
  const struct {
    const char* text;
    const char* origin;
    const char* state;
    int trials;
    size_t words;
  } rows[] = {
      {R"({"origin":"agent","state":"on","reason":"ok","trials":2,"command":["./m","-x"]})",
       "agent", "on", 2, 2},
      {R"({"origin":"agent","state":["on"],"reason":5,"trials":"many","command":["./m",3]})",
       "agent", "", 0, 0},
      {R"({"origin":7,"trials":-4,"command":"rm -rf /"})", "", "", 0, 0},
      {R"(["not", "an", "object"])", "", "", 0, 0},
      {"{not json", "", "", 0, 0},
      {R"({"trials":1e300})", "", "", 0, 0},
  };
  for (const auto& row : rows) {
    ASSERT_TRUE(store.Write("agent-1", "manifest.json", row.text, &err)) << err;
    MechanismManifest m;
    ASSERT_NO_THROW(m = store.Manifest("agent-1")) << row.text;
    EXPECT_EQ(m.origin, row.origin) << row.text;
    EXPECT_EQ(m.state, row.state) << row.text;
    EXPECT_EQ(m.trials, row.trials) << row.text;
    EXPECT_EQ(m.command.size(), row.words) << row.text;
  }
  EXPECT_EQ(store.Manifest("never-written").origin, "");
}

}  // namespace
}  // namespace ratchet
