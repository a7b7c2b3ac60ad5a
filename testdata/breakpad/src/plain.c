/* Breakpad fixture: C, static inline chains, a recursive function. */
#include <stdio.h>
#include <string.h>

static inline unsigned rotl(unsigned x, int k) { return (x << k) | (x >> (32 - k)); }

static inline unsigned mix(unsigned h, unsigned v) {
  h ^= rotl(v * 0xcc9e2d51u, 15) * 0x1b873593u;
  return rotl(h, 13) * 5 + 0xe6546b64u;
}

__attribute__((noinline)) unsigned hash(const char *s) {
  unsigned h = 0x9747b28cu;
  size_t n = strlen(s);
  for (size_t i = 0; i < n; ++i)
    h = mix(h, (unsigned char)s[i]);
  return h;
}

__attribute__((noinline)) int depth(int n) { return n <= 0 ? 0 : 1 + depth(n - 1); }

int counter;

int main(int argc, char **argv) {
  counter = depth(argc * 3);
  printf("%u %d\n", hash(argc > 1 ? argv[1] : "breakpad"), counter);
  return 0;
}
