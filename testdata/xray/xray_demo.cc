// XRay FDR demo program for symfilter's tests: threads, recursion, tail
// calls, custom events, logged arguments.
// Built by make-traces.sh with clang++-22 -fxray-instrument.
#include <xray/xray_interface.h>
#include <xray/xray_log_interface.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace demo {

volatile int sink;

__attribute__((noinline)) int leaf(int x) {
  sink = x;
  return x * 2 + 1;
}

__attribute__((noinline)) int fib(int n) {
  if (n < 2) return leaf(n);
  return fib(n - 1) + fib(n - 2);
}

// Tail call: with -O2 the call to leaf is a jmp, XRay logs a tail exit.
__attribute__((noinline)) int tail_caller(int x) {
  sink = x + 1;
  return leaf(x + 3);
}

[[clang::xray_log_args(1)]] __attribute__((noinline)) int with_arg(int x) {
  sink = x;
  return fib(x % 5);
}

template <typename T>
struct Worker {
  __attribute__((noinline)) static T step(T v) {
    static const char msg[] = "step-event";
    __xray_customevent(msg, sizeof(msg) - 1);
    return static_cast<T>(tail_caller(static_cast<int>(v)) + 1);
  }
};

// No typed events: clang-22's FDR runtime crashes in
// FDRLogWriter::writeTypedEvent when __xray_typedevent is called; the
// hand-built traces (make-v1-trace.py) cover TypedEventMarker instead.
__attribute__((noinline)) int mix(int i) { return leaf(i) ^ leaf(i + 1); }

__attribute__((noinline)) void run_thread(int id, int iters) {
  for (int i = 0; i < iters; ++i) {
    sink = fib(6 + (i + id) % 3);
    sink = Worker<long>::step(i);
    sink = with_arg(i + id);
    if (i % 4 == 0) sink = mix(i);
  }
}

}  // namespace demo

// FDR mode's argument logger is not installed by __xray_log_init_mode; the
// runtime exports it, so install it to get Entry_Args + CallArgument records.
namespace __xray {
void fdrLoggingHandleArg1(int32_t FuncId, XRayEntryType Entry, uint64_t Arg);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  int iters = argc > 2 ? std::atoi(argv[2]) : 3;
  const char *cfg = argc > 3 ? argv[3]
                             : "buffer_size=16384:buffer_max=64:"
                               "func_duration_threshold_us=0";
  if (__xray_log_init_mode("xray-fdr", cfg) != XRAY_LOG_INITIALIZED) {
    std::fprintf(stderr, "xray init failed\n");
    return 1;
  }
  __xray_set_handler_arg1(__xray::fdrLoggingHandleArg1);
  __xray_patch();
  if (threads <= 1) {
    demo::run_thread(0, iters);
  } else {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) ts.emplace_back(demo::run_thread, t, iters);
    for (auto &t : ts) t.join();
  }
  __xray_log_finalize();
  __xray_log_flushLog();
  return 0;
}
