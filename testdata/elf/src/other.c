/* Second program for the dwz pair. */
#include "shared.h"

struct point g_origin = {0, 0};

__attribute__((noinline)) int measure(struct point *p) { return point_sum(p) * 2; }

int main(void) { return measure(&g_origin); }
