// One discard cycle of the engine's git work (CommitWorktree + SetRef +
// RestoreTo) on a small loop repository: libgit2 in-process (GitRepo) against
// the git commands that do the same, run side by side, interleaved, so that
// machine noise hits both alike. See README.md.
//
//   cycle_bench [cycles=200] [files=30]
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "vcs/git_repo.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

/// CPU milliseconds (user + system) used so far by this process, or by its
/// waited-for children: on a loaded machine these move less than wall time.
double CpuMs(int who) {
  rusage r;
  getrusage(who, &r);
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
         (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

void Die(const std::string& what) {
  std::fprintf(stderr, "cycle_bench: %s\n", what.c_str());
  std::exit(1);
}

/// Runs git with `args` in `dir` (no shell), returning its stdout without the
/// trailing newline. This is what an engine that shells out to git would do.
std::string Git(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", dir});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (::pipe(out) != 0) Die("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  pid_t pid;
  if (posix_spawnp(&pid, "git", &actions, nullptr, argv.data(), environ) != 0) Die("spawn git");
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, n);
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("git " + args[3] + " failed");
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::trunc) << text;
}

/// A loop-sized repository: `files` small sources in a few folders, an
/// ignored build folder and .ratchet state.
std::string MakeRepo(const std::string& dir, int files) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Git(dir, {"init", "-q", "-b", "main"});
  Git(dir, {"config", "user.name", "bench"});
  Git(dir, {"config", "user.email", "bench@localhost"});
  Write(dir + "/.gitignore", "build/\n.ratchet/\n");
  for (int i = 0; i < files; ++i) {
    std::string body;
    for (int line = 0; line < 40; ++line)
      body += "value_" + std::to_string(line) + " = " + std::to_string(i * line) + "\n";
    Write(dir + "/src/part" + std::to_string(i % 4) + "/file" + std::to_string(i) + ".py", body);
  }
  Write(dir + "/train.py", "lr = 0.1\n");
  Write(dir + "/build/out.o", "object\n");
  Write(dir + "/.ratchet/ledger.db", "state\n");
  Git(dir, {"add", "-A"});
  Git(dir, {"commit", "-q", "-m", "initial"});
  return Git(dir, {"rev-parse", "HEAD"});
}

/// The proposer's edit (not timed): change one file, add one.
void Edit(const std::string& dir, int i) {
  Write(dir + "/train.py", "lr = 0." + std::to_string(i) + "\n");
  Write(dir + "/scratch/new" + std::to_string(i) + ".py", "x = 1\n");
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int cycles = argc > 1 ? std::atoi(argv[1]) : 200;
  const int files = argc > 2 ? std::atoi(argv[2]) : 30;
  const std::string base_dir = (std::filesystem::temp_directory_path() /
                                ("ratchet-cycle-bench-" + std::to_string(::getpid())))
                                   .string();
  const std::string lib_dir = base_dir + "/libgit2", cli_dir = base_dir + "/cli";
  const std::string lib_base = MakeRepo(lib_dir, files);
  const std::string cli_base = MakeRepo(cli_dir, files);

  std::unique_ptr<ratchet::GitRepo> repo;
  std::string err;
  if (!ratchet::GitRepo::Open(lib_dir, &repo, &err)) Die(err);

  std::vector<double> lib_ms, cli_ms, lib_cpu, cli_cpu;
  for (int i = 1; i <= cycles; ++i) {
    // libgit2, in-process.
    Edit(lib_dir, i);
    auto t0 = Clock::now();
    double c0 = CpuMs(RUSAGE_SELF);
    std::string sha;
    if (!repo->CommitWorktree(lib_base, "experiment", &sha, &err) ||
        !repo->SetRef("refs/ratchet/tried/" + std::to_string(i), sha, &err) ||
        !repo->RestoreTo(lib_base, &err)) {
      Die(err);
    }
    lib_ms.push_back(Ms(Clock::now() - t0));
    lib_cpu.push_back(CpuMs(RUSAGE_SELF) - c0);

    // The same with the git CLI: stage all, write the tree, commit it with
    // the incumbent as parent, record the ref, reset and clean.
    Edit(cli_dir, i);
    t0 = Clock::now();
    c0 = CpuMs(RUSAGE_SELF) + CpuMs(RUSAGE_CHILDREN);
    Git(cli_dir, {"add", "-A"});
    const std::string tree = Git(cli_dir, {"write-tree"});
    const std::string commit =
        Git(cli_dir, {"commit-tree", tree, "-p", cli_base, "-m", "experiment"});
    Git(cli_dir, {"update-ref", "refs/ratchet/tried/" + std::to_string(i), commit});
    Git(cli_dir, {"reset", "-q", "--hard", cli_base});
    Git(cli_dir, {"clean", "-q", "-f", "-d"});
    cli_ms.push_back(Ms(Clock::now() - t0));
    cli_cpu.push_back(CpuMs(RUSAGE_SELF) + CpuMs(RUSAGE_CHILDREN) - c0);
  }
  // Both trees must be back at the incumbent, or the comparison is void.
  if (!Git(lib_dir, {"status", "--porcelain"}).empty() ||
      !Git(cli_dir, {"status", "--porcelain"}).empty())
    Die("a worktree is not clean after the cycles");
  std::filesystem::remove_all(base_dir);

  const double lib = Median(lib_ms), cli = Median(cli_ms);
  const double lib_c = Median(lib_cpu), cli_c = Median(cli_cpu);
  std::printf("cycles: %d, repository: %d files + train.py\n", cycles, files);
  std::printf("                    median wall     median CPU   (per cycle)\n");
  std::printf("libgit2 (GitRepo)   %8.2f ms     %8.2f ms\n", lib, lib_c);
  std::printf("git CLI (6 spawns)  %8.2f ms     %8.2f ms\n", cli, cli_c);
  std::printf("ratio CLI / libgit2: wall %.1fx, CPU %.1fx\n", cli / lib, cli_c / lib_c);
  return 0;
}
