// The reviewer: a second, separate program that reads a candidate (its
// description and diff) before it runs and approves or rejects it. It is an
// on_candidate mechanism (core/hooks.h): a rejection is a veto, so the
// experiment gets status `rejected` and does not run.
//   [review]
//   command = ["claude", "-p", "--output-format", "json"]
//   input = "stdin"            # the review request; or "file": {prompt_file}
//   timeout = "5m"
//   instructions = "review.md" # optional: the reviewer's own instructions
//   model = "haiku"            # optional label, for {model}
//   on_error = "reject"        # or "approve": a reviewer that fails or
//                              # answers nothing usable
// The reviewer answers with a JSON object on stdout, alone or as the text of
// a JSON report such as Claude Code's:
//   {"decision": "approve" | "reject", "reason": "one line"}
// It runs in the loop directory, which is read-only to it where a sandbox
// works; either way, a reviewer that changes the candidate's files, .git or
// .ratchet is caught (StateGuard, core/state_guard.h) and the candidate rejected. Its files
// are in .ratchet/runs/<id>/: review-request.md, review.diff, review.log,
// review.json. Tokens and cost it reports are added to the experiment.
#pragma once

#include <memory>
#include <string>

#include "core/config.h"
#include "core/config_section.h"
#include "core/hooks.h"
#include "core/repo.h"
#include "core/runner.h"
#include "core/state_guard.h"
#include "core/workspace.h"

namespace ratchet {

struct ReviewerDeps {
  ProcessRunner* runner = nullptr;
  Workspace* workspace = nullptr;
  Repo* repo = nullptr;  // to see whether the reviewer changed the tree
  StateGuardFactory state_guards;  // one guard per review (required)
};

/// Builds the reviewer from [review] (read strictly: unknown keys are
/// errors). Null with *err on a bad section.
std::shared_ptr<Mechanism> MakeReviewer(ConfigSection& section, const LoopConfig& config,
                                        const ReviewerDeps& deps, std::string* err);

struct ReviewAnswer {
  bool found = false;  // a usable answer was in the output
  bool approve = false;
  std::string reason;
};
/// Reads the reviewer's answer from its output (see the header comment).
ReviewAnswer ParseReviewAnswer(const std::string& output);

/// The text the reviewer gets: its instructions, the loop's rules, then the
/// description and the diff as fenced data, then the answer format.
std::string BuildReviewRequest(const std::string& instructions, const LoopConfig& config,
                               const CandidateView& candidate);

}  // namespace ratchet
