#include "base/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ratchet {

bool ReadWholeFile(const std::string& path, std::string* content, std::string* err) {
  std::ifstream in(path, std::ios::binary);
  bool ok = static_cast<bool>(in);
  if (ok) {
    std::ostringstream s;
    s << in.rdbuf();
    *content = s.str();
    ok = !in.bad();
  }
  if (!ok && err) *err = "cannot read " + path + ": " + std::strerror(errno);
  return ok;
}

}  // namespace ratchet
