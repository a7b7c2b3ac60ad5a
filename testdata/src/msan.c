/* symfilter fixture: MSan use of an uninitialized heap value, three calls deep, with the
   allocation's origin. */
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static int verdict(int x) {
  if (x > 2)
    return puts("big");
  return puts("small");
}
__attribute__((noinline)) static int scaled(const int *v, int i) { return verdict(v[i] * 3); }
__attribute__((noinline)) static int judge(const int *v, int n) { return scaled(v, n + 1); }
int main(int argc, char **argv) {
  (void)argv;
  int *v = malloc(4 * sizeof(int));
  v[0] = argc;
  int r = judge(v, argc);
  free(v);
  return r < 0;
}
