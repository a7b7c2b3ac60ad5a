namespace lib {
struct Counter {
  int total = 0;
  int bump(int by);
};
extern "C" int lib_mix(int a, int b);
int twice(Counter &c, int v);
} // namespace lib
