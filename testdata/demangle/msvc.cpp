// C++ compiled for the MSVC ABI (make-expected.sh): its symbols test the
// Microsoft demangler against LLVM's.
namespace gfx {
struct Widget {
  int x;
  Widget();
  ~Widget();
  virtual int draw(int) const;
  static int count;
  Widget &operator=(const Widget &);
  bool operator==(const Widget &) const;
  int operator[](int);
  operator bool() const;
  void set(const char *, unsigned long long, float, double, void *);
  template <typename T> T get(T) const;
  void fp(int (*)(int, char), int (Widget::*)(int) const);
  void arr(int (&)[4], const int *const *);
  virtual void v() = 0;
};
int Widget::count = 3;
Widget::Widget() {}
Widget::~Widget() {}
int Widget::draw(int a) const { return a; }
Widget &Widget::operator=(const Widget &) { return *this; }
bool Widget::operator==(const Widget &) const { return true; }
int Widget::operator[](int i) { return i; }
Widget::operator bool() const { return true; }
void Widget::set(const char *, unsigned long long, float, double, void *) {}
template <typename T> T Widget::get(T t) const { return t; }
template int Widget::get<int>(int) const;
template char *Widget::get<char *>(char *) const;
void Widget::fp(int (*)(int, char), int (Widget::*)(int) const) {}
void Widget::arr(int (&)[4], const int *const *) {}
} // namespace gfx
template <typename T, int N> struct Arr { T data[N]; void fill(T); static Arr make(); };
template <typename T, int N> void Arr<T, N>::fill(T) {}
template <typename T, int N> Arr<T, N> Arr<T, N>::make() { return {}; }
template struct Arr<double, 8>;
template struct Arr<gfx::Widget *, 2>;
namespace { int hidden(int x) { return x; } }
int use_hidden() { return hidden(1); }
int f(int) { return 0; }
int g(short, long, bool, wchar_t, char16_t, char32_t, long double, signed char, unsigned char) { return 0; }
int x = 1;
const int *px = &x;
extern "C" int cfun(int a) { return a; }
void (*fptr)(int) = nullptr;
auto lam = [](int a) { return a + 1; };
int call_lam() { return lam(2); }
template <typename... Ts> void variadic(Ts...) {}
template void variadic<int, char, float>(int, char, float);
template void variadic<>();
struct Outer { struct Inner { void m(); enum E { A }; void e(E); }; };
void Outer::Inner::m() {}
void Outer::Inner::e(E) {}
int &&rref(int &&a) { return static_cast<int &&>(a); }
void ellipsis(int, ...) {}
static int sfunc(int) { return 0; }
int use_sfunc() { return sfunc(1); }
int local_static() { static int counter = 0; return ++counter; }
struct Base { virtual ~Base(); virtual void a(); };
struct Derived : virtual Base { void a() override; };
Base::~Base() {}
void Base::a() {}
void Derived::a() {}
Derived dd;
__int64 i64(unsigned __int64 u) { return u; }
void volatile_ptr(volatile int *, const volatile char *) {}
template <template <typename> class C> struct TT {};
template <typename T> struct One {};
void tt(TT<One>) {}
void nullp(decltype(nullptr)) {}
