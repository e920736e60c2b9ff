// What a model's tokens cost, for the spend of an agent that was stopped
// before it printed its own report. A CLI's report (Claude Code's
// total_cost_usd and modelUsage) is always preferred: it knows the CLI's
// pricing, tiers included. But a killed CLI reports nothing, and the tokens
// it streamed as it went (stream-json) must still reach stop.cost_usd: they
// are priced here.
//   [propose.agent]
//   prices = { "my-gateway-model" = { input = 3, output = 15, cache_read = 0.3, cache_write = 3.75 } }
// Dollars per million tokens. A name matches a model id that is the name or
// the name followed by '-', '@' or ':' and more (dated and provider spellings:
// claude-sonnet-4-5-20250929, claude-sonnet-4-5@20250929), case-insensitive;
// the longest matching name wins, and rows from the config come before the
// built-in ones (the base rates Claude Code 2.1.332 charges, measured).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config_section.h"

namespace ratchet {

struct ModelPrice {
  double input = 0;        // USD per million uncached input tokens
  double output = 0;       // per million output tokens
  double cache_read = 0;   // per million tokens read from the prompt cache
  double cache_write = 0;  // per million tokens written to the prompt cache
};

/// One model's tokens, as an API reports them (input excludes cache reads
/// and writes, as in the Anthropic Messages API).
struct ModelTokens {
  int64_t input = 0;
  int64_t output = 0;
  int64_t cache_read = 0;
  int64_t cache_write = 0;
  int64_t total_input() const { return input + cache_read + cache_write; }
};

class PriceTable {
 public:
  /// The built-in rows only.
  static PriceTable Builtin();
  /// Adds a row ahead of the built-in ones (config).
  void Set(const std::string& name, const ModelPrice& price);
  /// The price for `model`, or nullopt when no row matches.
  std::optional<ModelPrice> Find(const std::string& model) const;
  /// The cost of `tokens` of `model`, or nullopt when it has no price.
  std::optional<double> Cost(const std::string& model, const ModelTokens& tokens) const;

 private:
  std::vector<std::pair<std::string, ModelPrice>> rows_;  // config first
};

/// Reads `prices` from [propose.agent] into *table (on top of the built-in
/// rows). Errors are recorded in `section`.
void ReadPrices(ConfigSection& section, PriceTable* table);

}  // namespace ratchet
