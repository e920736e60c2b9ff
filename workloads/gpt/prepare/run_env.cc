#include "run_env.h"

#include <fcntl.h>
#include <time.h>

#include <cstdlib>
#include <string>

namespace gpt {
namespace {

const char* Get(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

bool ReadRunEnv(RunEnv* env, std::string* err) {
  *env = RunEnv();
  if (const char* v = Get("RATCHET_BUDGET_SECONDS")) {
    char* end = nullptr;
    env->budget_seconds = std::strtod(v, &end);
    if (*end != '\0' || !(env->budget_seconds > 0)) {
      *err = std::string("RATCHET_BUDGET_SECONDS='") + v + "' is not a positive number of seconds";
      return false;
    }
  }
  if (const char* v = Get("RATCHET_SEED")) {
    char* end = nullptr;
    env->seed = std::strtoull(v, &end, 10);
    if (*end != '\0') {
      *err = std::string("RATCHET_SEED='") + v + "' is not a non-negative integer";
      return false;
    }
  }
  if (const char* v = Get("RATCHET_EXPERIMENT")) env->experiment = v;
  if (const char* v = Get("RATCHET_RUN_DIR")) env->run_dir = v;
  if (const char* v = Get("GPT_DATA_DIR")) env->data_dir = v;
  if (const char* v = Get("GPT_CLOCK")) {
    const std::string clock = v;
    if (clock != "cpu" && clock != "wall") {
      *err = "GPT_CLOCK='" + clock + "' is neither wall nor cpu";
      return false;
    }
    env->cpu_clock = clock == "cpu";
  }
  return true;
}

namespace {

bool ReadFd(const char* name, int* fd, std::string* err) {
  if (const char* v = Get(name)) {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 0 || n > 1023) {
      *err = std::string(name) + "='" + v + "' is not a file descriptor";
      return false;
    }
    *fd = static_cast<int>(n);
  }
  if (*fd >= 0 && fcntl(*fd, F_GETFD) < 0) {
    *err = std::string(name) + ": descriptor " + std::to_string(*fd) +
           " is not open (the model server is connected by the engine, or by "
           "prepare/with-server when run by hand)";
    return false;
  }
  return true;
}

}  // namespace

bool ReadVerifyEnv(VerifyEnv* env, std::string* err) {
  *env = VerifyEnv();
  if (const char* v = Get("RATCHET_VERIFY_SPLIT")) env->split = v;
  if (env->split != "val" && env->split != "audit") {
    *err = "RATCHET_VERIFY_SPLIT='" + env->split + "' is neither val nor audit";
    return false;
  }
  if (const char* v = Get("RATCHET_RUN_DIR")) env->run_dir = v;
  if (const char* v = Get("GPT_DATA_DIR")) env->data_dir = v;
  if (!ReadFd("RATCHET_SERVE_WRITE_FD", &env->write_fd, err) ||
      !ReadFd("RATCHET_SERVE_READ_FD", &env->read_fd, err) ||
      !ReadFd("RATCHET_PROBE_WRITE_FD", &env->probe_write_fd, err) ||
      !ReadFd("RATCHET_PROBE_READ_FD", &env->probe_read_fd, err)) {
    return false;
  }
  if ((env->probe_write_fd < 0) != (env->probe_read_fd < 0)) {
    *err = "RATCHET_PROBE_WRITE_FD and RATCHET_PROBE_READ_FD come together or not at all";
    return false;
  }
  return true;
}

TrainingClock::TrainingClock(bool cpu_clock, int threads)
    : cpu_(cpu_clock), threads_(threads < 1 ? 1 : threads), start_(Now()) {}

double TrainingClock::Now() const {
  timespec t{};
  clock_gettime(cpu_ ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return (t.tv_sec + t.tv_nsec * 1e-9) / (cpu_ ? threads_ : 1);
}

double TrainingClock::Seconds() const { return Now() - start_; }

}  // namespace gpt
