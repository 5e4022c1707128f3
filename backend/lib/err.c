/* struct err: one status and one message per failure (see err.h). */
#include "lib/err.h"

#include <stdio.h>
#include <string.h>

int err_setv(struct err *e, int status, const char *fmt, va_list ap)
{
	if (!e)
		return -1;
	e->status = status;
	if (vsnprintf(e->msg, sizeof e->msg, fmt, ap) < 0)
		e->msg[0] = '\0';
	return -1;
}

int err_set(struct err *e, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_setv(e, status, fmt, ap);
	va_end(ap);
	return -1;
}

int err_wrap(struct err *e, const char *fmt, ...)
{
	if (!e)
		return -1;
	char prefix[ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	size_t plen = strlen(prefix);
	size_t room = sizeof e->msg - 1;
	size_t keep = strnlen(e->msg, room);
	/* the old message moves right behind "<prefix>: ", its tail cut to fit */
	size_t head = plen + 2 < room ? plen + 2 : room;
	if (keep > room - head)
		keep = room - head;
	memmove(e->msg + head, e->msg, keep);
	memcpy(e->msg, prefix, head < plen ? head : plen);
	if (head > plen)
		memcpy(e->msg + plen, ": ", head - plen);
	e->msg[head + keep] = '\0';
	return -1;
}

void err_clear(struct err *e)
{
	if (!e)
		return;
	e->status = 0;
	e->msg[0] = '\0';
}
