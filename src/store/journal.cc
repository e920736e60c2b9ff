#include "store/journal.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <memory>

namespace ratchet {
namespace {

std::string Hex(const unsigned char* bytes, unsigned int n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (unsigned int i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

void AddField(std::string* out, const std::string& field) {
  *out += std::to_string(field.size());
  *out += ':';
  *out += field;
}

}  // namespace

std::string JournalHash(const std::string& prev_hash, const JournalEntry& e) {
  std::string data;
  AddField(&data, prev_hash);
  AddField(&data, std::to_string(e.seq));
  AddField(&data, e.kind);
  AddField(&data, e.key);
  AddField(&data, e.body);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr);
  return Hex(md, n);
}

std::string JournalMac(const std::string& key, const std::string& hash) {
  if (key.empty()) return "";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(hash.data()), hash.size(), md, &n);
  return Hex(md, n);
}

}  // namespace ratchet
