// The fixed constants of the workload's data and evaluation protocol. They
// live outside train.cpp so that an edited trainer cannot change how it is
// scored: every model is judged on the same bytes, windows and context.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpt {

/// Byte-level: every token is one byte.
inline constexpr int kVocab = 256;

/// The evaluator scores non-overlapping windows of this many target bytes,
/// each predicted from the bytes before it inside its window. A model must
/// accept sequences of this length.
inline constexpr int kEvalContext = 256;

/// The corpus is cut into chunks of kChunkBytes (smaller for a small corpus,
/// see SplitCorpus); of every kSplitPeriod chunks, the one at kValChunk goes
/// to val and the one at kAuditChunk to audit, the rest to train. Spreading
/// val over the whole corpus keeps it representative of every book.
inline constexpr size_t kChunkBytes = 16384;
inline constexpr size_t kSplitPeriod = 40;
inline constexpr size_t kValChunk = 19;
inline constexpr size_t kAuditChunk = 39;

/// Bounds on any model a checkpoint or the model server describes: far
/// above anything that trains in a CPU budget, low enough that no size
/// computed from them overflows.
inline constexpr int kMaxModelDim = 1 << 20;
inline constexpr uint32_t kMaxTensors = 1 << 16;
inline constexpr uint32_t kMaxTensorName = 256;

}  // namespace gpt
