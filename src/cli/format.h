// Formatting shared by the subcommands' output.
#pragma once

#include <string>

#include "core/config.h"
#include "core/experiment.h"

namespace ratchet {

/// "42s", "3m05s", "2h14m".
std::string FormatDuration(double seconds);
/// "#17 keep      val_bpb=1.2345  -0.0123   62s  lower the LR", for logs.
std::string ExperimentLine(const Experiment& exp, const Experiment* incumbent_before,
                           const LoopConfig* config, const std::string& metric_name);
/// The first 7 characters of a commit.
std::string Short(const std::string& sha);

}  // namespace ratchet
