#include <stdio.h>
#include <stdlib.h>
static int square(int x) { return x * x; }
__attribute__((noinline)) int add(int a, int b) { return a + b; }
__attribute__((noinline)) int unused(int a) { return a * 3; }
int main(int argc, char **argv) {
  int s = 0;
  for (int i = 0; i < argc + 2; i++) s = add(s, square(i));
  printf("%d\n", s);
  return 0;
}
