/* symfilter GSYM fixture: a tiny freestanding program whose functions all lie within
   255 bytes of the first one (for 1-byte GSYM address offsets). */
static volatile int t_sink;
__attribute__((noinline)) static void t_put(int v) { t_sink += v; }
static inline int t_twice(int v) {
  t_put(v);
  return v * 2;
}
__attribute__((noinline)) int t_work(int v) { return t_twice(v + 1) + 1; }
__attribute__((noinline)) int t_more(int v) { return t_work(v) * t_twice(v); }
void _start(void) {
  int r = t_more(3);
  __asm__ volatile("mov $60, %%eax\n syscall" : : "D"(r) : "rax");
  for (;;) {}
}
