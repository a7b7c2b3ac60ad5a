/* The unit with code, for types.c. */
struct point { int x, y; };
extern struct point origin;
int main(void) { return origin.x; }
