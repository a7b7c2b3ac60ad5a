// A data race between two std::threads running lambdas: the report's
// frames are lambdas and std::thread internals.
#include <thread>

static int shared_counter;

namespace work {
template <typename T> struct Counter {
  T *target;
  void bump(int n) {
    for (int i = 0; i < n; ++i)
      ++*target;
  }
};
} // namespace work

int main() {
  work::Counter<int> c{&shared_counter};
  std::thread a([&c] { c.bump(1000); });
  std::thread b([&c](int n) { c.bump(n); }, 1000);
  a.join();
  b.join();
  return shared_counter > 0 ? 0 : 1;
}
