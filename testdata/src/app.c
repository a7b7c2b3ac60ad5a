/* symfilter fixture: C program with an inlining chain, recursion and globals. */
#include <stdio.h>
#include <stdlib.h>

int g_table[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
const char g_message[] = "symfilter fixture";
static int s_counter;
volatile int g_sink;

__attribute__((noinline)) void sink(int v) { g_sink += v; }

static inline int level3(int x) {
  sink(x);
  return x * 3;
}

static inline int level2(int x) {
  int y = level3(x + 1);
  return y + 2;
}

__attribute__((noinline)) int inlined_entry(int x) {
  int z = level2(x);
  return z - 1;
}

__attribute__((noinline)) int recurse(int depth) {
  if (depth <= 0) {
    sink(depth);
    return 0;
  }
  return recurse(depth - 1) + 1;
}

__attribute__((noinline)) int frame3(int a) { return inlined_entry(a) + recurse(3); }
__attribute__((noinline)) int frame2(int a) { return frame3(a + 1) * 2; }
__attribute__((noinline)) int frame1(int a) {
  s_counter++;
  return frame2(a) + g_table[a & 15];
}

int main(int argc, char **argv) {
  (void)argv;
  int r = frame1(argc);
  printf("%s %d %d\n", g_message, r, s_counter);
  return 0;
}
