#include "corpus.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "files.h"
#include "protocol.h"
#include "rdata.h"

namespace gpt {

bool LoadJaneAusten(const std::string& data_dir, std::string* text, std::string* err) {
  std::vector<std::pair<std::string, RObject>> objects;
  if (!ReadLazyLoadDb(data_dir + "/Rdata", &objects, err)) {
    *err = "cannot read the Jane Austen corpus: " + *err +
           " (run prepare/get-corpus, or give --text FILE)";
    return false;
  }
  // Publication order, as janeaustenr's austen_books() lists them.
  static const char* const kBooks[] = {"sensesensibility", "prideprejudice",
                                       "mansfieldpark",    "emma",
                                       "northangerabbey",  "persuasion"};
  text->clear();
  for (const char* book : kBooks) {
    auto it = std::find_if(objects.begin(), objects.end(),
                           [&](const auto& o) { return o.first == book; });
    if (it == objects.end() || it->second.type != RObject::kString) {
      *err = data_dir + ": the package has no text vector '" + book +
             "'; its data layout changed (use --text FILE)";
      return false;
    }
    for (const auto& line : it->second.strings) {
      *text += line.value_or("");
      *text += '\n';
    }
  }
  return true;
}

bool LoadTextFile(const std::string& path, std::string* text, std::string* err) {
  return ReadWholeFile(path, text, err);
}

bool IsValidUtf8(std::string_view text, size_t* bad_offset) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      *bad_offset = i;
      return false;
    }
    if (i + len > n) {
      *bad_offset = i;
      return false;
    }
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) {
        *bad_offset = i;
        return false;
      }
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      *bad_offset = i;
      return false;
    }
    i += len;
  }
  return true;
}

bool SplitCorpus(std::string_view text, int context, Splits* out, std::string* err) {
  if (text.empty()) {
    *err = "the corpus is empty";
    return false;
  }
  size_t bad = 0;
  if (!IsValidUtf8(text, &bad)) {
    *err = "the corpus is not valid UTF-8 (first bad byte at offset " + std::to_string(bad) + ")";
    return false;
  }
  // A small corpus gets smaller chunks, so that val and audit still exist.
  const size_t chunk = std::min(kChunkBytes, text.size() / kSplitPeriod);
  const size_t window = static_cast<size_t>(context) + 1;
  if (chunk < window) {
    *err = "the corpus has " + std::to_string(text.size()) + " bytes, too small for context " +
           std::to_string(context) + ": val and audit each need a window of " +
           std::to_string(window) + " bytes, so at least " + std::to_string(kSplitPeriod * window) +
           " bytes in all";
    return false;
  }
  *out = Splits();
  for (size_t i = 0, start = 0; start < text.size(); ++i, start += chunk) {
    std::string_view piece = text.substr(start, chunk);
    switch (i % kSplitPeriod) {
      case kValChunk:
        out->val += piece;
        break;
      case kAuditChunk:
        out->audit += piece;
        break;
      default:
        out->train += piece;
    }
  }
  return true;
}

}  // namespace gpt
