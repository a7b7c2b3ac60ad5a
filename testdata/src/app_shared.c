/* symfilter fixture: a program calling into libfixture.so. */
#include <stdio.h>
#include <stdlib.h>

int lib_compute(int *buf, int n);

__attribute__((noinline)) int use_lib(int n) {
  int *buf = calloc((size_t)n, sizeof(int));
  int r = lib_compute(buf, n);
  free(buf);
  return r;
}

int main(int argc, char **argv) {
  (void)argv;
  printf("%d\n", use_lib(argc + 3));
  return 0;
}
