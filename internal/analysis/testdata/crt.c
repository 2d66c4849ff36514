// A compiler-rt XRay program for the analysis tests: one thread (llvm-xray
// account rejects most multi-thread traces, see the package doc), three
// levels of calls, a recursion, and a tail call at -O1.
#include <stdio.h>
int __xray_log_init_mode(const char *, const char *);
int __xray_patch(void);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);

__attribute__((noinline)) int leaf(int x) {
  int s = 0;
  for (int i = 0; i < x * 100; i++) s += i ^ x;
  return s;
}
__attribute__((noinline)) int mid(int x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) int rec(int x) { return x <= 0 ? leaf(1) : 1 + rec(x - 1); }
__attribute__((noinline)) int top(int x) {
  int s = rec(x % 4);
  for (int i = 0; i < x; i++) s += mid(i);
  return s;
}
__attribute__((xray_never_instrument)) int main(void) {
  __xray_log_init_mode("xray-fdr", "func_duration_threshold_us=0:buffer_size=65536:buffer_max=64");
  __xray_patch();
  int s = 0;
  for (int i = 0; i < 30; i++) s += top(i);
  printf("%d\n", s);
  __xray_log_finalize();
  __xray_log_flushLog();
  return 0;
}
