#include "base/read_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ratchet {
namespace {

namespace fs = std::filesystem;

TEST(ReadWholeFileTest, ReadsEveryByteAndNamesWhatItCannotRead) {
  char tmpl[] = "/tmp/ratchet-read-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string bytes("a\0b\n\xff", 5);
  std::ofstream(dir + "/f", std::ios::binary) << bytes;
  std::string content, err;
  ASSERT_TRUE(ReadWholeFile(dir + "/f", &content, &err)) << err;
  EXPECT_EQ(content, bytes);
  std::ofstream(dir + "/empty", std::ios::binary).flush();
  ASSERT_TRUE(ReadWholeFile(dir + "/empty", &content));
  EXPECT_EQ(content, "");  // empty, not failed
  EXPECT_FALSE(ReadWholeFile(dir + "/missing", &content, &err));
  EXPECT_EQ(err, "cannot read " + dir + "/missing: No such file or directory");
  EXPECT_FALSE(ReadWholeFile(dir + "/missing", &content));  // no error wanted
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ratchet
