// A cgroup per step: the kernel holds the step's processes together, kills
// them all at once (cgroup.kill), counts their CPU time and memory peak, and
// enforces the step's memory and process limits.
//
// Layout. ratchet never moves itself: it makes a folder under its own cgroup
// and one child per step,
//   <cgroup2 mount><ratchet's cgroup>/ratchet-<pid>/step-<n>
// and the command is in step-<n> before it can fork: born there (clone3 with
// CLONE_INTO_CGROUP) where the kernel can, else it writes "0" to
// cgroup.procs before execve (supervisor.h). The memory and
// pids controllers are used in cgroup v2 where ratchet-<pid> has them; where
// it does not (a hybrid host with those controllers on v1), the step also
// gets a v1 cgroup in the memory or pids hierarchy, at the same relative
// place, when its limits need one. Folders of ratchet processes that are
// gone are removed when a process first looks (their steps are empty by
// then: the supervisor kills a step whose ratchet died).
//
// Where no cgroup can be made (an ordinary user without a delegated
// subtree, a read-only /sys/fs/cgroup in a container), a step has none and
// the runner falls back to the sandbox's pid namespace or the supervisor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/runner.h"
#include "exec/unique_fd.h"

namespace ratchet {

/// One line of /proc/self/mountinfo that mounts a cgroup hierarchy.
struct CgroupMount {
  std::string point;                     // where it is mounted
  std::string root;                      // the cgroup of the hierarchy shown at `point`
  bool v2 = false;                       // cgroup2
  std::vector<std::string> controllers;  // v1: its controllers ("memory", "pids", ...)
};

/// The cgroup mounts of a mountinfo text (octal escapes decoded).
std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo);

/// From a /proc/<pid>/cgroup text: the path of the v2 cgroup ("0::/path",
/// controller "") or of the v1 hierarchy holding `controller`. False if none.
bool FindProcCgroup(std::string_view proc_cgroup, const std::string& controller, std::string* path);

/// The folder of cgroup `path` under `mount`: "" when the mount does not show
/// it (the cgroup lies outside the mount's root).
std::string CgroupFolder(const CgroupMount& mount, const std::string& path);

/// Where this process makes its step cgroups. Probed once per process.
struct CgroupPlaces {
  std::string v2;          // .../ratchet-<pid> on cgroup2; "" when none could be made
  bool v2_memory = false;  // memory controller enabled for the steps
  bool v2_pids = false;
  std::string v1_memory;  // .../ratchet-<pid> in the v1 memory hierarchy; "" if none
  std::string v1_pids;
  std::string why_not_v2;  // why v2 is "" (for RunResult notes)
  std::string why_not_v1_memory;
  std::string why_not_v1_pids;
};
const CgroupPlaces& ProbeCgroupPlaces();

/// The cgroups of one step. Making them never fails the step: what could not
/// be made is told by contained() and the limit flags, with notes.
class StepCgroup {
 public:
  StepCgroup() = default;
  StepCgroup(const StepCgroup&) = delete;
  StepCgroup& operator=(const StepCgroup&) = delete;
  ~StepCgroup() { Remove(); }

  /// Makes the step's cgroups under `places` and sets `limits` there. Notes
  /// about what is missing go to *notes.
  void Create(const CgroupPlaces& places, const StepLimits& limits, std::string* notes);

  /// A v2 cgroup exists: the step's processes can be killed all at once.
  bool contained() const { return v2_.valid(); }
  bool memory_limited() const { return memory_limited_; }
  bool pids_limited() const { return pids_limited_; }
  bool has_memory_peak() const { return v2_memory_ || v1_memory_.valid(); }

  /// cgroup.procs descriptors the command writes "0" to before execve.
  const std::vector<int>& procs_fds() const { return procs_fds_; }
  /// Once the command is started: they are not needed any more.
  void CloseProcsFds() {
    procs_.clear();
    procs_fds_.clear();
  }
  /// The v2 cgroup's folder (-1: none); cgroup.procs of it is procs_fds()[0].
  int v2_folder_fd() const { return v2_.get(); }
  /// cgroup.events of the v2 cgroup, for poll(POLLPRI): it changes when the
  /// cgroup empties. -1 when none.
  int events_fd() const { return events_.get(); }

  /// Kills every process in the cgroup (cgroup.kill). False if it cannot.
  bool Kill();
  /// True while a process is in the cgroup (false when there is none).
  bool Populated();
  /// How often the kernel's OOM killer acted, and how often a fork failed at
  /// pids.max, in the step's cgroups.
  uint64_t OomKills();
  uint64_t PidsMaxHits();
  /// CPU time (user + system) of everything that ran in the step; false if
  /// unknown.
  bool CpuSeconds(double* seconds);
  /// The step's memory peak in bytes; false if unknown.
  bool PeakBytes(uint64_t* bytes);
  /// The v2 folder ("" if none), for messages.
  const std::string& folder() const { return v2_dir_; }

  /// Removes the cgroups (they must be empty); true when all are gone.
  bool Remove();

 private:
  std::string v2_dir_, v1_memory_dir_, v1_pids_dir_;
  UniqueFd v2_, v1_memory_, v1_pids_;  // folder descriptors
  UniqueFd events_;
  std::vector<UniqueFd> procs_;
  std::vector<int> procs_fds_;
  bool v2_memory_ = false, v2_pids_ = false;
  bool memory_limited_ = false, pids_limited_ = false;
};

}  // namespace ratchet
