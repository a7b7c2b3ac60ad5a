/* symfilter fixture: a shared library whose inlined helper overflows a heap buffer. */
#include <stdlib.h>

static inline void fill(int *buf, int n) {
  for (int i = 0; i <= n; i++) /* off by one: writes buf[n] */
    buf[i] = i;
}

__attribute__((noinline)) int overflow_in_lib(int n) {
  int *buf = malloc(sizeof(int) * (size_t)n);
  fill(buf, n);
  int r = buf[0];
  free(buf);
  return r;
}
