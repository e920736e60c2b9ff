#include "propose/agent_prices.h"

#include <cctype>

namespace ratchet {
namespace {

std::string Lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// True when `model` is `name`, or `name` followed by a separator and more.
bool Matches(const std::string& name, const std::string& model) {
  if (model.size() < name.size() || model.compare(0, name.size(), name) != 0) return false;
  if (model.size() == name.size()) return true;
  char next = model[name.size()];
  return next == '-' || next == '@' || next == ':';
}

}  // namespace

PriceTable PriceTable::Builtin() {
  // Base rates (below any long-context tier), in USD per million tokens:
  // input, output, cache read, cache write. Measured by pricing a known
  // usage through Claude Code 2.1.332 (its modelUsage costUSD).
  PriceTable t;
  t.rows_ = {
      {"claude-fable-5-2", {8, 40, 0.2, 10}},      {"claude-opus-5-5", {4, 20, 0.2, 5}},
      {"claude-sonnet-5-5", {2, 10, 0.1, 2.5}},    {"claude-haiku-5-5", {0.1, 0.5, 0.01, 0.125}},
      {"claude-opus-4-6", {5, 25, 0.5, 6.25}},     {"claude-opus-4-5", {5, 25, 0.5, 6.25}},
      {"claude-sonnet-4-6", {3, 15, 0.3, 3.75}},   {"claude-sonnet-4-5", {3, 15, 0.3, 3.75}},
      {"claude-sonnet-4", {3, 15, 0.3, 3.75}},     {"claude-haiku-4-5", {1, 5, 0.1, 1.25}},
      {"claude-3-5-haiku", {0.8, 4, 0.08, 1}},
  };
  return t;
}

void PriceTable::Set(const std::string& name, const ModelPrice& price) {
  rows_.insert(rows_.begin(), {Lower(name), price});
}

std::optional<ModelPrice> PriceTable::Find(const std::string& model_in) const {
  std::string model = Lower(model_in);
  // Bedrock and Vertex spellings: "anthropic.claude-...", "us.anthropic.claude-...".
  if (size_t dot = model.rfind("anthropic."); dot != std::string::npos)
    model = model.substr(dot + 10);
  const std::pair<std::string, ModelPrice>* best = nullptr;
  for (const auto& row : rows_)  // config rows first: on a tie they win
    if (Matches(row.first, model) && (!best || row.first.size() > best->first.size())) best = &row;
  if (!best) return std::nullopt;
  return best->second;
}

std::optional<double> PriceTable::Cost(const std::string& model, const ModelTokens& t) const {
  std::optional<ModelPrice> p = Find(model);
  if (!p) return std::nullopt;
  return (t.input * p->input + t.output * p->output + t.cache_read * p->cache_read +
          t.cache_write * p->cache_write) /
         1e6;
}

void ReadPrices(ConfigSection& section, PriceTable* table) {
  if (!section.Has("prices")) return;
  ConfigSection prices = section.Table("prices");
  for (const std::string& name : prices.Keys()) {
    ConfigSection row = prices.Table(name);
    if (!row.present()) continue;  // Table() recorded the error
    ModelPrice p;
    bool ok = true;
    auto read = [&](const char* key, double* out) {
      std::optional<double> v = row.Number(key);
      if (!v) {
        if (!row.Has(key)) row.Fail("", std::string("needs ") + key + " (USD per million tokens)");
        ok = false;
      } else if (*v < 0) {
        row.Fail(key, "must not be negative");
        ok = false;
      } else {
        *out = *v;
      }
    };
    read("input", &p.input);
    read("output", &p.output);
    read("cache_read", &p.cache_read);
    read("cache_write", &p.cache_write);
    if (ok) table->Set(name, p);
  }
}

}  // namespace ratchet
