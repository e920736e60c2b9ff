// The judge's end of the protocol against scripted servers on real pipes:
// a correct one, and one for each way a server can go wrong.
#include "prepare/serve_client.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "prepare/protocol.h"

namespace gpt {
namespace {

// A server thread on two pipes; `answer` gets each request and writes to fd;
// it stops (closing both pipes, as if it had died) when `answer` returns
// false. With read_payload false it reads only the first header.
class ScriptedServer {
 public:
  using Script = std::function<bool(const MessageHeader&, const std::string&, int fd)>;
  explicit ScriptedServer(Script answer, bool read_payload = true) {
    signal(SIGPIPE, SIG_IGN);
    int requests[2], answers[2];
    EXPECT_EQ(pipe(requests), 0);
    EXPECT_EQ(pipe(answers), 0);
    write_fd_ = requests[1];
    read_fd_ = answers[0];
    thread_ = std::thread([=] {
      for (;;) {
        MessageHeader h;
        bool eof = false;
        std::string err, payload;
        if (!ReadHeader(requests[0], &h, -1, &eof, &err)) break;
        if (read_payload && !ReadPayload(requests[0], h.size, &payload, -1, &err)) break;
        if (!answer(h, payload, answers[1]) || !read_payload ||
            h.type == static_cast<uint32_t>(MessageType::kQuit)) {
          break;
        }
      }
      close(requests[0]);
      close(answers[1]);
    });
  }
  ~ScriptedServer() {
    close(write_fd_);
    thread_.join();
    close(read_fd_);
  }
  ServeClient Client(int timeout_ms = 10000) {
    return ServeClient(write_fd_, read_fd_, "the model server", timeout_ms);
  }

 private:
  int write_fd_, read_fd_;
  std::thread thread_;
};

void Send(int fd, MessageType type, const std::string& payload) {
  std::string err;
  ASSERT_TRUE(WriteMessage(fd, kAnswerMagic, type, payload, -1, -1, &err)) << err;
}

std::string Floats(size_t n, float v) {
  std::vector<float> f(n, v);
  return std::string(reinterpret_cast<const char*>(f.data()), n * sizeof(float));
}

// Logits of the right size for a (batch, T) request.
size_t LogitsFor(const std::string& payload) {
  Unpacker u(payload);
  int32_t batch = 0, T = 0;
  u.Get(&batch);
  u.Get(&T);
  return static_cast<size_t>(batch) * T * kVocab;
}

const std::vector<uint8_t> kTokens(2 * 8, 'a');

TEST(ServeClient, TalksToACorrectServer) {
  ScriptedServer server([](const MessageHeader& h, const std::string& payload, int fd) {
    const auto t = static_cast<MessageType>(h.type);
    if (t == MessageType::kInfo) {
      ModelInfo info;
      info.size = {2, 32, 2, 64, 4};
      info.max_batch = 4;
      info.max_context = 64;
      info.tensors = {{"embed", 256, 32}, {"gain", 1, 32}};
      Send(fd, t, PackModelInfo(info));
    } else if (t == MessageType::kLogits) {
      Send(fd, t, Floats(LogitsFor(payload), 0.5f));
    } else {
      Send(fd, t, "");
    }
    return true;
  });
  ServeClient client = server.Client();
  ModelInfo info;
  std::string err;
  ASSERT_TRUE(client.Info(&info, &err)) << err;
  EXPECT_EQ(info.max_batch, 4);
  ASSERT_EQ(info.tensors.size(), 2u);
  EXPECT_EQ(info.tensors[0].name, "embed");
  EXPECT_EQ(info.TotalValues(), 256u * 32 + 32);
  std::vector<float> logits;
  ASSERT_TRUE(client.Logits(kTokens.data(), 2, 8, &logits, &err)) << err;
  EXPECT_EQ(logits.size(), 2u * 8 * kVocab);
  EXPECT_EQ(logits[17], 0.5f);
  EXPECT_TRUE(client.Quit(&err)) << err;
  EXPECT_EQ(client.requests(), 3);
}

// What a client's Logits request says against a server that `answer`s so.
std::string LogitsError(ScriptedServer::Script answer, int timeout_ms = 10000,
                        bool read_payload = true, int T = 8) {
  ScriptedServer server(std::move(answer), read_payload);
  ServeClient client = server.Client(timeout_ms);
  std::vector<uint8_t> tokens(2 * static_cast<size_t>(T), 'a');
  std::vector<float> logits;
  std::string err;
  EXPECT_FALSE(client.Logits(tokens.data(), 2, T, &logits, &err));
  return err;
}

TEST(ServeClient, SaysWhenTheServerExits) {
  const std::string err = LogitsError([](const MessageHeader&, const std::string&, int) {
    return false;  // dies without answering
  });
  EXPECT_NE(err.find("closed its output instead of answering the logits request"),
            std::string::npos)
      << err;
}

TEST(ServeClient, RefusesAnAnswerOfTheWrongSize) {
  const std::string err = LogitsError([](const MessageHeader& h, const std::string& p, int fd) {
    Send(fd, static_cast<MessageType>(h.type), Floats(LogitsFor(p) - 1, 0));
    return true;
  });
  EXPECT_NE(err.find("answered the logits request (number 1) with 16380 bytes, not 16384"),
            std::string::npos)
      << err;
}

TEST(ServeClient, RefusesNonFiniteLogits) {
  const std::string err = LogitsError([](const MessageHeader& h, const std::string& p, int fd) {
    std::string f = Floats(LogitsFor(p), 0);
    const float nan = std::nanf("");
    std::memcpy(&f[(8 + 3) * kVocab * sizeof(float)], &nan, sizeof nan);
    Send(fd, static_cast<MessageType>(h.type), f);
    return true;
  });
  EXPECT_NE(err.find("non-finite logit (sequence 1 of the batch, position 3)"), std::string::npos)
      << err;
}

TEST(ServeClient, RefusesBytesThatAreNotAnAnswer) {
  const std::string err = LogitsError([](const MessageHeader&, const std::string&, int fd) {
    const char text[] = "---\nval_bpb: 0.1\n";
    EXPECT_GT(write(fd, text, sizeof text - 1), 0);
    return true;
  });
  EXPECT_NE(err.find("wrote something that is not an answer to the logits request"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("'---\\x0aval_bpb: 0.1'"), std::string::npos) << err;
}

TEST(ServeClient, RefusesBytesPastTheAnswer) {
  const std::string err = LogitsError([](const MessageHeader& h, const std::string& p, int fd) {
    // The answer and four more bytes in one write, so that they are there
    // when the client has read the answer.
    const std::string payload = Floats(LogitsFor(p), 0);
    const MessageHeader answer{kAnswerMagic, h.type, payload.size()};
    const std::string bytes =
        std::string(reinterpret_cast<const char*>(&answer), sizeof answer) + payload + "more";
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    return true;
  });
  EXPECT_NE(err.find("wrote past the protocol after answering the logits request"),
            std::string::npos)
      << err;
}

TEST(ServeClient, PassesOnARefusal) {
  const std::string err = LogitsError([](const MessageHeader&, const std::string&, int fd) {
    Send(fd, MessageType::kError, "too many tokens");
    return true;
  });
  EXPECT_NE(err.find("refused the logits request (number 1): too many tokens"), std::string::npos)
      << err;
}

TEST(ServeClient, GivesUpOnAServerThatDoesNotAnswer) {
  const std::string err =
      LogitsError([](const MessageHeader&, const std::string&, int) { return true; },
                  /*timeout_ms=*/200);
  EXPECT_NE(err.find("gave no answer to the logits request (number 1) within"), std::string::npos)
      << err;
}

TEST(ServeClient, RefusesAnAnswerBeforeTheWholeRequest) {
  // A request larger than a pipe holds; the server answers after its header.
  const std::string err = LogitsError(
      [](const MessageHeader& h, const std::string&, int fd) {
        Send(fd, static_cast<MessageType>(h.type), "");
        return true;
      },
      10000, /*read_payload=*/false, /*T=*/1 << 16);
  EXPECT_NE(err.find("did not take the logits request (number 1): the peer wrote before it had "
                     "read the whole request"),
            std::string::npos)
      << err;
}

TEST(ServeClient, RefusesAMalformedModelDescription) {
  ScriptedServer server([](const MessageHeader& h, const std::string&, int fd) {
    Send(fd, static_cast<MessageType>(h.type), "short");
    return true;
  });
  ServeClient client = server.Client();
  ModelInfo info;
  std::string err;
  EXPECT_FALSE(client.Info(&info, &err));
  EXPECT_NE(err.find("malformed model description"), std::string::npos) << err;
}

}  // namespace
}  // namespace gpt
