#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

void strbuf_init(struct strbuf *sb) {
  sb->cap = 16;
  sb->len = 0;
  sb->data = malloc(sb->cap);
}

void strbuf_append(struct strbuf *sb, const char *s) {
  size_t n = strlen(s);
  if (sb->len + n + 1 > sb->cap) {
    sb->cap = (sb->len + n + 1) * 2;
    sb->data = realloc(sb->data, sb->cap);
  }
  memcpy(sb->data + sb->len, s, n + 1);
  sb->len += n;
}

void strbuf_release(struct strbuf *sb) { free(sb->data); }
