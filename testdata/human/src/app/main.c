#include "strbuf.h"

char conn_send(struct strbuf *out, const char *msg);

int main(void) {
  struct strbuf sb;
  strbuf_init(&sb);
  strbuf_append(&sb, "hello, ");
  return conn_send(&sb, "world") == 'd' ? 0 : 1;
}
