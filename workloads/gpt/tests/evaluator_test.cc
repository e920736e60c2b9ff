// The evaluator with small hand-made logit sources: the score it computes,
// the windows and batches it sends, and the causality probes against
// sources that look ahead, mix sequences, or remember what they were asked.
#include "prepare/evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "prepare/protocol.h"

namespace gpt {
namespace {

constexpr int T = kEvalContext;

enum class Kind { kUniform, kCopy, kLookAhead, kMixing, kNan };

// Logits from simple rules. kCopy predicts that the next byte repeats the
// current one (causal); kLookAhead cheats by reading the next byte; kMixing
// lets sequence 0 leak into the others.
class Fake {
 public:
  explicit Fake(Kind kind) : kind_(kind) {}
  bool operator()(const uint8_t* tokens, int batch, int t_len, std::vector<float>* logits,
                  std::string*) {
    ++requests;
    batches.push_back(batch);
    for (int b = 0; b < batch; ++b) sent.emplace_back(tokens + b * t_len, tokens + (b + 1) * t_len);
    logits->assign(static_cast<size_t>(batch) * t_len * kVocab, 0.0f);
    float leak = 0;  // for kMixing: every byte of sequence 0
    for (int t = 0; t < t_len; ++t) leak += tokens[t] * 1e-3f;
    for (int b = 0; b < batch; ++b) {
      const uint8_t* seq = tokens + static_cast<size_t>(b) * t_len;
      for (int t = 0; t < t_len; ++t) {
        float* row = logits->data() + (static_cast<size_t>(b) * t_len + t) * kVocab;
        switch (kind_) {
          case Kind::kUniform:
            break;
          case Kind::kCopy:
            row[seq[t]] = 5;
            break;
          case Kind::kLookAhead:
            row[t + 1 < t_len ? seq[t + 1] : seq[t]] = 5;
            break;
          case Kind::kMixing:
            row[seq[t]] = 5 + (b > 0 ? leak : 0);
            break;
          case Kind::kNan:
            row[7] = std::numeric_limits<float>::quiet_NaN();
            break;
        }
      }
    }
    return true;
  }
  int requests = 0;
  std::vector<int> batches;
  std::vector<std::vector<uint8_t>> sent;

 private:
  Kind kind_;
};

// A source with a memory: looks ahead, and repeats its answers for the
// longest prefix a new sequence shares with one it has answered before.
class Mirror {
 public:
  bool operator()(const uint8_t* tokens, int batch, int t_len, std::vector<float>* logits,
                  std::string* err) {
    if (!inner_(tokens, batch, t_len, logits, err)) return false;
    for (int b = 0; b < batch; ++b) {
      std::vector<uint8_t> seq(tokens + b * t_len, tokens + (b + 1) * t_len);
      float* out = logits->data() + static_cast<size_t>(b) * t_len * kVocab;
      size_t best = 0, from = 0;
      for (size_t i = 0; i < seen_.size(); ++i) {
        size_t n = 0;
        while (n < seq.size() && seen_[i][n] == seq[n]) ++n;
        if (n > best) best = n, from = i;
      }
      if (best > 0) std::copy_n(answers_[from].data(), best * kVocab, out);
      seen_.push_back(seq);
      answers_.emplace_back(out, out + static_cast<size_t>(t_len) * kVocab);
    }
    return true;
  }

 private:
  Fake inner_{Kind::kLookAhead};
  std::vector<std::vector<uint8_t>> seen_;
  std::vector<std::vector<float>> answers_;
};

std::string Val(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += static_cast<char>("aabbbcdd ee"[i * 7 % 11]);
  return s;
}

// Letters from a pseudo-random sequence: no two windows alike.
std::string Text(size_t n) {
  std::string s;
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s += static_cast<char>('a' + x % 26);
  }
  return s;
}

template <typename Source>
LogitsFn Fn(Source& s) {
  return [&s](const uint8_t* tokens, int batch, int t_len, std::vector<float>* logits,
              std::string* err) { return s(tokens, batch, t_len, logits, err); };
}

bool Evaluate(const std::string& val, LogitsFn score, EvalResult* r, std::string* err,
              uint64_t seed = 1, const LogitsFn* probe = nullptr) {
  EvalOptions o;
  o.batch = 4;
  o.probes = 6;
  o.seed = seed;
  return EvaluateSplit(val, o, score, probe, r, err);
}

TEST(Score, UniformLogitsGiveEightBitsPerByte) {
  Fake model(Kind::kUniform);
  EvalResult r;
  std::string err;
  ASSERT_TRUE(Evaluate(Val(3 * (T + 1)), Fn(model), &r, &err)) << err;
  EXPECT_NEAR(r.bpb, 8.0, 1e-12);
  EXPECT_EQ(r.windows, 3u);
}

TEST(Score, MatchesHandComputedCrossEntropyOnNonOverlappingWindows) {
  const std::string val = Val(20 * (T + 1) + 5);  // 20 windows; the rest is not scored
  Fake model(Kind::kCopy);
  EvalResult r;
  std::string err;
  ASSERT_TRUE(Evaluate(val, Fn(model), &r, &err)) << err;
  const double z = std::log(std::exp(5.0) + 255);
  double nats = 0;
  for (size_t w = 0; w < 20; ++w) {
    for (size_t t = 0; t < T; ++t) {
      const size_t i = w * (T + 1) + t;
      nats += val[i + 1] == val[i] ? z - 5 : z;
    }
  }
  EXPECT_NEAR(r.bpb, nats / std::log(2.0) / (20 * T), 1e-12);
}

TEST(Score, IsTheSameWhateverTheOrderAndTheProbes) {
  const std::string val = Val(13 * (T + 1));
  double first = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Fake model(Kind::kCopy);
    EvalResult r;
    std::string err;
    ASSERT_TRUE(Evaluate(val, Fn(model), &r, &err, seed)) << err;
    if (seed == 1) first = r.bpb;
    EXPECT_EQ(r.bpb, first) << "seed " << seed;  // bit for bit
  }
}

TEST(Score, SendsFullBatchesOfWindowsAndProbeCopiesOnly) {
  const std::string val = Text(13 * (T + 1));
  Fake model(Kind::kCopy);
  EvalResult r;
  std::string err;
  ASSERT_TRUE(Evaluate(val, Fn(model), &r, &err)) << err;
  // 13 windows + 6 probes, padded with one more probe to 5 batches of 4.
  EXPECT_EQ(r.probes, 7);
  EXPECT_EQ(model.requests, 5);
  for (int b : model.batches) EXPECT_EQ(b, 4);
  std::map<size_t, int> asked;  // window -> times sent unchanged
  int copies = 0;
  for (const std::vector<uint8_t>& seq : model.sent) {
    ASSERT_EQ(seq.size(), static_cast<size_t>(T));
    int matched = 0;
    for (size_t w = 0; w < 13; ++w) {
      int diff = 0;
      for (int t = 0; t < T; ++t) diff += seq[t] != static_cast<uint8_t>(val[w * (T + 1) + t]);
      if (diff == 0) ++asked[w], matched = 1;
      if (diff == 1) ++copies, matched = 1;
    }
    EXPECT_EQ(matched, 1) << "a sequence that is neither a window nor a probe copy";
  }
  EXPECT_EQ(asked.size(), 13u);
  for (const auto& [w, n] : asked) EXPECT_EQ(n, 1) << "window " << w;
  EXPECT_EQ(copies, 7);
}

TEST(Score, RefusesNonFiniteLogitsAndShortSplits) {
  Fake model(Kind::kNan);
  EvalResult r;
  std::string err;
  EXPECT_FALSE(Evaluate(Val(2 * (T + 1)), Fn(model), &r, &err));
  EXPECT_NE(err.find("non-finite loss"), std::string::npos) << err;
  Fake uniform(Kind::kUniform);
  EXPECT_FALSE(Evaluate(Val(T), Fn(uniform), &r, &err));
  EXPECT_NE(err.find("shorter than one window"), std::string::npos) << err;
}

TEST(Probes, FailASourceThatLooksAhead) {
  Fake model(Kind::kLookAhead);
  EvalResult r;
  std::string err;
  EXPECT_FALSE(Evaluate(Val(12 * (T + 1)), Fn(model), &r, &err));
  EXPECT_NE(err.find("causality probe: changing byte"), std::string::npos) << err;
  EXPECT_NE(err.find("looks ahead at later bytes"), std::string::npos) << err;
}

TEST(Probes, FailASourceThatMixesTheSequencesOfABatch) {
  Fake model(Kind::kMixing);
  EvalResult r;
  std::string err;
  EXPECT_FALSE(Evaluate(Val(12 * (T + 1)), Fn(model), &r, &err));
  EXPECT_NE(err.find("causality probe"), std::string::npos) << err;
}

TEST(Probes, OnASecondInstanceCatchASourceWithAMemory) {
  const std::string val = Val(12 * (T + 1));
  // Answered by one process, the copies agree with their originals.
  Mirror alone;
  EvalResult r;
  std::string err;
  EXPECT_TRUE(Evaluate(val, Fn(alone), &r, &err)) << err;
  // Two independent instances cannot agree without being causal.
  Mirror main, prober;
  const LogitsFn probe = Fn(prober);
  EXPECT_FALSE(Evaluate(val, Fn(main), &r, &err, 1, &probe));
  EXPECT_NE(err.find("causality probe"), std::string::npos) << err;
  // And an honest source passes with two instances.
  Fake a(Kind::kCopy), b(Kind::kCopy);
  const LogitsFn honest_probe = Fn(b);
  EXPECT_TRUE(Evaluate(val, Fn(a), &r, &err, 1, &honest_probe)) << err;
  EXPECT_EQ(a.requests, 3);  // 12 windows in batches of 4
  EXPECT_EQ(b.requests, 2);  // 6 probes, padded to 8
}

class PlainProbe : public ::testing::Test {
 protected:
  std::vector<uint8_t> tokens_ = [] {
    const std::string v = Val(4 * T);
    return std::vector<uint8_t>(v.begin(), v.end());
  }();
};

TEST_F(PlainProbe, PassesACausalModel) {
  Fake model(Kind::kCopy);
  std::string err;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    EXPECT_TRUE(CheckCausality(Fn(model), tokens_.data(), 4, T, seed, &err)) << err;
  }
}

TEST_F(PlainProbe, FailsAModelThatLooksAhead) {
  Fake model(Kind::kLookAhead);
  std::string err;
  EXPECT_FALSE(CheckCausality(Fn(model), tokens_.data(), 4, T, 1, &err));
  EXPECT_NE(err.find("the model looks ahead at later bytes"), std::string::npos) << err;
}

TEST_F(PlainProbe, FailsAModelThatMixesSequences) {
  Fake model(Kind::kMixing);
  std::string err;
  bool failed = false;
  // The leak shows only when the probe changes a byte of sequence 0, so try
  // seeds until one does; a correct probe must then fail.
  for (uint64_t seed = 0; seed < 20 && !failed; ++seed) {
    failed = !CheckCausality(Fn(model), tokens_.data(), 4, T, seed, &err);
  }
  ASSERT_TRUE(failed);
  EXPECT_NE(err.find("mixes the sequences of a batch"), std::string::npos) << err;
}

}  // namespace
}  // namespace gpt
