// Header-defined inline helpers, so inlined frames come from another file.
#pragma once

namespace geo {

struct Point {
  int x, y;
};

static inline int dot(Point a, Point b) { return a.x * b.x + a.y * b.y; }

__attribute__((always_inline)) inline int norm2(Point p) { return dot(p, p); }

template <typename T> struct Acc {
  T total{};
  __attribute__((always_inline)) void add(T v) { total += v; }
  T get() const { return total; }
};

} // namespace geo
