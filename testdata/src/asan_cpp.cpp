// symfilter fixture: C++ use-after-free through templates and lambdas.
#include <algorithm>
#include <memory>
#include <vector>

namespace store {
template <typename T> class Box {
public:
  explicit Box(T v) : p_(new T(v)) {}
  void drop() { delete p_; }
  __attribute__((noinline)) T peek() const { return *p_; }

private:
  T *p_;
};
} // namespace store

__attribute__((noinline)) int visit(std::vector<store::Box<int>> &boxes) {
  int sum = 0;
  std::for_each(boxes.begin(), boxes.end(), [&sum](const store::Box<int> &b) { sum += b.peek(); });
  return sum;
}

int main() {
  std::vector<store::Box<int>> boxes;
  boxes.emplace_back(1);
  boxes.emplace_back(2);
  boxes[1].drop();
  return visit(boxes);
}
