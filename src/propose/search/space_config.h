// Reads the search proposer's section of ratchet.toml:
//
//   [propose]
//   kind = "search"
//
//   [propose.search]
//   algorithm = "auto"     # auto | random | lhs | tpe | local | gp   (default auto)
//   seed = 0               # default: [loop] seed
//   init = 8               # initial design size; default: parameters + 3, within 5..10
//   file = "train.cpp"     # default file of every parameter (default: the one
//                          # [edit] files entry, when it names a single file)
//   constraints = ["N_EMBD % N_HEAD == 0", "N_EMBD / N_HEAD >= 16"]
//
//   [[propose.search.param]]
//   name = "MATRIX_LR"     # the constant in the file (and the name in constraints)
//   type = "float"         # float | int | choice (choice is implied by `values`)
//   low = 0.005
//   high = 0.1
//   log = true             # float, int: search on a log scale
//   digits = 4             # float: significant digits written (default 4)
//
//   [[propose.search.param]]
//   name = "DEPTH"
//   type = "int"
//   low = 2
//   high = 12
//   step = 2               # int: grid step (default 1); or `pow2 = true`
//
//   [[propose.search.param]]
//   name = "ACT"
//   file = "model.py"      # overrides the section's file
//   constant = "ACTIVATION" # when the constant's name differs from `name`
//   values = ["relu", "gelu", "silu"]   # choice: numbers, strings or booleans
//
// Every error names the file, line and column of the key at fault.
#pragma once

#include <string>

#include "core/config.h"
#include "core/config_section.h"
#include "propose/search/optimizer.h"
#include "propose/search/space.h"

namespace ratchet {

struct SearchConfig {
  SearchOptions options;
  SearchSpace space;
};

/// Reads [propose.search] (`section`) of `loop`. Records unknown keys in the
/// section as read-or-not for section.Finish(); returns false with the first
/// error ("ratchet.toml:14:9: [propose.search.param[2]] high: must be above low").
bool ReadSearchConfig(ConfigSection& section, const LoopConfig& loop, SearchConfig* out,
                      std::string* err);

}  // namespace ratchet
