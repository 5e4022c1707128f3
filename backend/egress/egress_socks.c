/* A SOCKS5 client handshake (egress_socks.h). */
#define _GNU_SOURCE
#include "egress/egress_socks.h"

#include "lib/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum {
	STEP_METHOD,
	STEP_AUTH,
	STEP_REPLY,
	STEP_DONE
};

/* Ends the handshake with err set from fmt (status 0). */
static enum egress_socks_status failed(struct egress_socks *s, struct err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum egress_socks_status failed(struct egress_socks *s, struct err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_setv(err, 0, fmt, ap);
	va_end(ap);
	s->step = STEP_DONE;
	egress_socks_clear(s);
	return EGRESS_SOCKS_FAILED;
}

enum egress_socks_status egress_socks_start(struct egress_socks *s, const char *user, const char *pass,
	const char *name, uint32_t addr, uint16_t port, struct err *err)
{
	memset(s, 0, sizeof *s);
	if ((user && strlen(user) > EGRESS_SOCKS_FIELD_MAX) ||
		(pass && strlen(pass) > EGRESS_SOCKS_FIELD_MAX) ||
		(name && strlen(name) > EGRESS_SOCKS_FIELD_MAX) || (user && !*user))
		return failed(s, err, "a SOCKS5 field over 255 bytes, or an empty username");
	if (user) {
		snprintf(s->user, sizeof s->user, "%s", user);
		snprintf(s->pass, sizeof s->pass, "%s", pass ? pass : "");
	}
	snprintf(s->name, sizeof s->name, "%s", name ? name : "");
	s->addr = addr;
	s->port = port;
	/* VER 5, one method: username/password (2) when given, else none (0). */
	s->out[0] = 5;
	s->out[1] = 1;
	s->out[2] = user ? 2 : 0;
	s->out_len = 3;
	s->step = STEP_METHOD;
	return EGRESS_SOCKS_SEND;
}

static void build_connect(struct egress_socks *s)
{
	unsigned char *o = s->out;
	size_t n = 0;
	o[n++] = 5;
	o[n++] = 1; /* CONNECT */
	o[n++] = 0;
	if (s->name[0]) {
		size_t len = strlen(s->name);
		o[n++] = 3;
		o[n++] = (unsigned char)len;
		memcpy(o + n, s->name, len);
		n += len;
	} else {
		o[n++] = 1;
		o[n++] = (unsigned char)(s->addr >> 24);
		o[n++] = (unsigned char)(s->addr >> 16);
		o[n++] = (unsigned char)(s->addr >> 8);
		o[n++] = (unsigned char)s->addr;
	}
	o[n++] = (unsigned char)(s->port >> 8);
	o[n++] = (unsigned char)s->port;
	s->out_len = n;
	s->step = STEP_REPLY;
}

static void build_auth(struct egress_socks *s)
{
	size_t u = strlen(s->user), p = strlen(s->pass), n = 0;
	s->out[n++] = 1; /* RFC 1929's version */
	s->out[n++] = (unsigned char)u;
	memcpy(s->out + n, s->user, u);
	n += u;
	s->out[n++] = (unsigned char)p;
	memcpy(s->out + n, s->pass, p);
	n += p;
	s->out_len = n;
	s->step = STEP_AUTH;
}

/* How long the answer of this step is, given what has come (0: not known yet). */
static size_t answer_length(const struct egress_socks *s)
{
	if (s->step != STEP_REPLY)
		return 2;
	if (s->in_len < 4)
		return 0;
	switch (s->in[3]) {
	case 1:
		return 4 + 4 + 2;
	case 4:
		return 4 + 16 + 2;
	case 3:
		return s->in_len < 5 ? 0 : 4 + 1 + (size_t)s->in[4] + 2;
	default:
		return 4; /* refused below */
	}
}

static const char *reply_text(unsigned code)
{
	static const char *const texts[] = {"succeeded", "general failure",
		"connection not allowed by ruleset", "network unreachable", "host unreachable",
		"connection refused", "TTL expired", "command not supported", "address type not supported"};
	return code < sizeof texts / sizeof texts[0] ? texts[code] : "an unknown reply";
}

enum egress_socks_status egress_socks_feed(struct egress_socks *s, const unsigned char *buf, size_t len,
	size_t *used, struct err *err)
{
	*used = 0;
	if (s->step == STEP_DONE)
		return failed(s, err, "the SOCKS5 handshake is over");
	for (;;) {
		size_t want = answer_length(s);
		size_t need = want ? want : (s->step == STEP_REPLY && s->in_len < 4 ? 4 : 5);
		while (s->in_len < need && *used < len)
			s->in[s->in_len++] = buf[(*used)++];
		if (s->in_len < need)
			return EGRESS_SOCKS_MORE;
		if (!want)
			continue; /* the length is known now */
		break;
	}
	const unsigned char *a = s->in;
	switch (s->step) {
	case STEP_METHOD:
		if (a[0] != 5)
			return failed(s, err, "the proxy does not speak SOCKS5");
		if (a[1] == 0xff)
			return failed(s, err, "%s",
				s->user[0] ? "the proxy accepts no username and password"
					   : "the proxy wants a username and password");
		if (a[1] == 2 && s->user[0]) {
			s->in_len = 0;
			build_auth(s);
			return EGRESS_SOCKS_SEND;
		}
		if (a[1] != 0 || s->user[0])
			return failed(s, err, "the proxy chose a method that was not offered");
		s->in_len = 0;
		build_connect(s);
		return EGRESS_SOCKS_SEND;
	case STEP_AUTH:
		if (a[0] != 1 || a[1] != 0)
			return failed(s, err, "the proxy refused the username and password");
		egress_socks_clear(s);
		s->in_len = 0;
		build_connect(s);
		return EGRESS_SOCKS_SEND;
	default:
		if (a[0] != 5 || a[2] != 0 || (a[3] != 1 && a[3] != 3 && a[3] != 4))
			return failed(s, err, "the proxy's reply is not SOCKS5");
		if (a[1] != 0)
			return failed(s, err, "the proxy could not connect: %s", reply_text(a[1]));
		s->step = STEP_DONE;
		egress_socks_clear(s);
		return EGRESS_SOCKS_OPEN;
	}
}

void egress_socks_clear(struct egress_socks *s)
{
	explicit_bzero(s->user, sizeof s->user);
	explicit_bzero(s->pass, sizeof s->pass);
	explicit_bzero(s->out, sizeof s->out);
}
