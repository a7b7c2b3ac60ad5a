// See xunit_lib.cc.
#include "xunit.h"

__attribute__((noinline)) int drive(int n) {
  lib::Counter c;
  int r = 0;
  for (int i = 0; i < n; i++)
    r += lib::twice(c, i);
  return r + c.total;
}

int main(int argc, char **) { return drive(argc * 1000) & 0xff; }
