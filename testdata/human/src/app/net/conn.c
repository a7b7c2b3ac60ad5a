#include "strbuf.h"

__attribute__((noinline)) char conn_flush(struct strbuf *out) {
  strbuf_release(out);
  return strbuf_last(out); /* use after free */
}

__attribute__((noinline)) char conn_send(struct strbuf *out, const char *msg) {
  strbuf_append(out, msg);
  return conn_flush(out);
}
