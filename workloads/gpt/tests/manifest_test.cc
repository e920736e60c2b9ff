// The data manifest: written with the splits, checked by every reader.
#include "prepare/manifest.h"

#include <gtest/gtest.h>

#include <string>

#include "prepare/sha256.h"
#include "test_util.h"

namespace gpt {
namespace {

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    ASSERT_TRUE(WriteDataDir(dir_.path(), "test corpus",
                             {{"train.bin", "the training text"}, {"val.bin", "validation"}}, &err))
        << err;
  }
  std::string Path(const std::string& name) { return dir_.path() + "/" + name; }
  test::TempDir dir_;
};

TEST(Sha256, KnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(ManifestTest, ReadsBackWhatWasWritten) {
  Manifest m;
  std::string err, content;
  ASSERT_TRUE(ReadManifest(dir_.path(), &m, &err)) << err;
  EXPECT_EQ(m.source, "test corpus");
  ASSERT_EQ(m.files.size(), 2u);
  EXPECT_EQ(m.files[1].file, "val.bin");
  EXPECT_EQ(m.files[1].size, 10u);
  EXPECT_EQ(m.files[1].sha256, Sha256Hex("validation"));
  ASSERT_TRUE(ReadVerified(dir_.path(), "val.bin", &content, &err)) << err;
  EXPECT_EQ(content, "validation");
}

TEST_F(ManifestTest, RefusesChangedContentOfTheSameSize) {
  test::WriteFile(Path("val.bin"), "Validation");
  std::string err, content;
  EXPECT_FALSE(ReadVerified(dir_.path(), "val.bin", &content, &err));
  EXPECT_NE(err.find("does not match its SHA-256"), std::string::npos) << err;
  EXPECT_NE(err.find("make data"), std::string::npos) << err;
}

TEST_F(ManifestTest, RefusesChangedSize) {
  test::WriteFile(Path("train.bin"), "the training text, longer");
  std::string err, content;
  EXPECT_FALSE(ReadVerified(dir_.path(), "train.bin", &content, &err));
  EXPECT_NE(err.find("has 25 bytes, the manifest says 17"), std::string::npos) << err;
}

TEST_F(ManifestTest, RefusesUnlistedAndMissingFiles) {
  std::string err, content;
  EXPECT_FALSE(ReadVerified(dir_.path(), "audit.bin", &content, &err));
  EXPECT_NE(err.find("not listed"), std::string::npos) << err;
  std::filesystem::remove(Path("val.bin"));
  EXPECT_FALSE(ReadVerified(dir_.path(), "val.bin", &content, &err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
}

TEST_F(ManifestTest, RefusesEditedOrMissingManifest) {
  std::string text = test::ReadFile(Path(kManifestName));
  text.replace(text.find("file val.bin 10"), 15, "file val.bin 1x");
  test::WriteFile(Path(kManifestName), text);
  Manifest m;
  std::string err;
  EXPECT_FALSE(ReadManifest(dir_.path(), &m, &err));
  EXPECT_NE(err.find("manifest.txt:5: expected 'file NAME SIZE SHA256'"), std::string::npos) << err;
  std::filesystem::remove(Path(kManifestName));
  EXPECT_FALSE(ReadManifest(dir_.path(), &m, &err));
  EXPECT_NE(err.find("no prepared data here"), std::string::npos) << err;
}

}  // namespace
}  // namespace gpt
