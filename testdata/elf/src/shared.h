/* Types and an inline function shared by prog.c and other.c (dwz merges
   their duplicated DWARF into one supplementary file). */
struct point {
  int x;
  int y;
};

static inline int point_sum(const struct point *p) { return p->x + p->y; }
