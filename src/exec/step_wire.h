// A step and its result as JSON, for a step that ratchet runs on another
// machine (exec/slurm_runner.h): the submitting ratchet writes the RunSpec,
// the trusted `ratchet exec-step` on the node runs it with the local runner
// (sandbox, cgroup, deadline: all of it, there) and writes the RunResult back.
// Both files live where no step can see them. on_line, cancel and fds do not
// travel: the submitting side follows the log file and cancels the job.
#pragma once

#include <string>

#include "core/runner.h"

namespace ratchet {

std::string RunSpecToJson(const RunSpec& spec);
/// False with *err on malformed JSON or a missing argv (never throws).
bool RunSpecFromJson(const std::string& text, RunSpec* spec, std::string* err);

std::string RunResultToJson(const RunResult& result);
bool RunResultFromJson(const std::string& text, RunResult* result, std::string* err);

}  // namespace ratchet
