#include "checkpoint.h"

#include <cstdio>
#include <cstring>
#include <memory>

#include "protocol.h"

namespace gpt {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'T', 'C', 'K', 'P', 'T', '2'};

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

template <typename T>
bool Read(FILE* f, T* v) {
  return std::fread(v, sizeof *v, 1, f) == 1;
}

template <typename T>
bool Write(FILE* f, const T& v) {
  return std::fwrite(&v, sizeof v, 1, f) == 1;
}

std::string Shape(const TensorInfo& t) {
  return t.name + " (" + std::to_string(t.rows) + " x " + std::to_string(t.cols) + ")";
}

}  // namespace

uint64_t CheckpointHeader::TotalValues() const {
  uint64_t n = 0;
  for (const TensorInfo& t : tensors) n += t.size();
  return n;
}

std::vector<TensorInfo> TensorsOf(Model& model) {
  std::vector<TensorInfo> out;
  for (const ParamView& p : model.Params()) out.push_back({p.name, p.rows, p.cols});
  return out;
}

bool WriteCheckpoint(Model& model, const std::string& path, std::string* err) {
  const std::string tmp = path + ".tmp";
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) {
    *err = "cannot write " + tmp + " (does the run directory exist and is it writable?)";
    return false;
  }
  const ModelSize s = model.size();
  const std::vector<ParamView> params = model.Params();
  bool ok = std::fwrite(kMagic, 1, sizeof kMagic, f.get()) == sizeof kMagic;
  for (int v : {s.depth, s.width, s.heads, s.context, s.batch}) {
    ok = ok && Write(f.get(), static_cast<int32_t>(v));
  }
  ok = ok && Write(f.get(), static_cast<uint32_t>(params.size()));
  for (const ParamView& p : params) {
    ok = ok && Write(f.get(), static_cast<uint32_t>(p.name.size())) &&
         std::fwrite(p.name.data(), 1, p.name.size(), f.get()) == p.name.size() &&
         Write(f.get(), static_cast<int32_t>(p.rows)) &&
         Write(f.get(), static_cast<int32_t>(p.cols));
  }
  for (const ParamView& p : params) {
    ok = ok && std::fwrite(p.value, sizeof(float), p.size(), f.get()) == p.size();
  }
  ok = std::fclose(f.release()) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    *err = "cannot write " + path + " (disk full?)";
    return false;
  }
  return true;
}

bool ReadCheckpointHeader(const std::string& path, CheckpointHeader* h, std::string* err) {
  *h = CheckpointHeader();
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    *err = "cannot open the checkpoint " + path;
    return false;
  }
  auto bad = [&](const std::string& why) {
    *err = path + " is not a checkpoint written by prepare/checkpoint.cc: " + why;
    return false;
  };
  char magic[sizeof kMagic];
  if (std::fread(magic, 1, sizeof magic, f.get()) != sizeof magic ||
      std::memcmp(magic, kMagic, sizeof magic) != 0) {
    return bad("wrong magic");
  }
  int32_t dims[5];
  for (int32_t& d : dims) {
    if (!Read(f.get(), &d) || d < 1 || d > kMaxModelDim) return bad("model sizes out of range");
  }
  h->size = ModelSize{dims[0], dims[1], dims[2], dims[3], dims[4]};
  uint32_t n = 0;
  if (!Read(f.get(), &n) || n == 0 || n > kMaxTensors) return bad("tensor count out of range");
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t len = 0;
    TensorInfo t;
    if (!Read(f.get(), &len) || len == 0 || len > kMaxTensorName)
      return bad("a tensor name too long");
    t.name.resize(len);
    int32_t rows = 0, cols = 0;
    if (std::fread(t.name.data(), 1, len, f.get()) != len || !Read(f.get(), &rows) ||
        !Read(f.get(), &cols) || rows < 1 || cols < 1 || rows > kMaxModelDim ||
        cols > kMaxModelDim) {
      return bad("tensor " + std::to_string(i) + " is malformed");
    }
    t.rows = rows;
    t.cols = cols;
    h->tensors.push_back(std::move(t));
  }
  const long at = std::ftell(f.get());
  if (at < 0 || std::fseek(f.get(), 0, SEEK_END) != 0) return bad("cannot seek");
  const long end = std::ftell(f.get());
  h->data_offset = static_cast<uint64_t>(at);
  const uint64_t want = h->data_offset + h->TotalValues() * sizeof(float);
  if (end < 0 || static_cast<uint64_t>(end) != want) {
    return bad("the file has " + std::to_string(end) + " bytes, its header describes " +
               std::to_string(want));
  }
  return true;
}

bool LoadCheckpointValues(const std::string& path, const CheckpointHeader& h, Model& model,
                          std::string* err) {
  std::vector<ParamView> params = model.Params();
  if (params.size() != h.tensors.size()) {
    *err = path + " has " + std::to_string(h.tensors.size()) + " tensors, this train.cpp's model " +
           std::to_string(params.size()) + " (a checkpoint of another train.cpp?)";
    return false;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const TensorInfo& t = h.tensors[i];
    if (params[i].name != t.name || params[i].rows != t.rows || params[i].cols != t.cols) {
      *err = path + ": tensor " + std::to_string(i) + " is " + Shape(t) + ", this train.cpp's is " +
             Shape({params[i].name, params[i].rows, params[i].cols});
      return false;
    }
  }
  File f(std::fopen(path.c_str(), "rb"));
  if (!f || std::fseek(f.get(), static_cast<long>(h.data_offset), SEEK_SET) != 0) {
    *err = "cannot read the checkpoint " + path;
    return false;
  }
  for (ParamView& p : params) {
    if (std::fread(p.value, sizeof(float), p.size(), f.get()) != p.size()) {
      *err = "cannot read the values of " + p.name + " from " + path;
      return false;
    }
  }
  return true;
}

}  // namespace gpt
