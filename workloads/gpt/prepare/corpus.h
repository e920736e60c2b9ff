// Corpus preparation: the text of the default corpus (Jane Austen's six
// novels from Debian's r-cran-janeaustenr) or of any UTF-8 file, checked and
// split deterministically into train / val / audit.
#pragma once

#include <string>
#include <string_view>

namespace gpt {

/// Reads the novels from the package's data directory (the one holding
/// Rdata.rdx and Rdata.rdb) and joins them in publication order, one line of
/// the R vectors per text line.
bool LoadJaneAusten(const std::string& data_dir, std::string* text, std::string* err);

/// Reads a UTF-8 text file.
bool LoadTextFile(const std::string& path, std::string* text, std::string* err);

/// True if `text` is valid UTF-8; otherwise `bad_offset` gets the first bad byte.
bool IsValidUtf8(std::string_view text, size_t* bad_offset);

struct Splits {
  std::string train, val, audit;
};

/// Splits by the chunk pattern in protocol.h. Fails with a clear message for
/// an empty or non-UTF-8 text, or one too small to give val and audit at
/// least one full window of `context` + 1 bytes.
bool SplitCorpus(std::string_view text, int context, Splits* out, std::string* err);

}  // namespace gpt
