#include "web/assets.h"

#include <gtest/gtest.h>

#include <string>

namespace ratchet {
namespace {

TEST(AssetsTest, PageIsEmbeddedAndSelfContained) {
  const Asset* index = FindAsset("/");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->path, "/index.html");
  EXPECT_NE(index->body.find("<script src=\"app.js{{Q}}\">"), std::string_view::npos);
  ASSERT_NE(FindAsset("/app.js"), nullptr);
  ASSERT_NE(FindAsset("/app.css"), nullptr);
  EXPECT_EQ(FindAsset("/app.js")->content_type.substr(0, 15), "text/javascript");
  // Works with no network: nothing is loaded from another origin.
  for (const Asset& asset : EmbeddedAssets()) {
    EXPECT_EQ(asset.body.find("http://"), std::string_view::npos) << asset.path;
    EXPECT_EQ(asset.body.find("https://"), std::string_view::npos) << asset.path;
    EXPECT_EQ(asset.body.find("//cdn"), std::string_view::npos) << asset.path;
  }
}

TEST(AssetsTest, TheDemoPageIsEmbedded) {
  const Asset* demo = FindAsset("/demo");
  ASSERT_NE(demo, nullptr);
  EXPECT_EQ(demo->content_type.substr(0, 9), "text/html");
  EXPECT_NE(demo->body.find("<script src=\"demo.js{{Q}}\">"), std::string_view::npos);
  ASSERT_NE(FindAsset("/demo.js"), nullptr);
  ASSERT_NE(FindAsset("/demo.css"), nullptr);
  EXPECT_EQ(FindAsset("/demo.html"), nullptr) << "one name for the page";
}

TEST(AssetsTest, OnlyExactPaths) {
  for (const char* path : {"/../app.js", "/./app.js", "app.js", "/app.js/", "/APP.JS",
                           "/assets/app.js", "//app.js", "/app.js%00", "/etc/passwd", ""}) {
    EXPECT_EQ(FindAsset(path), nullptr) << path;
  }
}

}  // namespace
}  // namespace ratchet
