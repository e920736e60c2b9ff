#include "core/metrics.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

namespace ratchet {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

}  // namespace

bool ParseNumber(std::string_view text, double* value) {
  std::string s(Trim(text));
  if (s.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return false;
  // Allow a unit-less trailing '%' (mfu_percent: 41.2%).
  std::string_view rest = Trim(std::string_view(end));
  if (!rest.empty() && rest != "%") return false;
  *value = v;
  return true;
}

std::map<std::string, double> ParseSummary(std::string_view output) {
  std::vector<std::string_view> lines = Lines(output);
  size_t first = 0;
  for (size_t i = lines.size(); i-- > 0;) {
    if (Trim(lines[i]) == "---") {
      first = i + 1;
      break;
    }
  }
  std::map<std::string, double> metrics;
  for (size_t i = first; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    std::string_view key = Trim(line.substr(0, colon));
    bool identifier = !key.empty();
    for (char ch : key)
      identifier = identifier && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ||
                                  ch == '.' || ch == '-' || ch == '/');
    if (!identifier || key == "progress") continue;
    double value = 0;
    if (ParseNumber(line.substr(colon + 1), &value)) metrics[std::string(key)] = value;
  }
  return metrics;
}

bool ParseMetricRegex(std::string_view output, const std::string& regex, double* value) {
  std::regex re(regex);
  std::string text(output);
  bool found = false;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    double v = 0;
    if ((*it).size() > 1 && ParseNumber((*it)[1].str(), &v)) {
      *value = v;
      found = true;
    }
  }
  return found;
}

bool IsProgressLine(std::string_view line) {
  line = Trim(line);
  return line.substr(0, 9) == "progress:";
}

}  // namespace ratchet
