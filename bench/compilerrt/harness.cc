// harness times compiler-rt XRay's FDR mode per instrumented call, in the
// output format of `go test -bench` so that benchstat and bench/table read
// it beside the Go rows. Built and run by `make bench` (bench/compilerrt.sh).
//
// f is an empty function forced through the XRay sleds; with FDR mode
// initialised (func_duration_threshold_us=0 so no call is rewound away)
// and patched, every call runs the entry and exit handlers: the cost per
// call is what a compiler-rt user pays.
#include <xray/xray_interface.h>
#include <xray/xray_log_interface.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

[[clang::xray_always_instrument]] __attribute__((noinline)) void f() {
  asm volatile("" ::: "memory");
}

static double timeCalls(long n) {
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < n; i++) f();
  auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count() / n;
}

int main(int argc, char **argv) {
  int count = argc > 1 ? atoi(argv[1]) : 5;
  long n = argc > 2 ? atol(argv[2]) : 20000000;
  // Plenty of buffers and no file: we time the handlers, not the flush.
  const char *opts = "buffer_size=65536:buffer_max=64:func_duration_threshold_us=0:no_file_flush=true";
  if (__xray_log_init_mode("xray-fdr", opts) != XRAY_LOG_INITIALIZED) {
    fprintf(stderr, "harness: __xray_log_init_mode(xray-fdr) failed\n");
    return 1;
  }
  if (__xray_patch() != SUCCESS) {
    fprintf(stderr, "harness: __xray_patch failed\n");
    return 1;
  }
  timeCalls(n / 10); // warm up: first buffers, page faults
  for (int i = 0; i < count; i++)
    printf("BenchmarkCompilerRTFDR \t%ld\t%.2f ns/op\n", n, timeCalls(n));
  __xray_unpatch();
  __xray_log_finalize();
  __xray_log_flushLog();
  return 0;
}
