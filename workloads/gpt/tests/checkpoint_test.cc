// The checkpoint format: a round trip through a small model, and refusals
// of files that are not checkpoints or not of this model.
#include "prepare/checkpoint.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace gpt {
namespace {

// Two tensors whose shapes follow the width: enough to test the format.
class TinyModel : public Model {
 public:
  explicit TinyModel(int width) : size_{1, width, 1, 8, 2}, a_(3 * width), b_(width) {}
  ModelSize size() const override { return size_; }
  int max_batch() const override { return 2; }
  int max_context() const override { return 8; }
  void Logits(const uint8_t*, int, int, float*) override {}
  double ForwardBackward(const uint8_t*, const uint8_t*, int, int) override { return 0; }
  std::vector<ParamView> Params() override {
    return {{"a", a_.data(), nullptr, 3, size_.width}, {"b", b_.data(), nullptr, 1, size_.width}};
  }
  std::vector<float>& a() { return a_; }

 private:
  ModelSize size_;
  std::vector<float> a_, b_;
};

TEST(Checkpoint, RoundTrip) {
  test::TempDir dir;
  const std::string path = dir.path() + "/model.bin";
  TinyModel model(4);
  for (size_t i = 0; i < model.a().size(); ++i) model.a()[i] = 0.5f * i;
  std::string err;
  ASSERT_TRUE(WriteCheckpoint(model, path, &err)) << err;
  CheckpointHeader h;
  ASSERT_TRUE(ReadCheckpointHeader(path, &h, &err)) << err;
  EXPECT_EQ(h.size.width, 4);
  EXPECT_EQ(h.size.context, 8);
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "a");
  EXPECT_EQ(h.tensors[0].rows, 3);
  EXPECT_EQ(h.TotalValues(), 16u);
  TinyModel loaded(h.size.width);
  ASSERT_TRUE(LoadCheckpointValues(path, h, loaded, &err)) << err;
  EXPECT_EQ(loaded.a(), model.a());
}

TEST(Checkpoint, RefusesTruncatedPaddedAndForeignFiles) {
  test::TempDir dir;
  const std::string path = dir.path() + "/model.bin";
  TinyModel model(4);
  std::string err;
  ASSERT_TRUE(WriteCheckpoint(model, path, &err)) << err;
  const std::string good = test::ReadFile(path);
  CheckpointHeader h;

  test::WriteFile(path, good.substr(0, good.size() - 1));
  EXPECT_FALSE(ReadCheckpointHeader(path, &h, &err));
  EXPECT_NE(err.find("its header describes"), std::string::npos) << err;
  test::WriteFile(path, good + "x");
  EXPECT_FALSE(ReadCheckpointHeader(path, &h, &err));
  test::WriteFile(path, "GPTCKPT1" + good.substr(8));
  EXPECT_FALSE(ReadCheckpointHeader(path, &h, &err));
  EXPECT_NE(err.find("wrong magic"), std::string::npos) << err;
  EXPECT_FALSE(ReadCheckpointHeader(dir.path() + "/none.bin", &h, &err));
  EXPECT_NE(err.find("cannot open the checkpoint"), std::string::npos) << err;

  // A checkpoint of another model: the shapes say so.
  test::WriteFile(path, good);
  ASSERT_TRUE(ReadCheckpointHeader(path, &h, &err)) << err;
  TinyModel wider(5);
  EXPECT_FALSE(LoadCheckpointValues(path, h, wider, &err));
  EXPECT_NE(err.find("tensor 0 is a (3 x 4), this train.cpp's is a (3 x 5)"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace gpt
