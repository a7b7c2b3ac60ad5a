// Cross-unit inlining fixture (with xunit_main.cc, built with full LTO): the
// functions defined here are inlined into the other unit, whose inline DIEs
// then name them through DW_FORM_ref_addr references into this unit.
#include "xunit.h"

namespace lib {

static volatile int sink;

int Counter::bump(int by) {
  sink = by;
  return total += by * 3;
}

extern "C" int lib_mix(int a, int b) { // no linkage name: named by its context
  sink = a;
  return (a << 3) ^ b;
}

int twice(Counter &c, int v) {
  c.bump(v);
  return lib_mix(c.bump(v + 1), v);
}

} // namespace lib
