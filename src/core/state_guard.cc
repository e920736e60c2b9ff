#include "core/state_guard.h"

namespace ratchet {

std::string GuardReport::Describe() const {
  auto list = [](const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size() && i < 5; ++i) out += (i ? ", " : "") + items[i];
    if (items.size() > 5) out += " and " + std::to_string(items.size() - 5) + " more";
    return out;
  };
  if (changed.empty()) return "";
  std::string out = "changed " + list(changed);
  if (fatal) return out + "; " + detail;
  if (not_restored.empty()) return out + " (put back)";
  if (not_restored.size() == changed.size()) return out + " (could not be undone)";
  return out + " (put back, except " + list(not_restored) + ")";
}

}  // namespace ratchet
