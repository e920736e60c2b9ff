#include "outer/mechanism_store.h"

#include <algorithm>

namespace ratchet {

namespace {
constexpr const char* kIndex = ".ratchet/mechanisms/index.json";
}

std::string MechanismStore::Dir(const std::string& name) { return ".ratchet/mechanisms/" + name; }

std::string MechanismStore::AbsDir(const std::string& name) const {
  return workspace_ ? workspace_->root() + "/" + Dir(name) : "";
}

std::vector<std::string> MechanismStore::Names() {
  std::vector<std::string> names;
  std::string text, err;
  if (!workspace_ || !workspace_->Exists(kIndex) || !workspace_->ReadFile(kIndex, &text, &err))
    return names;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return names;
  for (const auto& n : j)
    if (n.is_string()) names.push_back(n.get<std::string>());
  return names;
}

bool MechanismStore::AddToIndex(const std::string& name, std::string* err) {
  std::vector<std::string> names = Names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return true;
  names.push_back(name);
  return workspace_->WriteFile(kIndex, nlohmann::json(names).dump(2) + "\n", err);
}

bool MechanismStore::Write(const std::string& name, const std::string& file,
                           const std::string& content, std::string* err) {
  if (!workspace_) return true;
  return workspace_->WriteFile(Dir(name) + "/" + file, content, err) && AddToIndex(name, err);
}

bool MechanismStore::Read(const std::string& name, const std::string& file,
                          std::string* content) {
  std::string err;
  return workspace_ && workspace_->Exists(Dir(name) + "/" + file) &&
         workspace_->ReadFile(Dir(name) + "/" + file, content, &err);
}

bool MechanismStore::Exists(const std::string& name, const std::string& file) {
  return workspace_ && workspace_->Exists(Dir(name) + "/" + file);
}

MechanismManifest MechanismStore::Manifest(const std::string& name) {
  MechanismManifest m;
  std::string text;
  if (!Read(name, "manifest.json", &text)) return m;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return m;
  auto text_of = [&](const char* key, std::string* out) {
    auto it = j.find(key);
    if (it != j.end() && it->is_string()) *out = it->get<std::string>();
  };
  text_of("origin", &m.origin);
  text_of("state", &m.state);
  text_of("reason", &m.reason);
  if (auto it = j.find("trials"); it != j.end() && it->is_number_integer())
    m.trials = static_cast<int>(std::clamp<long long>(it->get<long long>(), 0, 1000000));
  if (auto it = j.find("command"); it != j.end() && it->is_array()) {
    for (const auto& word : *it) {
      if (!word.is_string()) {
        m.command.clear();
        break;
      }
      m.command.push_back(word.get<std::string>());
    }
  }
  return m;
}

}  // namespace ratchet
