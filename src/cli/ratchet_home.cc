#include "cli/ratchet_home.h"

#include <cstdlib>
#include <system_error>

#if !defined(RATCHET_SOURCE_DIR) || !defined(RATCHET_BUILD_DIR) || !defined(RATCHET_DATA_FROM_BIN)
#error "RATCHET_SOURCE_DIR, RATCHET_BUILD_DIR and RATCHET_DATA_FROM_BIN are set by CMake"
#endif

namespace fs = std::filesystem;

namespace ratchet {
namespace {

bool HasTemplates(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "templates", ec);
}

}  // namespace

fs::path FindRatchetHome(std::string* err) {
  const char* env = std::getenv("RATCHET_HOME");
  if (env && *env) return fs::path(env);

  const fs::path source(RATCHET_SOURCE_DIR);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path bin_dir = ec ? fs::path() : exe.parent_path();
  // The build tree's binary uses the sources next to it, even if an
  // installed copy exists too: a developer's edits show at once.
  if (!bin_dir.empty() && fs::equivalent(bin_dir, fs::path(RATCHET_BUILD_DIR), ec) &&
      HasTemplates(source))
    return source;
  fs::path installed;
  if (!bin_dir.empty()) {
    installed = (bin_dir / RATCHET_DATA_FROM_BIN).lexically_normal();
    if (HasTemplates(installed)) return installed;
  }
  if (HasTemplates(source)) return source;
  *err = "cannot find ratchet's templates: looked in " +
         (installed.empty() ? std::string() : installed.string() + " and ") + source.string() +
         "; set RATCHET_HOME to the folder that holds templates/ (a ratchet source tree, or "
         "PREFIX/share/ratchet after `cmake --install`)";
  return {};
}

}  // namespace ratchet
