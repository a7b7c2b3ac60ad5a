/* symfilter GSYM fixture: C with inlining chains, recursion, several files' worth of functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int g_sink;
int g_table[32];

__attribute__((noinline)) void sink(int v) { g_sink += v; }

static inline int leaf(int x) {
  sink(x);
  return x * 3;
}

static inline int middle(int x) {
  int y = leaf(x + 1);
  if (y > 100)
    sink(y);
  return y + 2;
}

static inline int outer(int x) {
  int a = middle(x);
  int b = middle(x * 2);
  return a + b;
}

__attribute__((noinline)) int chain(int x) {
  int z = outer(x);
  return z - 1;
}

__attribute__((noinline)) int recurse(int depth) {
  if (depth <= 0) {
    sink(depth);
    return 0;
  }
  return recurse(depth - 1) + 1;
}

static int compare(const void *a, const void *b) {
  return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) void sort_table(int n) {
  for (int i = 0; i < 32; i++)
    g_table[i] = (i * 7919 + n) % 101;
  qsort(g_table, 32, sizeof(int), compare);
}

__attribute__((noinline)) long checksum(const char *s) {
  long h = 5381;
  while (*s) {
    h = h * 33 + (unsigned char)*s++;
    if (h & 0x100000)
      sink((int)h);
  }
  return h;
}

struct point { int x, y; };

static inline int dot(struct point a, struct point b) { return a.x * b.x + a.y * b.y; }

__attribute__((noinline)) int geometry(int n) {
  struct point p = {n, n + 1}, q = {n - 1, 2};
  int acc = 0;
  for (int i = 0; i < n; i++) {
    acc += dot(p, q);
    p.x++;
    if (acc > 1000)
      acc = outer(acc);
  }
  return acc;
}

__attribute__((noinline)) int frame3(int a) { return chain(a) + recurse(3); }
__attribute__((noinline)) int frame2(int a) { return frame3(a + 1) * 2 + geometry(a); }
__attribute__((noinline)) int frame1(int a) {
  sort_table(a);
  return frame2(a) + g_table[a & 31];
}

int main(int argc, char **argv) {
  long c = checksum(argc > 1 ? argv[1] : "gsym");
  int r = frame1(argc);
  printf("%d %ld %zu\n", r, c, strlen(argv[0]));
  return 0;
}
