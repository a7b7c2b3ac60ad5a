// C++ whose symbols exercise the demangler: lambdas, std::function,
// std::thread, packs, special names. Compiled by make-expected.sh.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace gfx {
struct Widget {
  virtual ~Widget();
  virtual int draw(int) const;
  std::function<int(std::string_view)> hook;
};
Widget::~Widget() {}
int Widget::draw(int x) const { return x; }
struct Fancy : virtual Widget {
  int draw(int) const override;
};
int Fancy::draw(int x) const { return x + 1; }
} // namespace gfx

thread_local std::string tls_name = "x";
std::string &name_ref() { return tls_name; }

int counter() {
  static std::map<int, std::vector<std::string>> cache;
  return static_cast<int>(cache.size());
}

template <typename... Ts> int count(Ts &&...) { return sizeof...(Ts); }
template int count<>();
template int count<int &, const char (&)[3]>(int &, const char (&)[3]);

template <unsigned long N> struct Fixed { char data[N]; };
template <unsigned long N> int size(const Fixed<N> &) { return N; }
template int size<2ul>(const Fixed<2ul> &);

int run() {
  int total = 0;
  auto add = [&total](int v) { total += v; };
  std::function<void(int)> f = add;
  std::thread t([&f] { f(1); });
  t.join();
  auto generic = [](auto a, auto &&b) { return a + b; };
  total += generic(1, 2);
  std::unique_ptr<gfx::Widget> w(new gfx::Fancy);
  std::tuple<int, double> tup{1, 2.0};
  total += std::get<0>(tup);
  return total + w->draw(1) + count() + count(total, "ab");
}
