#pragma once
// Replacing a file so that a crash or a reader never sees half of it: the
// one way ratchet writes a whole file (configs the search rewrites, restored
// files, live status, exports, charts, schedule units).

#include <optional>
#include <string>
#include <string_view>

namespace ratchet {

struct ReplaceOptions {
  // The new file's permission bits. Unset: those of the file being replaced
  // when it is a regular file, otherwise 0666 less the umask.
  std::optional<unsigned> mode;
  // Sync the data before the rename and the directory after it, so that the
  // new content survives a power cut. Off only for files that are hints
  // rewritten every second (live.json): atomic for readers, not durable.
  bool durable = true;
};

/// Writes `content` to a new temporary file beside `path` (same directory,
/// so the rename cannot cross file systems), then renames it over `path`:
/// whatever was at `path` (a file or a symbolic link, never followed) is
/// replaced at once. The directory must exist. On failure `path` is as it
/// was, the temporary file is gone, and `*err` says what failed.
bool ReplaceFile(const std::string& path, std::string_view content, std::string* err,
                 const ReplaceOptions& options = {});

}  // namespace ratchet
