// Exports of the ledger's experiments: results.tsv (the autoresearch format,
// so existing notebooks and plots read it) and JSON for `ratchet log --json`.
// Pure functions over rows already loaded.
#pragma once

#include <string>
#include <vector>

#include "core/experiment.h"

namespace ratchet {

/// results.tsv: header `commit\t<metric_name>\tmemory_gb\tstatus\tdescription`
/// then one column per other metric (names sorted), one line per decided
/// experiment (undecided ones are left out). commit: 7 characters of the
/// candidate (of the parent for a baseline without one). Metrics with 6
/// decimals, 0.000000 when missing (autoresearch logs crashes so). memory_gb:
/// peak_mem_mb or peak_vram_mb when measured, else peak RSS, over 1024, 1
/// decimal. Tabs and newlines in descriptions become spaces.
std::string ResultsTsv(const std::vector<Experiment>& experiments, const std::string& metric_name);

/// A JSON array with one object per experiment, every field (as
/// store/json_fields.h ExperimentJson), one object per line.
std::string ExperimentsToJson(const std::vector<Experiment>& experiments);

}  // namespace ratchet
