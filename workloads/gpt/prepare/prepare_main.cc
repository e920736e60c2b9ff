// prepare: turns the corpus into the verified splits every later step reads.
//   prepare --janeausten "$(prepare/get-corpus)" [--out data]
//   prepare --text FILE [--out data]
#include <cstdio>
#include <cstring>
#include <string>

#include "corpus.h"
#include "manifest.h"
#include "protocol.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: prepare (--janeausten DIR | --text FILE) [--out DIR]\n"
               "  --janeausten DIR  the data directory printed by prepare/get-corpus\n"
               "  --text FILE       any UTF-8 text file instead\n"
               "  --out DIR         where to write the splits (default: data)\n");
  return 2;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "prepare: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string austen, text_file, out = "data";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Usage();
    if (arg == "--janeausten") {
      austen = argv[++i];
    } else if (arg == "--text") {
      text_file = argv[++i];
    } else if (arg == "--out") {
      out = argv[++i];
    } else {
      return Usage();
    }
  }
  if (austen.empty() == text_file.empty()) return Usage();

  std::string text, err, source;
  if (!austen.empty()) {
    if (!gpt::LoadJaneAusten(austen, &text, &err)) return Fail(err);
    source = "janeaustenr (Debian r-cran-janeaustenr, six novels)";
  } else {
    if (!gpt::LoadTextFile(text_file, &text, &err)) return Fail(err);
    source = "text file " + text_file;
  }
  gpt::Splits splits;
  if (!gpt::SplitCorpus(text, gpt::kEvalContext, &splits, &err)) {
    return Fail((austen.empty() ? text_file : austen) + ": " + err);
  }
  if (!gpt::WriteDataDir(
          out, source,
          {{"train.bin", splits.train}, {"val.bin", splits.val}, {"audit.bin", splits.audit}},
          &err)) {
    return Fail(err);
  }
  std::printf("prepare: %zu bytes from %s -> %s: train %zu, val %zu, audit %zu bytes\n",
              text.size(), source.c_str(), out.c_str(), splits.train.size(), splits.val.size(),
              splits.audit.size());
  return 0;
}
