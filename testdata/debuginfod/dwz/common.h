/* Shared by hello.c and other.c, so dwz moves its DWARF to the common file. */
struct shared_point { int x; int y; long z; };
static inline __attribute__((always_inline)) int shared_scale(int x) {
  volatile int k = 7;
  return x * k + 3;
}
