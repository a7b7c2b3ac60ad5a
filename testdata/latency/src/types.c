/* A unit with types and data only (no code): no ranges, an empty line program. */
struct point { int x, y; };
struct point origin = {0, 0};
