#include "exec/sandbox.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace ratchet {
namespace {

std::string Normal(const std::string& path) {
  std::string p = std::filesystem::path(path).lexically_normal().string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

bool Covers(const std::string& target, const std::string& path) {
  if (target == "/") return true;
  return path == target ||
         (path.size() > target.size() && path.starts_with(target) && path[target.size()] == '/');
}

}  // namespace

const std::vector<std::string>& SandboxSystemDirs() {
  static const std::vector<std::string> dirs = {"/usr",   "/bin",    "/sbin", "/lib", "/lib32",
                                                "/lib64", "/libx32", "/etc",  "/opt", "/sys"};
  return dirs;
}

SandboxHost ScanSandboxHost() {
  SandboxHost host;
  host.as_root = geteuid() == 0;
  for (const std::string& dir : SandboxSystemDirs()) {
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0) continue;
    SandboxHost::SystemDir d{dir, ""};
    if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      ssize_t n = readlink(dir.c_str(), buf, sizeof buf - 1);
      if (n <= 0) continue;
      d.link.assign(buf, static_cast<size_t>(n));
    } else if (!S_ISDIR(st.st_mode)) {
      continue;
    }
    host.system_dirs.push_back(std::move(d));
  }
  // GPUs: /dev/nvidia0.., nvidiactl, nvidia-uvm, nvidia-caps/, and DRM nodes.
  if (DIR* d = opendir("/dev")) {
    while (dirent* e = readdir(d)) {
      if (std::string_view(e->d_name).starts_with("nvidia"))
        host.devices.push_back(std::string("/dev/") + e->d_name);
    }
    closedir(d);
  }
  std::sort(host.devices.begin(), host.devices.end());
  if (access("/dev/dri", F_OK) == 0) host.devices.push_back("/dev/dri");
  return host;
}

std::vector<std::string> SandboxArgv(const SandboxHost& host, const SandboxSpec& spec,
                                     const std::string& cwd, int status_fd,
                                     const std::vector<std::string>& command) {
  std::vector<std::string> a = {host.bwrap, "--unshare-user"};
  if (host.as_root) a.insert(a.end(), {"--uid", "65534", "--gid", "65534"});
  a.insert(a.end(), {"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"});
  if (!spec.network) a.push_back("--unshare-net");
  a.insert(a.end(), {"--die-with-parent", "--new-session", "--cap-drop", "ALL"});
  if (host.disable_userns && !spec.nested_namespaces) a.push_back("--disable-userns");
  for (const SandboxHost::SystemDir& d : host.system_dirs) {
    if (d.link.empty()) {
      a.insert(a.end(), {"--ro-bind-try", d.path, d.path});
    } else {
      a.insert(a.end(), {"--symlink", d.link, d.path});
    }
  }
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev"});
  for (const std::string& dev : host.devices) a.insert(a.end(), {"--dev-bind-try", dev, dev});
  a.insert(a.end(),
           {"--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/dev/shm"});
  if (spec.home.empty()) {
    a.insert(a.end(), {"--tmpfs", kSandboxHome});
  } else {
    a.insert(a.end(), {"--bind", spec.home, kSandboxHome});
  }
  for (const Mount& m : spec.mounts) {
    const std::string& target = m.target.empty() ? m.source : m.target;
    switch (m.kind) {
      case Mount::Kind::kReadOnly:
        a.insert(a.end(), {m.optional ? "--ro-bind-try" : "--ro-bind", m.source, target});
        break;
      case Mount::Kind::kWritable:
        a.insert(a.end(), {m.optional ? "--bind-try" : "--bind", m.source, target});
        break;
      case Mount::Kind::kDevice:
        a.insert(a.end(), {m.optional ? "--dev-bind-try" : "--dev-bind", m.source, target});
        break;
      case Mount::Kind::kHidden:
        a.insert(a.end(), {"--tmpfs", target});
        break;
    }
  }
  a.insert(a.end(), {"--setenv", "HOME", kSandboxHome});
  if (!cwd.empty()) a.insert(a.end(), {"--chdir", cwd});
  if (status_fd >= 0) a.insert(a.end(), {"--json-status-fd", std::to_string(status_fd)});
  a.push_back("--");
  a.insert(a.end(), command.begin(), command.end());
  return a;
}

namespace {

// The view in the order bwrap builds it, the first `mounts` of the spec's
// mounts included. "" source: a tmpfs (or /proc, /dev: nothing there comes
// from a host file we would look up).
struct Layer {
  std::string target, source;
  bool writable = false;
};

std::vector<Layer> View(const SandboxHost& host, const SandboxSpec& spec, size_t mounts) {
  std::vector<Layer> view = {{"/", "", true}};
  for (const SandboxHost::SystemDir& d : host.system_dirs) view.push_back({d.path, d.path});
  view.push_back({"/proc", ""});
  view.push_back({"/dev", ""});
  for (const std::string& dev : host.devices) view.push_back({dev, dev});
  view.push_back({"/tmp", "", true});
  view.push_back({"/dev/shm", "", true});
  view.push_back({kSandboxHome, spec.home, true});
  for (size_t i = 0; i < mounts && i < spec.mounts.size(); ++i) {
    const Mount& m = spec.mounts[i];
    std::string target = Normal(m.target.empty() ? m.source : m.target);
    if (m.kind == Mount::Kind::kHidden) {
      view.push_back({target, "", true});
    } else if (!m.optional || access(m.source.c_str(), F_OK) == 0) {
      view.push_back({target, Normal(m.source), m.kind != Mount::Kind::kReadOnly});
    }
  }
  return view;
}

const Layer* Covering(const std::vector<Layer>& view, const std::string& path) {
  for (auto it = view.rbegin(); it != view.rend(); ++it)
    if (Covers(it->target, path)) return &*it;
  return nullptr;
}

std::string HostPathIn(const Layer& layer, const std::string& path) {
  return layer.source + path.substr(layer.target == "/" ? 0 : layer.target.size());
}

}  // namespace

std::string SandboxHostPath(const SandboxHost& host, const SandboxSpec& spec,
                            const std::string& inside_in, bool* tmpfs_root) {
  if (tmpfs_root) *tmpfs_root = false;
  std::string inside = Normal(inside_in);
  std::vector<Layer> view = View(host, spec, spec.mounts.size());
  const Layer* layer = Covering(view, inside);
  if (!layer) return "";
  if (layer->source.empty()) {
    if (tmpfs_root) *tmpfs_root = inside == layer->target;
    return "";
  }
  return HostPathIn(*layer, inside);
}

std::string SandboxMountProblem(const SandboxHost& host, const SandboxSpec& spec) {
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    const Mount& m = spec.mounts[i];
    std::string target = Normal(m.target.empty() ? m.source : m.target);
    std::vector<Layer> view = View(host, spec, i);
    const Layer* layer = Covering(view, target);
    // bwrap makes a missing mount point in a tmpfs (or, through a writable
    // bind, on the host); under a read-only bind it cannot.
    if (layer && !layer->source.empty() && !layer->writable &&
        access(HostPathIn(*layer, target).c_str(), F_OK) != 0) {
      return "the sandbox's mount point '" + target + "' does not exist under the read-only '" +
             layer->target + "'";
    }
  }
  return "";
}

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
