/* Fixture for the debuginfod tests: see build.sh. */
#include <stdio.h>

int global_counter = 5;

__attribute__((noinline)) static int helper(int x) { return x * 3 + global_counter; }

__attribute__((noinline)) int compute(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += helper(i);
  return s;
}

int main(int argc, char **argv) {
  (void)argv;
  printf("%d\n", compute(argc + 4));
  return 0;
}
