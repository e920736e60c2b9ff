#include "exec/supervisor_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

namespace ratchet {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kShareMemory = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kShareMemory = false;
#else
constexpr bool kShareMemory = true;
#endif
#else
constexpr bool kShareMemory = true;
#endif

// The supervisor needs ~30 KiB (a 16 KiB pid list, small buffers); a guard
// page below turns an overflow into a crash instead of a corruption.
constexpr size_t kStackSize = 256 << 10;

int SupervisorEntry(void* plan) { SupervisorMain(*static_cast<const SupervisorPlan*>(plan)); }

size_t StackBytes() { return kStackSize + static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Stacks are kept for the next run: mapping one and faulting its pages in
// costs more than the rest of starting a supervisor.
class StackPool {
 public:
  void* Take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        void* stack = free_.back();
        free_.pop_back();
        return stack;
      }
    }
    void* mem = mmap(nullptr, StackBytes(), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED) return nullptr;
    mprotect(mem, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE);
    return mem;
  }
  void Give(void* stack) {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < kKeep) {
      free_.push_back(stack);
    } else {
      munmap(stack, StackBytes());
    }
  }

 private:
  static constexpr size_t kKeep = 8;
  std::mutex mu_;
  std::vector<void*> free_;
};

StackPool& Stacks() {
  static StackPool* pool = new StackPool();  // never destroyed: usable during exit
  return *pool;
}

}  // namespace

bool SupervisorProcess::CanShareMemory() { return kShareMemory; }

bool SupervisorProcess::Start(const SupervisorPlan* plan, bool share_memory, std::string* err) {
  if (kShareMemory && share_memory && StartSharingMemory(plan)) return true;
  pid_ = fork();
  if (pid_ < 0) {
    *err = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid_ == 0) SupervisorMain(*plan);  // never returns
  return true;
}

bool SupervisorProcess::StartSharingMemory(const SupervisorPlan* plan) {
  void* mem = Stacks().Take();
  if (!mem) return false;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    Stacks().Give(mem);
    return false;
  }
  stack_ = mem;
  stack_size_ = StackBytes();
  release_r_.Reset(fds[0]);
  release_w_.Reset(fds[1]);
  char* top = static_cast<char*>(mem) + stack_size_;
  int release = release_r_.get();
  donor_ = std::thread([this, top, plan, release] {
    // No signal handler may run on this thread: it would share errno with
    // the supervisor. (The supervisor sets its own mask.)
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, nullptr);
    pid_t pid = clone(SupervisorEntry, top, CLONE_VM | SIGCHLD, const_cast<SupervisorPlan*>(plan));
    cloned_.store(pid > 0 ? pid : -1);
    cloned_.notify_one();
    if (pid <= 0) return;
    // The supervisor uses this thread's TLS (errno) until it is reaped; wait
    // without looking at errno: read returns 0 when released.
    char c;
    while (read(release, &c, 1) < 0) {
    }
  });
  cloned_.wait(0);
  if (cloned_.load() < 0) {
    ReleaseDonor();
    return false;
  }
  pid_ = cloned_.load();
  return true;
}

void SupervisorProcess::Reap() {
  if (pid_ > 0 && !reaped_) {
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  ReleaseDonor();
}

void SupervisorProcess::ReleaseDonor() {
  if (donor_.joinable()) {
    release_w_.Reset();
    donor_.join();
  }
  release_r_.Reset();
  if (stack_) {
    Stacks().Give(stack_);
    stack_ = nullptr;
  }
}

SupervisorProcess::~SupervisorProcess() { Reap(); }

}  // namespace ratchet
