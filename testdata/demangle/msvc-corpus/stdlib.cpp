// The C++ standard library's templates, instantiated explicitly so that
// every member is emitted: the bulk of the fidelity corpus
// (scripts/msvc-demangle-fidelity.py compiles this file against
// libstdc++'s headers for the Microsoft ABI).
#include <algorithm>
#include <any>
#include <array>
#include <bitset>
#include <complex>
#include <deque>
#include <forward_list>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

struct Point { int x, y; bool operator<(const Point &o) const { return x < o.x; } bool operator==(const Point &) const = default; };
template <> struct std::hash<Point> { std::size_t operator()(const Point &p) const { return std::size_t(p.x); } };

template class std::vector<int>;
template class std::vector<double>;
template class std::vector<std::string>;
template class std::vector<Point>;
template class std::vector<std::vector<int>>;
template class std::vector<const char *>;
template class std::vector<std::pair<int, std::string>>;
template class std::deque<int>;
template class std::deque<std::string>;
template class std::list<int>;
template class std::list<Point>;
template class std::forward_list<long>;
template class std::map<int, std::string>;
template class std::map<std::string, std::vector<int>>;
template class std::multimap<Point, double>;
template class std::set<std::string>;
template class std::multiset<unsigned>;
template class std::unordered_map<std::string, int>;
template class std::unordered_map<Point, std::string>;
template class std::unordered_set<int>;
template class std::unordered_multimap<long, char>;
template class std::basic_string<char>;
template class std::basic_string<wchar_t>;
template class std::basic_string<char16_t>;
template class std::basic_string<char32_t>;
template class std::basic_string<char8_t>;
template class std::basic_string_view<char>;
template class std::basic_string_view<wchar_t>;
template class std::basic_stringstream<char>;
template class std::basic_ostringstream<wchar_t>;
template class std::optional<int>;
template class std::optional<std::string>;
template class std::shared_ptr<Point>;
template class std::weak_ptr<Point>;
template class std::unique_ptr<int[]>;
template class std::unique_ptr<std::string, void (*)(std::string *)>;
template class std::function<int(int)>;
template class std::function<void()>;
template class std::function<std::string(const std::string &, int)>;
template class std::function<Point *(std::vector<int> &&, double)>;
template class std::pair<int, double>;
template class std::tuple<int, char, std::string>;
template class std::complex<float>;
template class std::complex<double>;
template class std::bitset<64>;
template class std::bitset<200>;
template class std::array<int, 4>;
template class std::reference_wrapper<Point>;
template class std::variant<int, double, std::string>;

int algorithms(std::vector<int> &v, std::vector<Point> &p, std::map<int, std::string> &m) {
  std::sort(v.begin(), v.end());
  std::stable_sort(p.begin(), p.end());
  std::sort(v.begin(), v.end(), [](int a, int b) { return a > b; });
  auto it = std::find_if(p.begin(), p.end(), [](const Point &q) { return q.x == 3; });
  std::reverse(v.begin(), v.end());
  std::unique(v.begin(), v.end());
  std::nth_element(v.begin(), v.begin() + 1, v.end());
  auto sp = std::make_shared<Point>(Point{1, 2});
  auto up = std::make_unique<std::string>("x");
  std::any a = 5;
  std::variant<int, std::string> var = std::string("s");
  auto visited = std::visit([](auto &&x) { return sizeof(x); }, var);
  std::ostringstream os;
  os << 1 << "x" << 2.5 << std::string("y");
  auto t = std::make_tuple(1, 'c', 2.0);
  auto bound = std::bind([](int x, int y) { return x - y; }, std::placeholders::_1, 3);
  return int(it - p.begin()) + sp->x + int(up->size()) + std::any_cast<int>(a) + int(visited) +
         int(os.str().size()) + std::get<0>(t) + bound(5) + int(m.size());
}
