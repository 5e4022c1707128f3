/* Giving memory the backend freed back to the system. glibc keeps freed
 * heap memory for later use, and after a burst (hundreds of 1 MiB request
 * bodies read at once, a killed sandbox's queued watch events) what it
 * keeps is scattered between blocks still in use, so the RSS stays at the
 * burst's peak. So:
 *   - blocks of MEM_TRIM_MMAP_THRESHOLD and more get mappings of their
 *     own, unmapped when freed (mallopt: glibc's default raises this
 *     threshold to the largest block freed so far, up to 32 MiB, after
 *     which large bodies and buffers come from the heap and stay there);
 *   - code that has just freed much (a large body answered, a sandbox
 *     removed) calls mem_trim_soon: malloc_trim then hands every free page
 *     back (madvise), once the heap holds MEM_TRIM_FREE_MIN free bytes, at
 *     most once per MEM_TRIM_GAP_MS and never in the middle of a loop turn
 *     (a sanitizer build purges ASan's allocator instead, so that the
 *     tests' RSS bounds hold there too).
 * One per process; the loop's. */
#ifndef E2B_BACKEND_MEM_TRIM_H
#define E2B_BACKEND_MEM_TRIM_H

struct event_base;

#define MEM_TRIM_MMAP_THRESHOLD (256 * 1024)
#define MEM_TRIM_FREE_MIN (4 * 1024 * 1024)
#define MEM_TRIM_GAP_MS 1000

/* 0, or -1 when out of memory (then nothing is ever trimmed). */
int mem_trim_init(struct event_base *base);
void mem_trim_shutdown(void);
/* Much was freed: trim within MEM_TRIM_GAP_MS (a no-op before init). */
void mem_trim_soon(void);

#endif
