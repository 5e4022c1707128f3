/* Small string helpers the C library lacks. */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *text_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *out = malloc((size_t)n + 1);
	if (!out)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(out, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return out;
}

bool text_secret_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* Walk the expected secret's full length whatever the input is. */
	unsigned char diff = (unsigned char)(la != lb);
	for (size_t i = 0; i < lb; i++) {
		unsigned char ca = i < la ? (unsigned char)a[i] : 0;
		diff |= (unsigned char)(ca ^ (unsigned char)b[i]);
	}
	return diff == 0;
}
