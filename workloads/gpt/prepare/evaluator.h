// The fixed evaluator's logic, apart from any I/O: which windows of a split
// are scored, in what order they are asked for, how the causality probes
// hide among them, and the score. The model is only a source of logits
// (the model server behind trusted/evaluate, or a fake in the tests); log-
// softmax and cross-entropy are computed here.
//
// Windows are kEvalContext + 1 bytes long and do not overlap (stride
// kEvalContext + 1): every window's last target is never sent to the model
// at all, and no byte is ever an input of two windows. They are asked for in
// full batches, in an order shuffled with a seed the model does not know;
// among them sit probe copies (a real window with one byte changed, at a
// random place in the stream), and every logit before the changed byte must
// come out as it did for the original window. Only full batches are sent, so
// that every request has the same shape and the probes cannot be told apart
// by theirs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpt {

/// Logits (batch, T, kVocab) for `tokens` (batch, T); false with a reason.
using LogitsFn = std::function<bool(const uint8_t* tokens, int batch, int T,
                                    std::vector<float>* logits, std::string* err)>;

struct EvalOptions {
  int batch = 16;     // windows per request (at most the model's max_batch)
  int probes = 32;    // probe copies (more fill up the last batch)
  uint64_t seed = 0;  // order and probes; trusted/evaluate draws it at random
};

struct EvalResult {
  double bpb = 0;      // bits per byte over every target of every window
  size_t windows = 0;  // windows scored
  int probes = 0;      // probe copies sent (and checked)
  int requests = 0;    // logits requests
};

/// Scores `split`. The windows and the probes go to `score`, or, when
/// `probe` is given (a second, independent instance of the same model), the
/// probes go there: a server that remembers what it was asked cannot then
/// keep its answers consistent across the pair. Fails with a reason on a
/// probe that moved, a non-finite loss, or an error from a source.
bool EvaluateSplit(std::string_view split, const EvalOptions& options, const LogitsFn& score,
                   const LogitsFn* probe, EvalResult* result, std::string* err);

/// The plain probe for a batch the caller chose (the gradient check's tiny
/// model): changes single bytes at positions drawn from `seed`, one request
/// per change, and checks that no logit before the change, and none of
/// another sequence of the batch, moves.
bool CheckCausality(const LogitsFn& logits, const uint8_t* tokens, int batch, int T, uint64_t seed,
                    std::string* err);

}  // namespace gpt
