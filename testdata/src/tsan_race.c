/* symfilter fixture: a ThreadSanitizer data race through an inlined helper.
 * The relaxed flag orders the two writes without telling TSan, so the report
 * is the same every run (worker's write first, main's second). */
#include <pthread.h>
#include <stdatomic.h>

int counter;
static atomic_int done;

static inline void bump(void) { counter++; }

__attribute__((noinline)) void *worker(void *arg) {
  (void)arg;
  bump();
  atomic_store_explicit(&done, 1, memory_order_relaxed);
  return 0;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  while (!atomic_load_explicit(&done, memory_order_relaxed)) {
  }
  bump();
  pthread_join(t, 0);
  return counter;
}
