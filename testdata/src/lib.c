/* symfilter fixture: a shared library with inlined code, used by app_shared. */
int lib_counter = 5;

__attribute__((noinline)) void lib_sink(int *p, int v) { *p += v; }

static inline int lib_inner(int *buf, int i) {
  lib_sink(&buf[i], i);
  return buf[i];
}

__attribute__((noinline)) int lib_compute(int *buf, int n) {
  int total = 0;
  for (int i = 0; i < n; i++)
    total += lib_inner(buf, i);
  return total + lib_counter;
}
