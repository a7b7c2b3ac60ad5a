#include <stdio.h>
#include "common.h"
__attribute__((noinline)) int compute(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += shared_scale(i);
  return s;
}
int main(int argc, char **argv) { (void)argv; printf("%d\n", compute(argc + 4)); return 0; }
