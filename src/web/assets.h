// The dashboard page's files (HTML, script, style), compiled into the binary
// from src/web/assets/ by embed_assets.cmake. The server serves these and
// nothing else from a path: there is no file system behind the URL space.
#pragma once

#include <string_view>
#include <vector>

namespace ratchet {

struct Asset {
  std::string_view path;          // URL path, e.g. "/app.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view body;
};

/// Every embedded file, in a fixed order.
const std::vector<Asset>& EmbeddedAssets();

/// The asset whose URL path is exactly `path` ("/" is the page itself), or
/// nullptr. No normalisation: "/./app.js" or "/x/../app.js" are not found.
const Asset* FindAsset(std::string_view path);

}  // namespace ratchet
