#include "outer/protocol.h"

#include <gtest/gtest.h>

#include "outer/test_trace.h"

namespace ratchet {
namespace {

TEST(Protocol, RequestsCarryTheLoop) {
  const SearchSpace space = testing::SmallSpace();
  testing::Trace t;
  t.Baseline(10).Step(9, testing::P(0.5, 0.5));
  const nlohmann::json hello = HelloRequest(t.config, &space);
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["goal"], "min");
  EXPECT_EQ(hello["params"][2]["name"], "N");
  EXPECT_EQ(hello["params"][2]["type"], "int");
  const nlohmann::json before = BeforeProposeRequest(t.View(), 0);
  EXPECT_EQ(before["experiment"], 3);
  EXPECT_EQ(before["incumbent"]["params"]["X"], 0.5);
  EXPECT_EQ(before["incumbent"]["status"], "keep");
  const nlohmann::json result = OnResultRequest(t.history[0], true);
  EXPECT_TRUE(result["result"]["params"].is_null());
  EXPECT_TRUE(result["replay"]);
  CandidateView c;
  c.diff = "bytes \xff\xfe not UTF-8";
  EXPECT_NE(ToLine(OnCandidateRequest(c)).find("bytes"), std::string::npos);
  EXPECT_EQ(ToLine(OnCandidateRequest(c)).find('\n'), std::string::npos);
}

TEST(Protocol, HelloMustListKnownHooks) {
  std::vector<Hook> hooks;
  std::string err;
  ASSERT_TRUE(ParseHelloAnswer(R"({"hooks":["on_result","accept","on_result"]})", &hooks, &err));
  EXPECT_EQ(hooks, (std::vector<Hook>{Hook::kOnResult, Hook::kAccept}));
  EXPECT_FALSE(ParseHelloAnswer(R"({"hooks":[]})", &hooks, &err));
  EXPECT_FALSE(ParseHelloAnswer(R"({"hooks":["teleport"]})", &hooks, &err));
  EXPECT_NE(err.find("unknown hook \"teleport\""), std::string::npos) << err;
  EXPECT_FALSE(ParseHelloAnswer("ready!", &hooks, &err));
  EXPECT_NE(err.find("not JSON"), std::string::npos) << err;
}

TEST(Protocol, BeforeProposeAnswersAreCheckedAgainstTheSpace) {
  const SearchSpace space = testing::SmallSpace();
  const Point anchor = {0.5, 0.5, 5};
  Guidance g;
  std::string err;
  ASSERT_TRUE(ParseBeforeProposeAnswer(
      R"({"guidance":"go wide","search_hints":{"exploration":0.9,"avoid":[{"X":0.1}]}})", &space,
      anchor, &g, &err))
      << err;
  EXPECT_EQ(g.text, std::vector<std::string>{"go wide"});
  EXPECT_NE(g.search_hints_json.find("exploration"), std::string::npos);
  EXPECT_TRUE(ParseBeforeProposeAnswer("{}", &space, anchor, &g, &err));
  EXPECT_FALSE(ParseBeforeProposeAnswer(R"({"search_hints":{"exploration":3}})", &space, anchor,
                                        &g, &err));
  EXPECT_NE(err.find("exploration"), std::string::npos) << err;
  EXPECT_FALSE(ParseBeforeProposeAnswer(R"({"search_hints":{"next":{"Z":1}}})", &space, anchor,
                                        &g, &err));
  EXPECT_FALSE(ParseBeforeProposeAnswer(R"({"search_hints":{"step":0.1}})", nullptr, anchor, &g,
                                        &err));
  EXPECT_NE(err.find("not the search"), std::string::npos) << err;
  EXPECT_FALSE(ParseBeforeProposeAnswer(R"({"guidance":[1]})", &space, anchor, &g, &err));
  EXPECT_FALSE(ParseBeforeProposeAnswer(R"({"advice":"x"})", &space, anchor, &g, &err));
  EXPECT_NE(err.find("unknown key 'advice'"), std::string::npos) << err;
}

TEST(Protocol, CandidateAndAcceptAnswers) {
  const SearchSpace space = testing::SmallSpace();
  const Point anchor = {0.5, 0.5, 5};
  CandidateVerdict v;
  std::string err;
  ASSERT_TRUE(ParseOnCandidateAnswer(R"({"veto":true,"reason":"no"})", &space, anchor, &v, &err));
  EXPECT_TRUE(v.veto);
  EXPECT_EQ(v.reason, "no");
  ASSERT_TRUE(ParseOnCandidateAnswer(R"({"params":{"X":0.25}})", &space, anchor, &v, &err)) << err;
  EXPECT_EQ(v.rewritten_params_json, R"({"N":5,"X":0.25,"Y":0.5})");
  EXPECT_FALSE(ParseOnCandidateAnswer(R"({"params":{"X":7}})", &space, anchor, &v, &err));
  EXPECT_FALSE(ParseOnCandidateAnswer(R"({"veto":"yes"})", &space, anchor, &v, &err));

  AcceptVerdict a;
  ASSERT_TRUE(ParseAcceptAnswer(R"({"decision":"discard","reason":"noise"})", &a, &err));
  EXPECT_TRUE(a.decided);
  EXPECT_FALSE(a.keep);
  ASSERT_TRUE(ParseAcceptAnswer(R"({"decision":"default"})", &a, &err));
  EXPECT_FALSE(a.decided);
  EXPECT_FALSE(ParseAcceptAnswer(R"({"decision":"maybe"})", &a, &err));
  EXPECT_FALSE(ParseAcceptAnswer("{}", &a, &err));

  EXPECT_TRUE(ParseOnResultAnswer("{}", &err));
  EXPECT_FALSE(ParseOnResultAnswer(R"({"ok":1})", &err));
  EXPECT_FALSE(ParseOnResultAnswer("[]", &err));
}

}  // namespace
}  // namespace ratchet
