#include "store/ledger_key.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace ratchet {
namespace {

constexpr size_t kKeyBytes = 32;

std::string KeyPath() {
  if (const char* p = std::getenv("RATCHET_KEY_FILE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
    return std::string(x) + "/ratchet/ledger.key";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/") + "/.config/ratchet/ledger.key";
}

std::string KeyId(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr);
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < 8 && i < n; ++i) {
    out += kDigits[md[i] >> 4];
    out += kDigits[md[i] & 15];
  }
  return out;
}

bool ReadKey(const std::string& path, std::string* bytes, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = "cannot read the ledger key " + path + ": " + std::strerror(errno);
    return false;
  }
  char buf[kKeyBytes + 1];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n != static_cast<ssize_t>(kKeyBytes)) {
    *err = "the ledger key " + path + " is damaged (expected " + std::to_string(kKeyBytes) +
           " bytes); move it aside only if you mean to stop authenticating old ledgers";
    return false;
  }
  bytes->assign(buf, kKeyBytes);
  return true;
}

}  // namespace

bool LoadLedgerKey(bool create, LedgerKey* key, std::string* err) {
  *key = LedgerKey();
  key->path = KeyPath();
  struct stat st;
  if (::stat(key->path.c_str(), &st) == 0) {
    if (!ReadKey(key->path, &key->bytes, err)) return false;
    key->id = KeyId(key->bytes);
    return true;
  }
  if (!create) {
    key->note = "no ledger key at " + key->path;
    return true;
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(key->path).parent_path(), ec);
  unsigned char raw[kKeyBytes];
  if (RAND_bytes(raw, sizeof raw) != 1) {
    key->note = "no random source for a ledger key";
    return true;
  }
  // O_EXCL: if another ratchet made the key meanwhile, use that one.
  int fd = ::open(key->path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return LoadLedgerKey(false, key, err);
    key->note = "cannot create the ledger key " + key->path + ": " + std::strerror(errno);
    return true;
  }
  bool ok = ::write(fd, raw, sizeof raw) == static_cast<ssize_t>(sizeof raw) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(key->path.c_str());
    key->note = "cannot write the ledger key " + key->path;
    return true;
  }
  key->bytes.assign(reinterpret_cast<const char*>(raw), sizeof raw);
  key->id = KeyId(key->bytes);
  return true;
}

}  // namespace ratchet
