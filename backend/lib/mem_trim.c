/* Giving freed memory back to the system (mem_trim.h). */
#define _GNU_SOURCE
#include "lib/mem_trim.h"

#include "lib/clock.h"

#include <event2/event.h>
#include <malloc.h>
#include <stdint.h>

#ifdef __SANITIZE_ADDRESS__
/* ASan's allocator keeps its own free memory (and its quarantine) apart
 * from glibc's: its runtime's call (no header for it in GCC 12's). */
void __sanitizer_purge_allocator(void);
#endif

static struct {
	struct event *ev;
	int64_t last_ms; /* monotonic: the last trim */
} mt;

static void on_trim(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	mt.last_ms = clock_monotonic_ms();
#ifdef __SANITIZE_ADDRESS__
	__sanitizer_purge_allocator();
#else
	/* Free bytes in the heap's bins; below the floor a trim gives back
	 * too little to be worth its walk over them. */
	if (mallinfo2().fordblks >= MEM_TRIM_FREE_MIN)
		malloc_trim(0);
#endif
}

int mem_trim_init(struct event_base *base)
{
	mallopt(M_MMAP_THRESHOLD, MEM_TRIM_MMAP_THRESHOLD);
	mt.ev = evtimer_new(base, on_trim, NULL);
	mt.last_ms = clock_monotonic_ms() - MEM_TRIM_GAP_MS;
	return mt.ev ? 0 : -1;
}

void mem_trim_shutdown(void)
{
	if (mt.ev)
		event_free(mt.ev);
	mt.ev = NULL;
}

void mem_trim_soon(void)
{
	if (!mt.ev || evtimer_pending(mt.ev, NULL))
		return;
	int64_t wait = mt.last_ms + MEM_TRIM_GAP_MS - clock_monotonic_ms();
	if (wait < 0)
		wait = 0;
	struct timeval tv = {.tv_sec = (time_t)(wait / 1000), .tv_usec = (suseconds_t)(wait % 1000) * 1000};
	evtimer_add(mt.ev, &tv);
}
