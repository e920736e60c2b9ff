#include "evaluator.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "protocol.h"

namespace gpt {
namespace {

constexpr int kT = kEvalContext;  // inputs (and targets) of a window
constexpr size_t kRow = kVocab;
constexpr double kProbeTolerance = 1e-4;
constexpr int kPlainProbes = 4;

bool Moved(float before, float after) {
  return !(std::fabs(after - before) <= kProbeTolerance * (1 + std::fabs(before)));
}

// Cross-entropy (nats) of one position: log-softmax in double, fixed order,
// so that the score does not depend on how the model computes its own loss.
double PositionLoss(const float* row, uint8_t target) {
  double max = row[0];
  for (size_t v = 1; v < kRow; ++v) max = std::max(max, static_cast<double>(row[v]));
  double sum = 0;
  for (size_t v = 0; v < kRow; ++v) sum += std::exp(row[v] - max);
  return std::log(sum) + max - row[target];
}

// A probe copy: window `source` with byte `pos` replaced by `byte`.
struct Probe {
  size_t source;
  int pos;
  uint8_t byte;
};

// One sequence of the stream: a real window (probe < 0) or a probe copy.
struct Item {
  size_t window;
  int probe;
};

// Sends `items` in batches to `fn` and hands each answered sequence, with
// its tokens and logits, to `take`.
template <typename Take>
bool Stream(const std::vector<Item>& items, int batch, std::string_view split,
            const std::vector<Probe>& probes, const LogitsFn& fn, int* requests, std::string* err,
            Take take) {
  std::vector<uint8_t> tokens(static_cast<size_t>(batch) * kT);
  std::vector<float> logits;
  for (size_t first = 0; first < items.size(); first += batch) {
    for (int i = 0; i < batch; ++i) {
      const Item& it = items[first + i];
      uint8_t* seq = &tokens[static_cast<size_t>(i) * kT];
      std::copy_n(reinterpret_cast<const uint8_t*>(split.data()) + it.window * (kT + 1), kT, seq);
      if (it.probe >= 0) seq[probes[it.probe].pos] = probes[it.probe].byte;
    }
    ++*requests;
    if (!fn(tokens.data(), batch, kT, &logits, err)) return false;
    for (int i = 0; i < batch; ++i) {
      if (!take(items[first + i], &logits[static_cast<size_t>(i) * kT * kRow], err)) return false;
    }
  }
  return true;
}

}  // namespace

bool EvaluateSplit(std::string_view split, const EvalOptions& opt, const LogitsFn& score,
                   const LogitsFn* probe_fn, EvalResult* result, std::string* err) {
  *result = EvalResult();
  const size_t windows = split.size() / (kT + 1);
  if (windows == 0) {
    *err = "the split is shorter than one window of " + std::to_string(kT + 1) + " bytes";
    return false;
  }
  if (opt.batch < 1) {
    *err = "the model accepts no batch at all";
    return false;
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(split.data());
  std::mt19937_64 rng(opt.seed);
  const int batch = opt.batch;

  // The probes, and the streams: real windows and probes shuffled together
  // (or the probes alone on their own instance), padded with more probes to
  // full batches.
  std::vector<Probe> probes;
  auto add_probe = [&] {
    Probe p{rng() % windows, 1 + static_cast<int>(rng() % (kT - 1)), 0};
    const uint8_t original = bytes[p.source * (kT + 1) + p.pos];
    // A byte of the split itself, so that the change looks like text.
    for (int tries = 0; tries < 8 && (tries == 0 || p.byte == original); ++tries) {
      p.byte = bytes[rng() % split.size()];
    }
    if (p.byte == original) p.byte = static_cast<uint8_t>(original ^ (1 + rng() % 255));
    probes.push_back(p);
    return static_cast<int>(probes.size() - 1);
  };
  std::vector<Item> main_items, probe_items;
  for (size_t w = 0; w < windows; ++w) main_items.push_back({w, -1});
  std::vector<Item>& probe_target = probe_fn != nullptr ? probe_items : main_items;
  for (int i = 0; i < opt.probes; ++i) {
    const int k = add_probe();
    probe_target.push_back({probes[k].source, k});
  }
  for (std::vector<Item>* items : {&main_items, &probe_items}) {
    while (items->size() % batch != 0) {
      const int k = add_probe();
      items->push_back({probes[k].source, k});
    }
    std::shuffle(items->begin(), items->end(), rng);
  }

  // Logits kept for the probes: the rows before each changed byte, of the
  // original window and of its copy.
  std::vector<std::vector<float>> original(windows), copy(probes.size());
  std::vector<int> needed(windows, 0);  // rows of window w some probe compares
  for (const Probe& p : probes) needed[p.source] = std::max(needed[p.source], p.pos);
  std::vector<double> nats(windows, 0.0);

  auto take = [&](const Item& it, const float* logits, std::string* e) {
    if (it.probe >= 0) {
      copy[it.probe].assign(logits, logits + probes[it.probe].pos * kRow);
      return true;
    }
    const uint8_t* window = bytes + it.window * (kT + 1);
    double sum = 0;
    for (int t = 0; t < kT; ++t) {
      const double loss = PositionLoss(logits + t * kRow, window[t + 1]);
      if (!std::isfinite(loss)) {
        *e = "the model gave a non-finite loss (window " + std::to_string(it.window) +
             ", position " + std::to_string(t) + ")";
        return false;
      }
      sum += loss;
    }
    nats[it.window] = sum;
    if (needed[it.window] > 0) {
      original[it.window].assign(logits, logits + needed[it.window] * kRow);
    }
    return true;
  };
  if (!Stream(main_items, batch, split, probes, score, &result->requests, err, take)) return false;
  if (probe_fn != nullptr &&
      !Stream(probe_items, batch, split, probes, *probe_fn, &result->requests, err, take)) {
    return false;
  }

  for (const Probe& p : probes) {
    const std::vector<float>& a = original[p.source];
    const std::vector<float>& b = copy[&p - probes.data()];
    for (size_t i = 0; i < b.size(); ++i) {
      if (Moved(a[i], b[i])) {
        *err = "causality probe: changing byte " + std::to_string(p.pos) +
               " of a validation window changed its logits at position " +
               std::to_string(i / kRow) + " (" + std::to_string(a[i]) + " -> " +
               std::to_string(b[i]) +
               "): the model looks ahead at later bytes, or its answer depends on the other "
               "sequences of the batch or on what it was asked before";
        return false;
      }
    }
  }
  double total = 0;
  for (double n : nats) total += n;  // in window order: the same sum every time
  result->bpb = total / std::log(2.0) / (static_cast<double>(windows) * kT);
  result->windows = windows;
  result->probes = static_cast<int>(probes.size());
  return true;
}

bool CheckCausality(const LogitsFn& fn, const uint8_t* tokens, int batch, int T, uint64_t seed,
                    std::string* err) {
  std::vector<float> before, after;
  if (!fn(tokens, batch, T, &before, err)) return false;
  std::mt19937_64 rng(seed);
  for (int probe = 0; probe < kPlainProbes; ++probe) {
    const int w = static_cast<int>(rng() % batch);
    const int p = static_cast<int>(rng() % T);
    std::vector<uint8_t> changed(tokens, tokens + static_cast<size_t>(batch) * T);
    changed[static_cast<size_t>(w) * T + p] ^= static_cast<uint8_t>(1 + rng() % 255);
    if (!fn(changed.data(), batch, T, &after, err)) return false;
    for (int i = 0; i < batch; ++i) {
      // In the changed sequence only positions >= p may move; elsewhere none.
      const int fixed = i == w ? p : T;
      for (int t = 0; t < fixed; ++t) {
        for (int v = 0; v < kVocab; ++v) {
          const size_t k = (static_cast<size_t>(i) * T + t) * kVocab + v;
          if (Moved(before[k], after[k])) {
            *err = "causality probe: changing byte " + std::to_string(p) + " of sequence " +
                   std::to_string(w) + " changed the logits at position " + std::to_string(t) +
                   " of sequence " + std::to_string(i) +
                   (i == w ? ": the model looks ahead at later bytes"
                           : ": the model mixes the sequences of a batch") +
                   " (" + std::to_string(before[k]) + " -> " + std::to_string(after[k]) + ")";
            return false;
          }
        }
      }
    }
  }
  return true;
}

}  // namespace gpt
