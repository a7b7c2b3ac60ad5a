// symfilter GSYM fixture: C++ namespaces, classes, templates, lambdas, inlining.
#include <cstdio>
#include <map>
#include <string>
#include <vector>
#include <algorithm>

namespace geo {
struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};
struct Rect : Shape {
  double w, h;
  Rect(double w, double h) : w(w), h(h) {}
  double area() const override { return w * h; }
};
struct Circle : Shape {
  double r;
  explicit Circle(double r) : r(r) {}
  double area() const override { return 3.14159 * r * r; }
};
template <typename T> T clampv(T v, T lo, T hi) { return v < lo ? lo : (v > hi ? hi : v); }
} // namespace geo

namespace util {
volatile int sink;
__attribute__((noinline)) void touch(int v) { sink += v; }
template <typename T> struct Acc {
  T total{};
  void add(T v) {
    touch(static_cast<int>(v));
    total += v;
  }
};
__attribute__((noinline)) int count_words(const std::string &s) {
  int n = 0;
  bool in = false;
  for (char c : s) {
    if (c == ' ') in = false;
    else if (!in) { in = true; ++n; }
  }
  return n;
}
} // namespace util

__attribute__((noinline)) double total_area(const std::vector<geo::Shape *> &v) {
  util::Acc<double> acc;
  for (auto *s : v) acc.add(geo::clampv(s->area(), 0.0, 1000.0));
  return acc.total;
}

__attribute__((noinline)) int histogram(int n) {
  std::map<int, int> h;
  for (int i = 0; i < n; ++i) h[i % 7]++;
  int best = 0;
  std::for_each(h.begin(), h.end(), [&](const std::pair<const int, int> &p) {
    if (p.second > best) best = p.second;
    util::touch(p.first);
  });
  return best;
}

int main(int argc, char **argv) {
  std::vector<geo::Shape *> v{new geo::Rect(2, 3), new geo::Circle(argc)};
  double a = total_area(v);
  int w = util::count_words(argc > 1 ? argv[1] : "a b c");
  int h = histogram(argc * 20);
  std::printf("%f %d %d\n", a, w, h);
  for (auto *s : v) delete s;
  return 0;
}
