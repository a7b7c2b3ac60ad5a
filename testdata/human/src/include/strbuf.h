/* A tiny growable string buffer (fixture for symfilter's path shortening). */
#ifndef STRBUF_H
#define STRBUF_H
#include <stddef.h>

struct strbuf {
  char *data;
  size_t len, cap;
};

void strbuf_init(struct strbuf *sb);
void strbuf_append(struct strbuf *sb, const char *s);
void strbuf_release(struct strbuf *sb);

/* Inlined into its callers: frames from this header show up as inlined. */
static inline char strbuf_last(const struct strbuf *sb) {
  return sb->data[sb->len - 1];
}
#endif
