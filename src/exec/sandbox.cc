#include "exec/sandbox.h"

#include <filesystem>

namespace ratchet {

std::vector<std::string> BwrapArgv(const std::string& bwrap,
                                   const std::vector<std::string>& readonly, const std::string& cwd,
                                   const std::string& program,
                                   const std::vector<std::string>& argv_in) {
  std::error_code ec;
  std::filesystem::path base =
      cwd.empty() ? std::filesystem::current_path(ec) : std::filesystem::path(cwd);
  // --dev-bind / / keeps every file, device (GPUs) and mount as it is; no new
  // pid or network namespace, so the run's processes stay visible and
  // killable like any others. bwrap keeps the working directory.
  std::vector<std::string> argv = {bwrap, "--dev-bind", "/", "/"};
  for (const std::string& p : readonly) {
    std::filesystem::path abs =
        std::filesystem::path(p).is_absolute() ? std::filesystem::path(p) : base / p;
    argv.insert(argv.end(), {"--ro-bind-try", abs.string(), abs.string()});
  }
  argv.push_back("--");
  argv.push_back(program);
  if (!argv_in.empty()) argv.insert(argv.end(), argv_in.begin() + 1, argv_in.end());
  return argv;
}

}  // namespace ratchet
