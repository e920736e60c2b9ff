#include "run_env.h"

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

TrainingClock::TrainingClock(bool cpu_clock, int threads)
    : cpu_(cpu_clock), threads_(threads < 1 ? 1 : threads), start_(Now()) {}

double TrainingClock::Now() const {
  timespec t{};
  clock_gettime(cpu_ ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return (t.tv_sec + t.tv_nsec * 1e-9) / (cpu_ ? threads_ : 1);
}

double TrainingClock::Seconds() const { return Now() - start_; }

}  // namespace gpt
