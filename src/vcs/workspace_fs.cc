#include "vcs/workspace_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>

#include "base/durable_file.h"
#include "core/glob.h"

namespace ratchet {
namespace {

struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

std::string ToHex(const unsigned char* bytes, unsigned int n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (unsigned int i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

MdCtx NewSha256() {
  MdCtx ctx(EVP_MD_CTX_new());
  if (ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) ctx.reset();
  return ctx;
}

std::string FinishHex(EVP_MD_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx, md, &n);
  return ToHex(md, n);
}

bool SysFail(const std::string& what, std::string* err) {
  *err = what + ": " + std::strerror(errno);
  return false;
}

/// Reads `abs` to its end in chunks, passing each to `sink`; errors name `rel`.
bool ReadChunks(const std::string& abs, const std::string& rel, int extra_flags,
                const std::function<void(const char*, size_t)>& sink, std::string* err) {
  int fd = ::open(abs.c_str(), O_RDONLY | O_CLOEXEC | extra_flags);
  if (fd < 0) return SysFail("cannot read " + rel, err);
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      SysFail("cannot read " + rel, err);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    sink(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

bool HashFile(const std::string& abs, const std::string& rel, std::string* hex, std::string* err) {
  MdCtx ctx = NewSha256();
  if (!ctx) {
    *err = "cannot initialise SHA-256 (OpenSSL)";
    return false;
  }
  auto update = [&](const char* p, size_t n) { EVP_DigestUpdate(ctx.get(), p, n); };
  if (!ReadChunks(abs, rel, O_NOFOLLOW, update, err)) return false;
  *hex = FinishHex(ctx.get());
  return true;
}

bool WriteAll(int fd, const std::string& data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

std::string Parent(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? "" : rel.substr(0, slash);
}

}  // namespace

std::string Sha256Hex(const std::string& data) {
  MdCtx ctx = NewSha256();
  if (!ctx) return "";
  EVP_DigestUpdate(ctx.get(), data.data(), data.size());
  return FinishHex(ctx.get());
}

FsWorkspace::FsWorkspace(const std::string& root) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(root, ec).lexically_normal();
  root_ = ec ? root : p.string();
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

bool FsWorkspace::Resolve(const std::string& rel_path, std::string* abs, std::string* err) const {
  if (rel_path.empty() || rel_path[0] == '/') {
    *err = "path '" + rel_path + "' must be relative to the loop directory";
    return false;
  }
  for (const auto& part : std::filesystem::path(rel_path)) {
    if (part == "..") {
      *err = "path '" + rel_path + "' leaves the loop directory";
      return false;
    }
  }
  *abs = root_ + "/" + rel_path;
  return true;
}

bool FsWorkspace::Walk(const std::string& rel_dir, const std::vector<std::string>& globs,
                       std::map<std::string, std::string>* hashes, std::string* err) const {
  const std::string abs_dir = rel_dir.empty() ? root_ : root_ + "/" + rel_dir;
  DIR* dir = ::opendir(abs_dir.c_str());
  if (!dir) return SysFail("cannot list " + (rel_dir.empty() ? root_ : rel_dir), err);
  std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
  while (dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || name == ".git") continue;
    if (rel_dir.empty() && name == ".ratchet") continue;
    const std::string rel = rel_dir.empty() ? name : rel_dir + "/" + name;
    const std::string abs = abs_dir + "/" + name;
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {  // some file systems do not fill d_type
      struct stat st;
      if (::lstat(abs.c_str(), &st) != 0) return SysFail("cannot stat " + rel, err);
      type = S_ISDIR(st.st_mode)   ? DT_DIR
             : S_ISREG(st.st_mode) ? DT_REG
             : S_ISLNK(st.st_mode) ? DT_LNK
                                   : DT_UNKNOWN;
    }
    if (type == DT_DIR) {
      if (AnyMayMatchBelow(globs, rel) && !Walk(rel, globs, hashes, err)) return false;
    } else if (type == DT_REG) {
      if (!MatchesAny(globs, rel)) continue;
      std::string hex;
      if (!HashFile(abs, rel, &hex, err)) return false;
      (*hashes)[rel] = hex;
    } else if (type == DT_LNK) {
      if (!MatchesAny(globs, rel)) continue;
      char target[4096];
      ssize_t n = ::readlink(abs.c_str(), target, sizeof target);
      if (n < 0) return SysFail("cannot read the link " + rel, err);
      (*hashes)[rel] = Sha256Hex("symlink:" + std::string(target, static_cast<size_t>(n)));
    }
    // Sockets, fifos and devices are not content: skipped.
  }
  return true;
}

bool FsWorkspace::HashFiles(const std::vector<std::string>& globs,
                            std::map<std::string, std::string>* hashes, std::string* err) {
  hashes->clear();
  return Walk("", globs, hashes, err);
}

bool FsWorkspace::ReadFile(const std::string& rel_path, std::string* content, std::string* err) {
  std::string abs;
  if (!Resolve(rel_path, &abs, err)) return false;
  content->clear();
  auto append = [&](const char* p, size_t n) { content->append(p, n); };
  return ReadChunks(abs, rel_path, 0, append, err);
}

bool FsWorkspace::WriteFile(const std::string& rel_path, const std::string& content,
                            std::string* err) {
  std::string abs;
  if (!Resolve(rel_path, &abs, err)) return false;
  const std::string parent = Parent(rel_path);
  if (!parent.empty() && !MakeDirs(parent, err)) return false;
  return ReplaceFile(abs, content, err);
}

bool FsWorkspace::AppendFile(const std::string& rel_path, const std::string& content,
                             std::string* err) {
  std::string abs;
  if (!Resolve(rel_path, &abs, err)) return false;
  const std::string parent = Parent(rel_path);
  if (!parent.empty() && !MakeDirs(parent, err)) return false;
  int fd = ::open(abs.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) return SysFail("cannot open " + rel_path, err);
  bool ok = WriteAll(fd, content);
  if (!ok) SysFail("cannot append to " + rel_path, err);
  if (::close(fd) != 0 && ok) ok = SysFail("cannot append to " + rel_path, err);
  return ok;
}

bool FsWorkspace::MakeDirs(const std::string& rel_path, std::string* err) {
  std::string abs;
  if (!Resolve(rel_path, &abs, err)) return false;
  std::error_code ec;
  std::filesystem::create_directories(abs, ec);
  if (ec) {
    *err = "cannot create " + rel_path + ": " + ec.message();
    return false;
  }
  return true;
}

bool FsWorkspace::Exists(const std::string& rel_path) {
  std::string abs, err;
  struct stat st;
  return Resolve(rel_path, &abs, &err) && ::lstat(abs.c_str(), &st) == 0;
}

bool FsWorkspace::RemoveAll(const std::string& rel_path, std::string* err) {
  std::string abs;
  if (!Resolve(rel_path, &abs, err)) return false;
  std::error_code ec;
  std::filesystem::remove_all(abs, ec);
  if (!ec) return true;
  // A step may have made folders read-only (or unsearchable) to keep its
  // files: give every folder back its owner's permissions (each before the
  // iterator descends into it), then try again.
  ::chmod(abs.c_str(), 0700);
  for (auto it = std::filesystem::recursive_directory_iterator(
           abs, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
  }
  ec.clear();
  std::filesystem::remove_all(abs, ec);
  if (ec) {
    *err = "cannot remove " + rel_path + ": " + ec.message();
    return false;
  }
  return true;
}

std::unique_ptr<Workspace> FsWorkspace::Subtree(const std::string& rel_path) {
  return std::make_unique<FsWorkspace>(root_ + "/" + rel_path);
}

}  // namespace ratchet
