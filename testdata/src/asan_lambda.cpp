// Heap use after free read through a lambda called by std::function: the
// report's frames are lambdas and std::function internals.
#include <functional>
#include <vector>

template <typename F> static int apply_twice(const F &f, int i) { return f(i) + f(i + 1); }

int main() {
  auto *values = new std::vector<int>(8, 1);
  std::function<int(int)> read = [values](int i) { return (*values)[i]; };
  delete values;
  return apply_twice(read, 2);
}
