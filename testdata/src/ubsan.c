/* symfilter fixture: UBSan signed overflow and misaligned load. */
#include <limits.h>
#include <stdio.h>
__attribute__((noinline)) int add(int a, int b) { return a + b; }
__attribute__((noinline)) int load(const char *p) { return *(const int *)(p + 1); }
int main(int argc, char **argv) {
  (void)argv;
  char buf[16] = {0};
  int r = add(INT_MAX, argc);
  r += load(buf);
  printf("%d\n", r);
  return 0;
}
