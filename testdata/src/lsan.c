/* symfilter fixture: a leak found by LeakSanitizer. */
#include <stdlib.h>
#include <string.h>
void *g_keep;
__attribute__((noinline)) char *make_copy(const char *s) {
  char *p = malloc(strlen(s) + 1);
  strcpy(p, s);
  return p;
}
__attribute__((noinline)) void lose(const char *s) {
  char *p = make_copy(s);
  g_keep = p + 1; /* an interior pointer does not keep it alive for LSan's default */
  g_keep = 0;
}
int main(int argc, char **argv) {
  (void)argc;
  lose(argv[0]);
  return 0;
}
