#include "web/assets.h"

namespace ratchet {

const Asset* FindAsset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const Asset& asset : EmbeddedAssets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

}  // namespace ratchet
