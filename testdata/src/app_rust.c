/* symfilter fixture: C main calling into a no_std Rust static library. */
#include <stdio.h>
unsigned rust_entry(unsigned n);
int main(int argc, char **argv) {
  (void)argv;
  printf("%u\n", rust_entry((unsigned)argc));
  return 0;
}
