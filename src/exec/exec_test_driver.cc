// A stand-in ratchet for the exec tests: runs one RunSpec and prints its
// RunResult, both as JSON, so that a test can run the runner as another
// user (under setpriv) and let the run stop or kill this process.
// Usage: exec_test_driver SPEC_JSON
//   SPEC_JSON: {"argv": [...], "cwd": "", "env": {"K": "V"}, "timeout_s": 0,
//     "grace_s": 5, "log_path": "", "stdin_data": "...",
//     "sandbox": {"enabled": true, "home": "", "network": false,
//                 "nested_namespaces": false,
//                 "mounts": [{"source": "", "target": "", "kind": "ro|rw|dev|hidden",
//                             "optional": false}]},
//     "limits": {"memory_bytes": 0, "pids": 0, "file_bytes": 0},
//     "readonly_paths": [...], "cgroups": true,
//     "pid_env": "RATCHET_PID"}   (this process's pid is exported as that)
// Prints {"end": "exited|signaled|timed out|cancelled|failed to start|limit",
//   "exit_code", "signal", "limit": "none|memory|pids|file size", "wall_s",
//   "cpu_s", "peak_rss_mb", "sandboxed", "containment", "limits_enforced",
//   "tail", "error", "driver_pid"} on one line and exits 0 (2 on bad input).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "exec/local_runner.h"

using ratchet::Mount;
using ratchet::RunResult;
using ratchet::RunSpec;
using Json = nlohmann::json;

namespace {

RunSpec SpecFrom(const Json& j, bool* cgroups) {
  RunSpec s;
  s.argv = j.at("argv").get<std::vector<std::string>>();
  s.cwd = j.value("cwd", "");
  const Json env = j.value("env", Json::object());  // alive through the loop
  for (auto& [k, v] : env.items()) s.env.emplace_back(k, v.get<std::string>());
  if (j.contains("pid_env"))
    s.env.emplace_back(j["pid_env"].get<std::string>(), std::to_string(getpid()));
  s.timeout_s = j.value("timeout_s", 0.0);
  s.grace_s = j.value("grace_s", 5.0);
  s.log_path = j.value("log_path", "");
  if (j.contains("stdin_data")) s.stdin_data = j["stdin_data"].get<std::string>();
  if (j.contains("sandbox")) {
    const Json& b = j["sandbox"];
    s.sandbox.enabled = b.value("enabled", true);
    s.sandbox.home = b.value("home", "");
    s.sandbox.network = b.value("network", false);
    s.sandbox.nested_namespaces = b.value("nested_namespaces", false);
    const Json mounts = b.value("mounts", Json::array());
    for (const Json& m : mounts) {
      Mount mount;
      mount.source = m.value("source", "");
      mount.target = m.value("target", "");
      std::string kind = m.value("kind", "ro");
      mount.kind = kind == "rw"       ? Mount::Kind::kWritable
                   : kind == "dev"    ? Mount::Kind::kDevice
                   : kind == "hidden" ? Mount::Kind::kHidden
                                      : Mount::Kind::kReadOnly;
      mount.optional = m.value("optional", false);
      s.sandbox.mounts.push_back(mount);
    }
  }
  if (j.contains("limits")) {
    const Json& l = j["limits"];
    s.limits.memory_bytes = l.value("memory_bytes", uint64_t{0});
    s.limits.pids = l.value("pids", uint64_t{0});
    s.limits.file_bytes = l.value("file_bytes", uint64_t{0});
  }
  s.readonly_paths = j.value("readonly_paths", std::vector<std::string>{});
  *cgroups = j.value("cgroups", true);
  return s;
}

const char* EndName(RunResult::End e) {
  switch (e) {
    case RunResult::End::kExited:
      return "exited";
    case RunResult::End::kSignaled:
      return "signaled";
    case RunResult::End::kTimedOut:
      return "timed out";
    case RunResult::End::kCancelled:
      return "cancelled";
    case RunResult::End::kFailedToStart:
      return "failed to start";
    case RunResult::End::kLimit:
      return "limit";
  }
  return "?";
}

const char* LimitName(RunResult::Limit l) {
  switch (l) {
    case RunResult::Limit::kNone:
      return "none";
    case RunResult::Limit::kMemory:
      return "memory";
    case RunResult::Limit::kPids:
      return "pids";
    case RunResult::Limit::kFileSize:
      return "file size";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: exec_test_driver SPEC_JSON\n");
    return 2;
  }
  RunSpec spec;
  bool cgroups = true;
  try {
    spec = SpecFrom(Json::parse(argv[1]), &cgroups);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exec_test_driver: bad spec: %s\n", e.what());
    return 2;
  }
  ratchet::LocalRunnerOptions options;
  options.cgroups = cgroups;
  RunResult r = ratchet::LocalProcessRunner(options).Run(spec);
  Json out = {{"end", EndName(r.end)},
              {"exit_code", r.exit_code},
              {"signal", r.signal},
              {"limit", LimitName(r.limit)},
              {"wall_s", r.wall_s},
              {"cpu_s", r.cpu_s},
              {"peak_rss_mb", r.peak_rss_mb},
              {"sandboxed", r.sandboxed},
              {"containment", r.containment},
              {"limits_enforced", r.limits_enforced},
              {"tail", r.tail},
              {"error", r.error},
              {"describe", r.Describe()},
              {"driver_pid", getpid()}};
  std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << std::endl;
  return 0;
}
