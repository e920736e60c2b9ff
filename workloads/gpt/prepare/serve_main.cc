// build/serve: train.cpp's model behind the protocol of serve_protocol.h,
// answering a fixed judge on stdin/stdout. It opens no file but its
// checkpoint (the engine shows it nothing else) and decides nothing: it
// answers what it is asked.
//   serve CHECKPOINT    the model of CHECKPOINT: info, logits, quit
//   serve --gradcheck   no model until a `make` request; then also
//                       set-param and forward-backward (trusted/gradcheck)
// A malformed request ends the server with one line on stderr and exit 1;
// a request the model cannot serve (too large a batch, a checkpoint that
// does not load) is answered with an error message the judge prints.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "model_api.h"
#include "protocol.h"
#include "serve_protocol.h"

namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "serve: %s\n", message.c_str());
  std::exit(1);
}

class Server {
 public:
  Server(int in, int out, bool gradcheck) : in_(in), out_(out), gradcheck_(gradcheck) {}

  void LoadCheckpoint(const std::string& path) {
    gpt::CheckpointHeader header;
    std::string err;
    if (!gpt::ReadCheckpointHeader(path, &header, &err)) {
      load_error_ = err;
      return;
    }
    model_ = MakeModel(header.size, 0);
    if (!gpt::LoadCheckpointValues(path, header, *model_, &err)) {
      model_.reset();
      load_error_ = err;
    }
  }

  // Answers requests until quit or the end of stdin.
  void Serve() {
    for (;;) {
      gpt::MessageHeader h;
      bool eof = false;
      std::string err, payload;
      if (!gpt::ReadHeader(in_, &h, -1, &eof, &err)) {
        if (eof) std::exit(0);  // the judge closed its end: done
        Die("malformed request: " + err);
      }
      if (h.magic != gpt::kRequestMagic) {
        Die("malformed request: the header does not start with the request magic "
            "(is something other than trusted/evaluate or trusted/gradcheck writing to it?)");
      }
      if (h.size > gpt::kMaxMessageBytes) {
        Die("malformed request: " + std::to_string(h.size) + " bytes of payload is over the limit");
      }
      if (!gpt::ReadPayload(in_, h.size, &payload, -1, &err)) Die("malformed request: " + err);
      try {
        Dispatch(h.type, payload);
      } catch (const std::exception& e) {
        Answer(gpt::MessageType::kError, std::string("the model threw: ") + e.what());
      }
    }
  }

 private:
  void Answer(gpt::MessageType type, const std::string& payload) {
    std::string err;
    if (!gpt::WriteMessage(out_, gpt::kAnswerMagic, type, payload, -1, -1, &err)) {
      Die("cannot answer: " + err);
    }
  }
  void Refuse(const std::string& why) { Answer(gpt::MessageType::kError, why); }
  [[noreturn]] void Malformed(uint32_t type, const std::string& why) {
    Die(std::string("malformed ") + gpt::MessageName(type) + " request: " + why);
  }

  std::string Info() {
    gpt::ModelInfo info;
    info.size = model_->size();
    info.max_batch = model_->max_batch();
    info.max_context = model_->max_context();
    info.tensors = gpt::TensorsOf(*model_);
    return gpt::PackModelInfo(info);
  }

  // Reads (batch, T) and checks them against the model.
  bool Shape(uint32_t type, gpt::Unpacker* u, int* batch, int* T) {
    int32_t b = 0, t = 0;
    if (!u->Get(&b) || !u->Get(&t) || b < 1 || t < 1) Malformed(type, "no valid batch and length");
    if (b > model_->max_batch() || t > model_->max_context()) {
      Refuse("the model accepts at most " + std::to_string(model_->max_batch()) + " x " +
             std::to_string(model_->max_context()) + " tokens, not " + std::to_string(b) + " x " +
             std::to_string(t));
      return false;
    }
    *batch = b;
    *T = t;
    return true;
  }

  void Dispatch(uint32_t type, const std::string& payload) {
    using gpt::MessageType;
    gpt::Unpacker u(payload);
    const auto t = static_cast<MessageType>(type);
    if (t == MessageType::kQuit) {
      Answer(MessageType::kQuit, "");
      std::exit(0);
    }
    if (t == MessageType::kMake) {
      if (!gradcheck_) return Refuse("make is answered only by serve --gradcheck");
      gpt::ModelSize size;
      uint64_t seed = 0;
      if (!gpt::UnpackModelSize(&u, &size) || !u.Get(&seed) || u.left() != 0) {
        Malformed(type, "no valid model size and seed");
      }
      model_ = MakeModel(size, seed);
      return Answer(MessageType::kMake, Info());
    }
    if (t != MessageType::kInfo && t != MessageType::kLogits && t != MessageType::kSetParam &&
        t != MessageType::kForwardBackward) {
      Die("malformed request: unknown type " + std::to_string(type));
    }
    if (!model_) {
      return Refuse(load_error_.empty() ? "no model yet (send make first)"
                                        : "cannot load the checkpoint: " + load_error_);
    }
    if (t == MessageType::kInfo) return Answer(t, Info());
    if (t == MessageType::kLogits) {
      int batch = 0, T = 0;
      if (!Shape(type, &u, &batch, &T)) return;
      const size_t n = static_cast<size_t>(batch) * T;
      const char* tokens = u.Take(n);
      if (tokens == nullptr || u.left() != 0) Malformed(type, "the tokens do not match batch x T");
      std::vector<float> logits(n * gpt::kVocab);
      model_->Logits(reinterpret_cast<const uint8_t*>(tokens), batch, T, logits.data());
      return Answer(t, std::string(reinterpret_cast<const char*>(logits.data()),
                                   logits.size() * sizeof(float)));
    }
    if (!gradcheck_)
      return Refuse(std::string(gpt::MessageName(type)) + " is answered only by serve --gradcheck");
    std::vector<gpt::ParamView> params = model_->Params();
    if (t == MessageType::kSetParam) {
      uint32_t index = 0;
      if (!u.Get(&index) || index >= params.size()) Malformed(type, "no such tensor");
      const gpt::ParamView& p = params[index];
      if (u.left() != p.size() * sizeof(float)) Malformed(type, "wrong number of values");
      u.GetBytes(p.value, p.size() * sizeof(float));
      return Answer(t, "");
    }
    int batch = 0, T = 0;
    if (!Shape(type, &u, &batch, &T)) return;
    const size_t n = static_cast<size_t>(batch) * T;
    const char* inputs = u.Take(n);
    const char* targets = u.Take(n);
    if (targets == nullptr || u.left() != 0) Malformed(type, "inputs and targets do not match");
    const double loss =
        model_->ForwardBackward(reinterpret_cast<const uint8_t*>(inputs),
                                reinterpret_cast<const uint8_t*>(targets), batch, T);
    gpt::Packer p;
    p.Put(loss);
    for (const gpt::ParamView& v : params) p.PutBytes(v.grad, v.size() * sizeof(float));
    Answer(t, p.bytes());
  }

  int in_, out_;
  bool gradcheck_;
  std::unique_ptr<gpt::Model> model_;
  std::string load_error_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string arg = argc == 2 ? argv[1] : "";
  if (arg.empty() || (arg[0] == '-' && arg != "--gradcheck")) {
    std::fprintf(stderr,
                 "usage: %s CHECKPOINT | %s --gradcheck  (requests on stdin, answers on "
                 "stdout; see prepare/serve_protocol.h)\n",
                 argv[0], argv[0]);
    return 2;
  }
  // The protocol keeps stdin and stdout to itself: the model's own prints go
  // to stderr, and a read of stdin finds nothing, so neither can disturb
  // the stream.
  const int in = dup(0), out = dup(1);
  if (in < 0 || out < 0 || dup2(2, 1) < 0) Die("cannot set up stdin and stdout");
  const int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, 0);
  signal(SIGPIPE, SIG_DFL);
  Server server(in, out, arg == "--gradcheck");
  if (arg != "--gradcheck") server.LoadCheckpoint(arg);
  server.Serve();
}
