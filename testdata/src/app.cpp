// symfilter fixture: C++ with namespaces, templates, lambdas, virtual calls.
#include <cstdio>
#include <functional>
#include <vector>

namespace geo {
template <typename T> struct Point {
  T x, y;
  __attribute__((noinline)) T dot(const Point &o) const { return x * o.x + y * o.y; }
};

struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};

struct Square : Shape {
  double side;
  explicit Square(double s) : side(s) {}
  double area() const override { return side * side; }
};

template <typename F> __attribute__((noinline)) int apply_twice(F f, int v) { return f(f(v)); }
} // namespace geo

volatile int g_sink;
std::vector<int> g_values = {3, 1, 4, 1, 5, 9, 2, 6};

__attribute__((noinline)) int run_lambda(int base) {
  auto add = [base](int v) {
    g_sink = v;
    return v + base;
  };
  return geo::apply_twice(add, 7);
}

__attribute__((noinline)) double run_shapes(double s) {
  geo::Square sq(s);
  const geo::Shape &shape = sq;
  return shape.area();
}

int main(int argc, char **) {
  geo::Point<int> p{argc, 2}, q{3, 4};
  geo::Point<double> pd{1.5, 2.5};
  int a = p.dot(q);
  double d = pd.dot(pd);
  int l = run_lambda(a);
  double s = run_shapes(d);
  std::printf("%d %f %d %f %zu\n", a, d, l, s, g_values.size());
  return 0;
}
