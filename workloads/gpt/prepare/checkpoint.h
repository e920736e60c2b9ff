// The checkpoint the fixed trainer writes and the model server reads, so
// that how a model is stored is not up to the candidate:
//   "GPTCKPT2", ModelSize (5 x int32), uint32 number of tensors,
//   per tensor: uint32 name length, name, int32 rows, int32 cols,
//   then every tensor's float32 values, in that order; nothing after.
// The evaluator reads only the header (for num_params_M and depth).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_api.h"

namespace gpt {

struct CheckpointHeader {
  ModelSize size;
  std::vector<TensorInfo> tensors;
  uint64_t data_offset = 0;  // where the values start
  uint64_t TotalValues() const;
};

/// The names and shapes of `model`'s Params().
std::vector<TensorInfo> TensorsOf(Model& model);

/// Writes `model` (its size() and every Params() tensor) to `path` through a
/// temporary file and a rename.
bool WriteCheckpoint(Model& model, const std::string& path, std::string* err);

/// Reads and checks the header of `path`, including that the file holds
/// exactly the values the header describes.
bool ReadCheckpointHeader(const std::string& path, CheckpointHeader* header, std::string* err);

/// Loads the values of `path` (whose header is `header`) into `model`, which
/// the caller made with MakeModel(header.size): its tensors must have the
/// header's names and shapes, in the same order.
bool LoadCheckpointValues(const std::string& path, const CheckpointHeader& header, Model& model,
                          std::string* err);

}  // namespace gpt
