// peak: measures this machine's fp32 peak in FLOP/s: every OpenMP thread
// runs independent chains of fused multiply-adds on the widest vectors the
// CPU has (AVX-512, else AVX2). The best of several rounds is printed, in
// GFLOP/s. The evaluator divides the trainer's achieved FLOP/s by it for
// mfu_percent; the benchmark in bench/gpt compares against it.
//   peak [--seconds S] [--rounds N] [--clock cpu]
// With --clock cpu the time is each thread's CPU time (averaged), so that a
// busy shared machine lowers the figure much less (see GPT_CLOCK=cpu).
#include <immintrin.h>
#include <omp.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr int kChains = 16;  // independent accumulators: enough to hide FMA latency
constexpr long kInner = 1 << 16;

__attribute__((target("avx512f"))) double Avx512(long outer) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 m = _mm512_set1_ps(0.99999f), a = _mm512_set1_ps(1e-6f);
  for (long o = 0; o < outer; ++o) {
    for (long it = 0; it < kInner; ++it) {
#pragma GCC unroll 16
      for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, a);
    }
  }
  float lanes[16];
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  _mm512_storeu_ps(lanes, s);
  double t = 0;
  for (float l : lanes) t += l;
  return t;
}

__attribute__((target("avx2,fma"))) double Avx2(long outer) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 m = _mm256_set1_ps(0.99999f), a = _mm256_set1_ps(1e-6f);
  for (long o = 0; o < outer; ++o) {
    for (long it = 0; it < kInner; ++it) {
#pragma GCC unroll 16
      for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, a);
    }
  }
  float lanes[8];
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(lanes, s);
  double t = 0;
  for (float l : lanes) t += l;
  return t;
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  int rounds = 5;
  bool cpu_clock = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--seconds") {
      seconds = std::atof(argv[i + 1]);
    } else if (arg == "--rounds") {
      rounds = std::atoi(argv[i + 1]);
    } else if (arg == "--clock") {
      cpu_clock = std::string(argv[i + 1]) == "cpu";
    }
  }
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const int lanes = avx512 ? 16 : 8;
  if (!avx512 && !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "peak: this CPU has neither AVX-512 nor FMA\n");
    return 1;
  }
  // Calibrate the work per round on one thread, then time all threads.
  long outer = 1;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile double sink = avx512 ? Avx512(outer) : Avx2(outer);
    (void)sink;
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (dt > 0.05) {
      outer = std::max(1L, static_cast<long>(outer * seconds / dt));
      break;
    }
    outer *= 2;
  }
  const int threads = omp_get_max_threads();
  double best = 0;
  for (int r = 0; r < rounds; ++r) {
    double sink = 0, cpu = 0;
    const double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : sink, cpu)
    {
      const double c0 = ThreadCpuSeconds();
      sink += avx512 ? Avx512(outer) : Avx2(outer);
      cpu += ThreadCpuSeconds() - c0;
    }
    const double dt = cpu_clock ? cpu / threads : omp_get_wtime() - t0;
    const double flops = 2.0 * lanes * kChains * kInner * outer * threads;
    best = std::max(best, flops / dt * 1e-9);
    if (sink == 12345.0) std::printf(" ");  // keep the result alive
  }
  std::printf("%.1f\n", best);
  std::fprintf(stderr,
               "peak: %d threads, %s, best of %d rounds of %.1f s: %.1f GFLOP/s (%s time)\n",
               threads, avx512 ? "AVX-512" : "AVX2", rounds, seconds, best,
               cpu_clock ? "CPU" : "wall-clock");
  return 0;
}
