/* rfc3339.c — reading the control plane's RFC 3339 times (see rfc3339.h). */
#include "rfc3339.h"

#include <stdlib.h>

/* Reads 1 to max decimal digits at *p, then the separator sep (0: none).
 * Hand-rolled rather than sscanf, whose scanner was 5 KiB of core.wasm. */
static int read_field(const char **p, int max, char sep, int *v)
{
	int n = 0, x = 0;
	while (n < max && **p >= '0' && **p <= '9')
		x = x * 10 + (*(*p)++ - '0'), n++;
	*v = x;
	if (!n)
		return 0;
	if (sep && *(*p)++ != sep)
		return 0;
	return 1;
}

int e2bw_rfc3339_ms(const char *text, double *ms)
{
	int y, mo, d, h, mi;
	const char *p = text;
	char *end;
	if (!p || !read_field(&p, 4, '-', &y) || !read_field(&p, 2, '-', &mo) ||
		!read_field(&p, 2, 'T', &d) || !read_field(&p, 2, ':', &h) || !read_field(&p, 2, ':', &mi) ||
		*p < '0' || *p > '9')
		return -1;
	double s = strtod(p, &end);
	/* days from civil (Howard Hinnant), valid for the Gregorian calendar */
	y -= mo <= 2;
	long era = (y >= 0 ? y : y - 399) / 400;
	long yoe = y - era * 400;
	long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	double days = (double)(era * 146097 + doe - 719468);
	*ms = ((days * 24 + h) * 60 + mi) * 60000.0 + s * 1000.0;
	return 0;
}
