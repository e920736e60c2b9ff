#include "files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpt {

bool ReadWholeFile(const std::string& path, std::string* content, std::string* err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = "cannot open " + path;
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  *content = s.str();
  return true;
}

bool WriteAtomically(const std::string& path, const std::string& content, std::string* err) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      *err = "cannot write " + tmp + " (disk full or no permission?)";
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    *err = "cannot rename " + tmp + " to " + path + ": " + ec.message();
    return false;
  }
  return true;
}

}  // namespace gpt
