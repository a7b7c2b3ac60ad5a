/* Second unit of two_units. */
int b_values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static long b_cache;

int b_total(void) {
  static int calls;
  calls++;
  b_cache += calls;
  return b_values[calls % 8] + (int)b_cache;
}
