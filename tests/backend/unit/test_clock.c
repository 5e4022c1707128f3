/* lib/clock.c: RFC 3339 as E2B writes startedAt/endAt, and parsing what
 * clients send (startedAfter, list cursors). */
#include "check.h"
#include "lib/clock.h"
#include "suites.h"

static int64_t parse(const char *text)
{
	int64_t ms = -12345;
	return clock_parse_rfc3339(text, &ms) == 0 ? ms : -12345;
}

void suite_clock(void)
{
	/* the deadlines' clock never goes back */
	int64_t m0 = clock_monotonic_ms(), m1 = clock_monotonic_ms();
	CHECK(m0 > 0 && m1 >= m0);

	char out[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(0, out);
	CHECK_STR(out, "1970-01-01T00:00:00.000Z");
	clock_format_rfc3339(1767323045678LL, out);
	CHECK_STR(out, "2026-01-02T03:04:05.678Z");
	clock_format_rfc3339(-1, out); /* floor division: one ms before the epoch */
	CHECK_STR(out, "1969-12-31T23:59:59.999Z");

	CHECK_NUM(parse("2026-01-02T03:04:05.678Z"), 1767323045678LL);
	CHECK_NUM(parse("2026-01-02T03:04:05Z"), 1767323045000LL);
	CHECK_NUM(parse("2026-01-02t03:04:05z"), 1767323045000LL);
	/* fractions of any length, truncated to milliseconds */
	CHECK_NUM(parse("2026-01-02T03:04:05.6Z"), 1767323045600LL);
	CHECK_NUM(parse("2026-01-02T03:04:05.123456789Z"), 1767323045123LL);
	/* offsets move the instant */
	CHECK_NUM(parse("2026-01-02T05:04:05+02:00"), 1767323045000LL);
	CHECK_NUM(parse("2026-01-02T00:34:05-02:30"), 1767323045000LL);
	/* a round trip of what we write */
	clock_format_rfc3339(1767323045678LL, out);
	CHECK_NUM(parse(out), 1767323045678LL);

	const char *bad[] = {
		"",
		"2026-01-02",
		"2026-01-02T03:04:05",
		"2026-01-02T03:04:05.Z",
		"2026-13-02T03:04:05Z",
		"2026-01-32T03:04:05Z",
		"2026-01-02T24:04:05Z",
		"2026-01-02T03:60:05Z",
		"2026-01-02 03:04:05Z",
		"2026-01-02T03:04:05+2:00",
		"2026-01-02T03:04:05+02:60",
		"2026-01-02T03:04:05Zjunk",
		"26-01-02T03:04:05Z",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int64_t ms = 0;
		if (clock_parse_rfc3339(bad[i], &ms) != -1)
			fprintf(stderr, "  accepted: '%s'\n", bad[i]);
		CHECK(clock_parse_rfc3339(bad[i], &ms) == -1);
	}
}
