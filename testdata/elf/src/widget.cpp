// C++ fixture: namespaces, templates, a class with methods, inlining.
namespace shapes {
template <typename T> struct Box {
  T value;
  __attribute__((noinline)) T get() const { return value; }
};

class Widget {
public:
  explicit Widget(int n) : n_(n) {}
  __attribute__((noinline)) int area(int scale) const;

private:
  int n_;
};

int Widget::area(int scale) const { return n_ * scale; }
} // namespace shapes

volatile int g_cpp_sink;

__attribute__((noinline)) int run(int n) {
  shapes::Box<long> b{n};
  shapes::Widget w(n);
  return w.area(3) + static_cast<int>(b.get());
}

int main(int argc, char **) {
  g_cpp_sink = run(argc);
  return 0;
}
