/* symfilter ELF-source fixture: inlining, a local (static) function, data. */
#include "shared.h"

struct point g_points[4] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
const char g_name[] = "elf fixture";
static int s_hits;
volatile int g_out;

__attribute__((noinline)) void store(int v) { g_out += v; }

static inline int inner(int x) {
  store(x);
  return x * 3;
}

static inline int middle(int x) {
  int y = inner(x + 1);
  return y + 2;
}

__attribute__((noinline)) int outer(int x) {
  int z = middle(x);
  return z - 1;
}

__attribute__((noinline)) static int helper(int x) {
  s_hits++;
  return outer(x) + point_sum(&g_points[x & 3]);
}

int main(int argc, char **argv) {
  (void)argv;
  return helper(argc) & 1;
}
