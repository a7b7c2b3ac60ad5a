// C++ language features whose Microsoft manglings the fidelity corpus must
// cover (scripts/msvc-demangle-fidelity.py compiles this file for
// x86_64-pc-windows-msvc and i686-pc-windows-msvc): special members,
// operators, vtables and RTTI, string literals, lambdas, templates with
// every kind of argument, member pointers, deduced return types, calling
// conventions, qualifiers, local statics and thread-safe guards.
// No headers: the file compiles for any target without its C++ library.
namespace std {
using size_t = decltype(sizeof 0);
using nullptr_t = decltype(nullptr);
class type_info {
public:
  virtual ~type_info();
  const char *name() const;
};
} // namespace std

namespace ns {
namespace {
int anon_var = 1;
int anon_fn(int x) { return x + anon_var; }
struct AnonType { int v; };
} // namespace
int use_anon() { AnonType a{2}; return anon_fn(a.v); }

namespace inner::deeper {
struct S {
  S();
  S(const S &);
  S(S &&) noexcept;
  S(int, ...);
  explicit S(double);
  ~S();
  S &operator=(const S &);
  S &operator=(S &&);
  S operator+(const S &) const;
  S operator-() const;
  S &operator+=(int);
  S &operator-=(int);
  S &operator*=(int);
  S &operator/=(int);
  S &operator%=(int);
  S &operator&=(int);
  S &operator|=(int);
  S &operator^=(int);
  S &operator<<=(int);
  S &operator>>=(int);
  bool operator==(const S &) const;
  bool operator!=(const S &) const;
  bool operator<(const S &) const;
  bool operator>(const S &) const;
  bool operator<=(const S &) const;
  bool operator>=(const S &) const;
  int operator<=>(const S &) const;
  int operator()(int, int);
  int operator[](std::size_t) const;
  S *operator->();
  int operator->*(int S::*);
  S &operator++();
  S operator++(int);
  S &operator--();
  S operator--(int);
  bool operator!() const;
  int operator~() const;
  int operator*() const;
  S *operator&();
  int operator,(int);
  int operator&&(const S &) const;
  int operator||(const S &) const;
  int operator<<(int) const;
  int operator>>(int) const;
  int operator*(int) const;
  int operator/(int) const;
  int operator%(int) const;
  int operator^(int) const;
  int operator|(int) const;
  int operator&(int) const;
  operator int() const;
  operator const char *() const;
  explicit operator bool() const;
  template <typename T> operator T *() const;
  static void *operator new(std::size_t);
  static void *operator new[](std::size_t);
  static void operator delete(void *);
  static void operator delete[](void *);
  static void *operator new(std::size_t, void *);
  virtual void virt();
  virtual int virt2(int) const volatile;
  static int count;
  static const int limit = 4;
  int member;
  int S::*mp;
  int (S::*mfp)(int, int);
  void cv() const;
  void vol() volatile;
  void lref() &;
  void rref() &&;
  void cref() const &;
  void restr() __restrict;
  static void __stdcall stdc(int);
  static void __fastcall fast(int);
  static void __vectorcall vec(int);
  void __cdecl cdecl_member();
};
S::S() {}
S::S(const S &) {}
S::S(S &&) noexcept {}
S::S(int, ...) {}
S::S(double) {}
S::~S() {}
S &S::operator=(const S &) { return *this; }
S &S::operator=(S &&) { return *this; }
S S::operator+(const S &) const { return *this; }
S S::operator-() const { return *this; }
S &S::operator+=(int) { return *this; }
S &S::operator-=(int) { return *this; }
S &S::operator*=(int) { return *this; }
S &S::operator/=(int) { return *this; }
S &S::operator%=(int) { return *this; }
S &S::operator&=(int) { return *this; }
S &S::operator|=(int) { return *this; }
S &S::operator^=(int) { return *this; }
S &S::operator<<=(int) { return *this; }
S &S::operator>>=(int) { return *this; }
bool S::operator==(const S &) const { return true; }
bool S::operator!=(const S &) const { return false; }
bool S::operator<(const S &) const { return false; }
bool S::operator>(const S &) const { return false; }
bool S::operator<=(const S &) const { return true; }
bool S::operator>=(const S &) const { return true; }
int S::operator<=>(const S &) const { return 0; }
int S::operator()(int a, int b) { return a + b; }
int S::operator[](std::size_t i) const { return int(i); }
S *S::operator->() { return this; }
int S::operator->*(int S::*p) { return this->*p; }
S &S::operator++() { return *this; }
S S::operator++(int) { return *this; }
S &S::operator--() { return *this; }
S S::operator--(int) { return *this; }
bool S::operator!() const { return false; }
int S::operator~() const { return 0; }
int S::operator*() const { return 0; }
S *S::operator&() { return this; }
int S::operator,(int i) { return i; }
int S::operator&&(const S &) const { return 1; }
int S::operator||(const S &) const { return 1; }
int S::operator<<(int i) const { return i; }
int S::operator>>(int i) const { return i; }
int S::operator*(int i) const { return i; }
int S::operator/(int i) const { return i; }
int S::operator%(int i) const { return i; }
int S::operator^(int i) const { return i; }
int S::operator|(int i) const { return i; }
int S::operator&(int i) const { return i; }
S::operator int() const { return 0; }
S::operator const char *() const { return ""; }
S::operator bool() const { return true; }
template <typename T> S::operator T *() const { return nullptr; }
template S::operator int *() const;
template S::operator S *() const;
void *S::operator new(std::size_t) { return nullptr; }
void *S::operator new[](std::size_t) { return nullptr; }
void S::operator delete(void *) {}
void S::operator delete[](void *) {}
void *S::operator new(std::size_t, void *p) { return p; }
void S::virt() {}
int S::virt2(int i) const volatile { return i; }
int S::count = 0;
void S::cv() const {}
void S::vol() volatile {}
void S::lref() & {}
void S::rref() && {}
void S::cref() const & {}
void S::restr() __restrict {}
void __stdcall S::stdc(int) {}
void __fastcall S::fast(int) {}
void __vectorcall S::vec(int) {}
void __cdecl S::cdecl_member() {}
} // namespace inner::deeper
} // namespace ns

using ns::inner::deeper::S;

// Inheritance: virtual bases, multiple bases, thunks, vbtables, RTTI.
struct VBase { virtual ~VBase(); virtual int f(); int vb; };
struct Left : virtual VBase { int f() override; virtual void l(); };
struct Right : virtual VBase { virtual void r(); };
struct Diamond : Left, Right { int f() override; void l() override; void r() override; ~Diamond(); };
VBase::~VBase() {}
int VBase::f() { return 0; }
int Left::f() { return 1; }
void Left::l() {}
void Right::r() {}
int Diamond::f() { return 2; }
void Diamond::l() {}
void Diamond::r() {}
Diamond::~Diamond() {}
struct A1 { virtual void a(); int x; };
struct B1 { virtual void b(); int y; };
struct C1 : A1, B1 { void a() override; void b() override; };
void A1::a() {}
void B1::b() {}
void C1::a() {}
void C1::b() {}
Diamond *make_diamond() { return new Diamond; }
C1 *make_c1() { return new C1; }
const std::type_info &rtti(VBase *v) { return typeid(*v); }
Left *down(VBase *v) { return dynamic_cast<Left *>(v); }
const std::type_info &rtti_int() { return typeid(int); }
const std::type_info &rtti_ptr() { return typeid(const volatile char **); }
const std::type_info &rtti_fn() { return typeid(int (*)(double)); }
const std::type_info &rtti_mp() { return typeid(int S::*); }
const std::type_info &rtti_arr() { return typeid(int[3][4]); }
void throws_s() { throw S(); }
void throws_int() { throw 42; }
void throws_ptr() { throw (const char *)"x"; }

// String literals of every character type and length.
const char *s1() { return "hello"; }
const char *s2() { return "a somewhat longer string literal, so that its mangled name is truncated by the compiler"; }
const wchar_t *s3() { return L"wide"; }
const char16_t *s4() { return u"utf16"; }
const char32_t *s5() { return U"utf32"; }
const char8_t *s6() { return u8"utf8"; }
const char *s7() { return "with\nnewline\tand \"quotes\" and \xff bytes"; }
const char *s8() { return ""; }

// Free functions of every fundamental type.
void fundamentals(bool, char, signed char, unsigned char, short, unsigned short, int, unsigned,
                  long, unsigned long, long long, unsigned long long, float, double, long double,
                  wchar_t, char8_t, char16_t, char32_t, std::nullptr_t) {}
void pointers(int *, const int *, volatile int *, const volatile int *, int *const, int **,
              int *const *, const int *const *const, void *, const void *) {}
void references(int &, const int &, int &&, const int &&, int *&, int (&)[3], int (&&)[3]) {}
void arrays(int[], int[5], int[2][3], int (*)[4], const char (*)[8][9]) {}
void fptrs(void (*)(), int (*)(int, ...), int (*(*)(int))(double), void (*&)(int),
           void (__stdcall *)(int), void (__fastcall *)(int), void (__vectorcall *)(int)) {}
void mptrs(int S::*, int (S::*)(int, int), void (S::*)() const, const int S::*,
           int Diamond::*, void (Diamond::*)(), void (VBase::*)()) {}
void varargs(const char *, ...) {}
void noargs() {}
void restrict_ptr(int *__restrict, char *__restrict *) {}
void unaligned(__unaligned int *) {}
void ptr32(int *__ptr32, int *__ptr64) {}
int ret_int_ptr_fn(int (*f)(int)) { return f(0); }
int (*ret_fptr())(int) { return nullptr; }
int (S::*ret_mfptr())(int, int) { return nullptr; }
int (&ret_arr_ref())[3] { static int a[3]; return a; }
auto trailing() -> int (*)[5] { return nullptr; }
void noexcept_fn() noexcept {}
void takes_noexcept(void (*)() noexcept) {}
enum Color { Red, Green };
enum class Scoped : unsigned char { A, B };
enum class Big : long long { X };
union U { int i; float f; };
class Klass { public: int pub(); protected: int prot(); private: int priv(); public: static int spub(); protected: static int sprot(); private: static int spriv(); virtual int vpriv(); friend int friend_of(Klass &); };
int Klass::pub() { return prot() + priv(); }
int Klass::prot() { return 0; }
int Klass::priv() { return spriv(); }
int Klass::spub() { return sprot(); }
int Klass::sprot() { return 0; }
int Klass::spriv() { return 0; }
int Klass::vpriv() { return 0; }
int friend_of(Klass &k) { return k.priv(); }
void enums(Color, Scoped, Big, U, Klass, U *, Color &) {}

// Variables and static members.
int global_int = 1;
const int const_global = 2;
volatile int volatile_global;
int *global_ptr = &global_int;
const char *const const_ptr_const = "x";
int global_arr[10];
int global_arr2[2][3];
int (*global_fptr)(int) = nullptr;
int S::*global_mptr = &S::member;
int (S::*global_mfptr)(int, int) = &S::operator();
S global_s;
Diamond global_diamond;
thread_local int tls_int = 3;
thread_local S tls_s;
static int file_static = 4;
int use_file_static() { return file_static; }
extern int undefined_int;
extern const char *undefined_ptr;
int use_undefined() { return undefined_int + *undefined_ptr; }
void undefined_fn(S &, int (*)(char));
void call_undefined() { S s; undefined_fn(s, nullptr); }

// Local statics, local classes, guards.
int local_statics(int k) {
  static int counter = k;
  static S s1;
  thread_local S s2;
  struct Local { static int get() { static int inner = 5; return inner; } virtual int v() { return 1; } };
  Local l;
  if (k) { static int nested_scope = k; return nested_scope + l.v(); }
  return counter + Local::get() + s1.member + s2.member;
}
inline int inline_static() { static int x = global_int; return x; }
int use_inline_static() { return inline_static(); }

// Lambdas.
auto lam1 = [](int a) { return a + 1; };
auto lam2 = [](auto a, auto b) { return a + b; };
int use_lambdas() {
  int captured = 3;
  auto l3 = [&captured](double d) -> double { return d + captured; };
  auto l4 = [=]() mutable { return ++captured; };
  auto l5 = [](auto... xs) { return (xs + ... + 0); };
  auto nested = [](int x) { return [x](int y) { return [x, y] { return x * y; }(); }(x); };
  int (*decayed)(int) = lam1;
  return lam1(1) + lam2(1, 2) + lam2(1.0, 2.0) + int(l3(1.0)) + l4() + l5(1, 2, 3) + l5() + nested(2) + decayed(3);
}
template <typename F> int call_f(F f) { return f(1); }
int use_call_f() { return call_f([](int x) { return x; }) + call_f([](int x) { return x * 2; }); }

// Deduced return types.
auto deduced() { return 1; }
decltype(auto) deduced_ref() { return (global_int); }
struct WithAuto { auto get() const; decltype(auto) ref(); template <typename T> auto tmpl(T); };
auto WithAuto::get() const { return 1.5; }
decltype(auto) WithAuto::ref() { return (global_int); }
template <typename T> auto WithAuto::tmpl(T t) { return t; }
template auto WithAuto::tmpl<int>(int);
template auto WithAuto::tmpl<S>(S);
int use_deduced() { WithAuto w; return deduced() + deduced_ref() + int(w.get()) + w.ref(); }
template <typename T> auto tmpl_auto(T t) { return t; }
template auto tmpl_auto<char>(char);
template <typename T> decltype(auto) tmpl_dauto(T &t) { return (t); }
template decltype(auto) tmpl_dauto<int>(int &);

// Templates with every kind of argument.
template <typename... Ts> struct Pack { static int size(); void m(Ts...); };
template <typename... Ts> int Pack<Ts...>::size() { return sizeof...(Ts); }
template <typename... Ts> void Pack<Ts...>::m(Ts...) {}
template struct Pack<>;
template struct Pack<int>;
template struct Pack<int, char, S, Pack<>>;
template struct Pack<int *, const char &, void (*)(int), int S::*, int[3]>;
template <int N> struct IntArg { static int get() { return N; } };
template struct IntArg<0>;
template struct IntArg<1>;
template struct IntArg<-1>;
template struct IntArg<2147483647>;
template struct IntArg<-2147483647 - 1>;
template <unsigned long long N> struct U64Arg { static int get() { return int(N); } };
template struct U64Arg<18446744073709551615ull>;
template struct U64Arg<4294967296ull>;
template <bool B> struct BoolArg { void f(); };
template <bool B> void BoolArg<B>::f() {}
template struct BoolArg<true>;
template struct BoolArg<false>;
template <char C> struct CharArg { void f(); };
template <char C> void CharArg<C>::f() {}
template struct CharArg<'a'>;
template <Color C> struct EnumArg { void f(); };
template <Color C> void EnumArg<C>::f() {}
template struct EnumArg<Green>;
template <Scoped C> struct ScopedArg { void f(); };
template <Scoped C> void ScopedArg<C>::f() {}
template struct ScopedArg<Scoped::B>;
template <int *P> struct PtrArg { void f(); };
template <int *P> void PtrArg<P>::f() {}
template struct PtrArg<&global_int>;
template struct PtrArg<nullptr>;
template struct PtrArg<global_arr>;
template <int &R> struct RefArg { void f(); };
template <int &R> void RefArg<R>::f() {}
template struct RefArg<global_int>;
template <int (*F)(int)> struct FnArg { void f(); };
template <int (*F)(int)> void FnArg<F>::f() {}
int target_fn(int x) { return x; }
template struct FnArg<&target_fn>;
template struct FnArg<nullptr>;
template <int S::*M> struct MemArg { void f(); };
template <int S::*M> void MemArg<M>::f() {}
template struct MemArg<&S::member>;
template struct MemArg<nullptr>;
template <int (S::*M)(int, int)> struct MemFnArg { void f(); };
template <int (S::*M)(int, int)> void MemFnArg<M>::f() {}
template struct MemFnArg<&S::operator()>;
template <int Diamond::*M> struct VMemArg { void f(); };
template <int Diamond::*M> void VMemArg<M>::f() {}
struct DiamondData : Left, Right { int own; };
template <int DiamondData::*M> struct VDataArg { void f(); };
template <int DiamondData::*M> void VDataArg<M>::f() {}
template struct VDataArg<&DiamondData::own>;
template <void (Diamond::*M)()> struct VMemFnArg { void f(); };
template <void (Diamond::*M)()> void VMemFnArg<M>::f() {}
template struct VMemFnArg<&Diamond::l>;
template <void (C1::*M)()> struct MIMemFnArg { void f(); };
template <void (C1::*M)()> void MIMemFnArg<M>::f() {}
template struct MIMemFnArg<&C1::b>;
template <auto V> struct AutoArg { void f(); };
template <auto V> void AutoArg<V>::f() {}
template struct AutoArg<5>;
template struct AutoArg<'c'>;
template struct AutoArg<&global_int>;
template struct AutoArg<nullptr>;
template struct AutoArg<&S::member>;
template <double D> struct DoubleArg { void f(); };
template <double D> void DoubleArg<D>::f() {}
template struct DoubleArg<1.5>;
template struct DoubleArg<-0.0>;
template <float F> struct FloatArg { void f(); };
template <float F> void FloatArg<F>::f() {}
template struct FloatArg<3.25f>;
struct Literal { int a; char b; };
template <Literal L> struct ClassArg { void f(); };
template <Literal L> void ClassArg<L>::f() {}
template struct ClassArg<Literal{1, 'x'}>;
template <template <typename> class TT> struct TemplTempl { void f(); };
template <template <typename> class TT> void TemplTempl<TT>::f() {}
template <typename T> struct Box { T t; T get() const; template <typename U> U as() const; };
template <typename T> T Box<T>::get() const { return t; }
template <typename T> template <typename U> U Box<T>::as() const { return U(t); }
template struct TemplTempl<Box>;
template struct Box<int>;
template struct Box<Box<Box<int>>>;
template struct Box<const char *>;
template struct Box<S>;
template struct Box<int (*)(int)>;
template struct Box<int S::*>;
template struct Box<Color>;
template double Box<int>::as<double>() const;
template <typename T, int N> struct Arr { T data[N]; void fill(T); };
template <typename T, int N> void Arr<T, N>::fill(T) {}
template struct Arr<double, 8>;
template struct Arr<Box<int>, 2>;
template <typename T> void free_tmpl(T) {}
template void free_tmpl<int>(int);
template void free_tmpl<Box<char>>(Box<char>);
template void free_tmpl<const volatile int *>(const volatile int *);
template void free_tmpl<decltype(lam1)>(decltype(lam1));
template <typename T, typename... Rest> int variadic_fn(T, Rest...) { return sizeof...(Rest); }
template int variadic_fn<int>(int);
template int variadic_fn<int, char, double>(int, char, double);
template <typename T> T var_tmpl = T(1);
template int var_tmpl<int>;
template double var_tmpl<double>;
template <typename T> struct Outer { template <typename U> struct Inner { static U f(T); }; };
template <typename T> template <typename U> U Outer<T>::Inner<U>::f(T) { return U(); }
template struct Outer<int>::Inner<char>;
template <typename T> concept Small = sizeof(T) <= 4;
template <Small T> void constrained(T) {}
template void constrained<int>(int);
template <typename T> requires(sizeof(T) > 4) void constrained2(T) {}
template void constrained2<double>(double);

// Operators at namespace scope, user-defined literals, conversion templates.
S operator+(int, const S &s) { return s; }
bool operator==(const Box<int> &, const Box<int> &) { return true; }
unsigned long long operator""_km(unsigned long long v) { return v * 1000; }
long double operator""_deg(long double v) { return v; }
const char *operator""_str(const char *s, std::size_t) { return s; }
int use_literals() { return int(12_km + 1.0_deg) + *"x"_str; }
void *operator new(std::size_t, int, double);
void *use_new() { return ::operator new(sizeof(S), 1, 2.0); }

// Vector and extended types.
typedef float v4f __attribute__((vector_size(16)));
typedef int v8i __attribute__((ext_vector_type(8)));
void vectors(v4f, v8i) {}
void complex_types(_Complex float, _Complex double) {}
void bitint(_BitInt(7), unsigned _BitInt(65)) {}
void half(__fp16 *) {}

// Structured bindings, coroutine-free generic code, nested templates.
struct Pair { int a; double b; };
auto [bound_a, bound_b] = Pair{1, 2.0};
int use_bound() { return bound_a + int(bound_b); }
template <typename T> struct Tmpl { struct Nested { void f(); }; enum E { X }; void g(E); };
template <typename T> void Tmpl<T>::Nested::f() {}
template <typename T> void Tmpl<T>::g(E) {}
template struct Tmpl<int>;
template struct Tmpl<Tmpl<int>>;

extern "C" int c_linkage(int x) { return x; }
extern "C" int __stdcall c_stdcall(int x) { return x; }
extern "C" int __fastcall c_fastcall(int x) { return x; }
