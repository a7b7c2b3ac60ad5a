// Breakpad fixture: C++ with deep inlining, templates, namespaces, lambdas.
#include <cstdio>
#include <cstdlib>

#include "shapes.h"

namespace {

__attribute__((always_inline)) inline int clamp(int v, int lo, int hi) {
  if (v < lo)
    return lo;
  if (v > hi)
    return hi;
  return v;
}

__attribute__((always_inline)) inline int score(geo::Point p) {
  int n = geo::norm2(p);
  return clamp(n, 0, 1000);
}

} // namespace

__attribute__((noinline)) int total_score(const geo::Point *pts, int n) {
  geo::Acc<int> acc;
  for (int i = 0; i < n; ++i)
    acc.add(score(pts[i]));
  return acc.get();
}

__attribute__((noinline)) long fib(long n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

template <typename F> __attribute__((noinline)) int apply_all(F f, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += f(i);
  return s;
}

struct Widget {
  int weight;
  __attribute__((noinline)) virtual int mass() const { return weight * 3; }
  virtual ~Widget() = default;
};

struct Gadget : Widget {
  int extra;
  __attribute__((noinline)) int mass() const override {
    return Widget::mass() + clamp(extra, 1, 9);
  }
};

__attribute__((noinline)) int weigh(const Widget &w) { return w.mass(); }

int main(int argc, char **argv) {
  geo::Point pts[4] = {{argc, 2}, {3, argc}, {40, 50}, {-7, argc * 2}};
  int t = total_score(pts, 4);
  int k = apply_all([argc](int i) { return clamp(i * argc, -5, 5); }, argc + 3);
  Gadget g;
  g.weight = argc;
  g.extra = t;
  int m = weigh(g);
  std::printf("%d %d %d %ld\n", t, k, m, fib(argc > 1 ? std::atoi(argv[1]) : 10));
  return 0;
}
