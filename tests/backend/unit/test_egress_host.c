/* egress/egress_host.c: the Host of request heads as curl, Python and
 * browsers send them, read at every prefix length (MORE until the blank
 * line, then the verdict); the heads it refuses to vouch for. */
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "egress/egress_host.h"
#include "suites.h"

/* Every proper prefix is MORE, the whole is want (with name). */
static void every_prefix(const char *head, enum egress_host_result want, const char *name)
{
	size_t len = strlen(head);
	char got[256];
	bool prefixes_more = true;
	for (size_t n = 0; n < len; n++)
		if (egress_host_parse((const unsigned char *)head, n, got, sizeof got) != EGRESS_HOST_MORE)
			prefixes_more = false;
	CHECK(prefixes_more);
	CHECK(egress_host_parse((const unsigned char *)head, len, got, sizeof got) == want);
	if (want == EGRESS_HOST_FOUND && name)
		CHECK_STR(got, name);
}

static void bad(const char *head)
{
	char got[256];
	CHECK(egress_host_parse((const unsigned char *)head, strlen(head), got, sizeof got) ==
		EGRESS_HOST_BAD);
}

void suite_egress_host(void)
{
	every_prefix(
		"GET / HTTP/1.1\r\nHost: api.world.test\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
		EGRESS_HOST_FOUND, "api.world.test");
	every_prefix("GET /simple?x=1 HTTP/1.0\r\nhost:API.World.Test:8080\t\r\n\r\n", EGRESS_HOST_FOUND,
		"api.world.test");
	every_prefix("OPTIONS * HTTP/1.1\r\nHost: example.com.\r\n\r\n", EGRESS_HOST_FOUND, "example.com");
	every_prefix("GET / HTTP/1.1\r\nHost: 203.0.113.10\r\n\r\n", EGRESS_HOST_FOUND, "203.0.113.10");
	/* The body after the head is not looked at. */
	char got[256];
	const char *post = "POST /u HTTP/1.1\r\nContent-Length: 5\r\nHost: a.test\r\n\r\nHost:";
	CHECK(egress_host_parse((const unsigned char *)post, strlen(post), got, sizeof got) ==
		EGRESS_HOST_FOUND);
	CHECK_STR(got, "a.test");

	bad("GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n"); /* two */
	bad("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n");                  /* none */
	bad("GET http://b.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n");    /* absolute form */
	bad("CONNECT b.test:443 HTTP/1.1\r\nHost: a.test\r\n\r\n");    /* authority form */
	bad("GET / HTTP/1.1\nHost: a.test\n\n");                       /* bare LF */
	bad("GET / HTTP/1.1\r\nHost: a.test\rX: y\r\n\r\n");           /* bare CR */
	bad("GET / HTTP/1.1\r\nHost : a.test\r\n\r\n");                /* space before the colon */
	bad("GET / HTTP/1.1\r\nX: y\r\n Host: a.test\r\n\r\n");        /* folded */
	bad("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n");               /* IPv6 */
	bad("GET / HTTP/1.1\r\nHost: a..test\r\n\r\n");                /* empty label */
	bad("GET / HTTP/1.1\r\nHost: .a.test\r\n\r\n");
	bad("GET / HTTP/1.1\r\nHost: a.test..\r\n\r\n");
	bad("GET / HTTP/1.1\r\nHost: a_b.test\r\n\r\n");
	bad("GET / HTTP/1.1\r\nHost: a.test:\r\n\r\n"); /* empty port */
	bad("GET / HTTP/1.1\r\nHost: a.test:8o\r\n\r\n");
	bad("GET / HTTP/1.1\r\nHost: \r\n\r\n");
	bad("GET / HTTP/2\r\nHost: a.test\r\n\r\n");
	bad("\x16\x03\x01\x02"); /* TLS on port 80: at once */
	bad("get / HTTP/1.1\r\nHost: a.test\r\n\r\n");

	/* One Host value alone, as a rewriter sees each request's. */
	CHECK(egress_host_name("API.World.Test:80", got, sizeof got) && strcmp(got, "api.world.test") == 0);
	CHECK(egress_host_name("a.test.", got, sizeof got) && strcmp(got, "a.test") == 0);
	CHECK(!egress_host_name("[::1]", got, sizeof got) && !egress_host_name("", got, sizeof got) &&
		!egress_host_name("a b", got, sizeof got));

	/* A name that does not fit is refused, never cut. */
	const char *longer = "GET / HTTP/1.1\r\nHost: abcdefgh.test\r\n\r\n";
	CHECK(egress_host_parse((const unsigned char *)longer, strlen(longer), got, 13) == EGRESS_HOST_BAD);
	CHECK(egress_host_parse((const unsigned char *)longer, strlen(longer), got, 14) == EGRESS_HOST_FOUND);

	/* A head that never ends within the limit is BAD, not MORE forever. */
	static unsigned char big[EGRESS_HOST_MAX_BYTES + 10];
	memset(big, 'a', sizeof big);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	CHECK(egress_host_parse(big, sizeof big, got, sizeof got) == EGRESS_HOST_BAD);
	CHECK(egress_host_parse(big, 100, got, sizeof got) == EGRESS_HOST_MORE);
}
