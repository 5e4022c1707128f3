/* Wall-clock time in milliseconds and its RFC 3339 text form, as the E2B API
 * shows startedAt/endAt ("2024-01-02T03:04:05.678Z"). */
#ifndef E2B_BACKEND_CLOCK_H
#define E2B_BACKEND_CLOCK_H

#include <stdint.h>

#define CLOCK_RFC3339_LEN 32 /* buffer size that fits any formatted time */

int64_t clock_now_ms(void);

/* Milliseconds of a clock no one can set: for deadlines, which a change of
 * the wall clock must not stretch or cut. */
int64_t clock_monotonic_ms(void);

/* UTC, millisecond precision, trailing Z. out must hold CLOCK_RFC3339_LEN. */
void clock_format_rfc3339(int64_t ms, char out[CLOCK_RFC3339_LEN]);

/* Accepts RFC 3339 date-times with any number of fraction digits (truncated
 * to milliseconds) and a Z or +hh:mm offset. 0 on success, -1 if malformed. */
int clock_parse_rfc3339(const char *text, int64_t *ms);

#endif
