#include "exec/sandbox_probe.h"

#include <map>
#include <mutex>

#include "exec/local_runner.h"
#include "exec/spawn_args.h"

extern char** environ;

namespace ratchet {
namespace {

// A run that cannot itself need a sandbox or a cgroup.
RunResult RunPlain(const std::vector<std::string>& argv) {
  RunSpec spec;
  spec.argv = argv;
  spec.timeout_s = 10;
  spec.grace_s = 1;
  LocalRunnerOptions plain;
  plain.bwrap = "";
  plain.cgroups = false;
  return LocalProcessRunner(plain).Run(spec);
}

std::string WhyNot(const RunResult& r) {
  if (r.end == RunResult::End::kFailedToStart) return r.error;
  std::string tail = r.tail;
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  return r.Describe() + (tail.empty() ? "" : ": " + tail);
}

SandboxProbe Probe(const std::string& bwrap, bool legacy) {
  SandboxProbe p;
  if (bwrap.empty()) {
    p.why = "no sandbox configured (no bwrap)";
    return p;
  }
  std::string path_env;
  FindEnv(MergeEnvironment(environ, {}), "PATH", &path_env);
  if (!FindProgram(bwrap, path_env, "", &p.host.bwrap, &p.why)) return p;
  if (legacy) {
    RunResult r =
        RunPlain({p.host.bwrap, "--dev-bind", "/", "/", "--ro-bind", "/etc", "/etc", "--", "true"});
    p.works = r.ok();
    if (!p.works) p.why = WhyNot(r);
    return p;
  }
  RunResult help = RunPlain({p.host.bwrap, "--help"});
  SandboxHost scanned = ScanSandboxHost();
  scanned.bwrap = p.host.bwrap;
  scanned.disable_userns = help.tail.find("--disable-userns") != std::string::npos;
  p.host = scanned;
  // The same shape as a real sandboxed run, on a command that cannot fail.
  SandboxSpec spec;
  spec.enabled = true;
  RunResult r = RunPlain(SandboxArgv(p.host, spec, "", -1, {"true"}));
  p.works = r.ok();
  if (!p.works) p.why = p.host.bwrap + " cannot make the sandbox here: " + WhyNot(r);
  return p;
}

const SandboxProbe& Cached(const std::string& bwrap, bool legacy) {
  static std::mutex mu;
  static auto* probes = new std::map<std::pair<std::string, bool>, SandboxProbe>();
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(bwrap, legacy);
  auto it = probes->find(key);
  if (it == probes->end()) it = probes->emplace(key, Probe(bwrap, legacy)).first;
  return it->second;
}

}  // namespace

const SandboxProbe& ProbeSandbox(const std::string& bwrap) { return Cached(bwrap, false); }
const SandboxProbe& ProbeLegacySandbox(const std::string& bwrap) { return Cached(bwrap, true); }

}  // namespace ratchet
