/* Wall-clock milliseconds and RFC 3339 formatting/parsing. */
#include "lib/clock.h"

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

int64_t clock_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void clock_format_rfc3339(int64_t ms, char out[CLOCK_RFC3339_LEN])
{
	/* Floor division so times before 1970 would still format sanely. */
	int64_t secs = ms / 1000, frac = ms % 1000;
	if (frac < 0) {
		frac += 1000;
		secs -= 1;
	}
	time_t t = (time_t)secs;
	struct tm tm;
	if (!gmtime_r(&t, &tm)) {
		snprintf(out, CLOCK_RFC3339_LEN, "1970-01-01T00:00:00.000Z");
		return;
	}
	char date[24];
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, CLOCK_RFC3339_LEN, "%s.%03dZ", date, (int)frac);
}

/* Reads exactly n decimal digits. */
static bool read_digits(const char **p, int n, int *value)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*value = v;
	return true;
}

static bool expect(const char **p, char a, char b)
{
	if (**p != a && **p != b)
		return false;
	(*p)++;
	return true;
}

int clock_parse_rfc3339(const char *text, int64_t *ms)
{
	const char *p = text;
	int year, mon, day, hour, min, sec;
	if (!read_digits(&p, 4, &year) || !expect(&p, '-', '-') || !read_digits(&p, 2, &mon) ||
		!expect(&p, '-', '-') || !read_digits(&p, 2, &day) || !expect(&p, 'T', 't') ||
		!read_digits(&p, 2, &hour) || !expect(&p, ':', ':') || !read_digits(&p, 2, &min) ||
		!expect(&p, ':', ':') || !read_digits(&p, 2, &sec))
		return -1;
	if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60)
		return -1;

	int millis = 0;
	if (*p == '.') {
		p++;
		int digits = 0;
		while (*p >= '0' && *p <= '9') {
			if (digits < 3)
				millis = millis * 10 + (*p - '0');
			digits++;
			p++;
		}
		if (digits == 0)
			return -1;
		for (int d = digits; d < 3; d++)
			millis *= 10;
	}

	int offset_min = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1, oh, om;
		p++;
		if (!read_digits(&p, 2, &oh) || !expect(&p, ':', ':') || !read_digits(&p, 2, &om) ||
			oh > 23 || om > 59)
			return -1;
		offset_min = sign * (oh * 60 + om);
	} else {
		return -1;
	}
	if (*p != '\0')
		return -1;

	struct tm tm = {0};
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	time_t t = timegm(&tm);
	*ms = ((int64_t)t - (int64_t)offset_min * 60) * 1000 + millis;
	return 0;
}
