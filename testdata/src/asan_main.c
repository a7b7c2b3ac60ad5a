/* symfilter fixture: ASan heap overflow reached through a shared library. */
int overflow_in_lib(int n);
__attribute__((noinline)) int call_lib(int n) { return overflow_in_lib(n) + 1; }
int main(int argc, char **argv) {
  (void)argv;
  return call_lib(argc + 7);
}
