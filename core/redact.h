/* redact.h — the credentials the core must never let out (the API key and
 * every envd token it has seen) and the scrubber every outgoing message goes
 * through (actions.c). A secret is replaced by "***" whole, and so is any run
 * of 8 or more of its characters: a key cut in half by a length limit still
 * leaks nothing longer than 7 characters. */
#ifndef E2BW_REDACT_H
#define E2BW_REDACT_H

#include <stddef.h>
#include <stdint.h>

/* What a secret is (e2bw_secret.is_token): the two kinds of token the core
 * hands out on purpose, each only as the value of its own member. */
enum {
	E2BW_SECRET_KEY = 0,
	E2BW_SECRET_ENVD_TOKEN = 1,
	E2BW_SECRET_TRAFFIC_TOKEN = 2
};

typedef struct e2bw_secret {
	char *text;   /* as it appears in JSON text (escaped) */
	char *raw;    /* as it is */
	int is_token; /* E2BW_SECRET_*: an envd token (envd_passthrough hands it out), a traffic token
                      (ports.url's e2b-traffic-access-token header), or neither */
} e2bw_secret;

typedef struct e2bw_secrets {
	e2bw_secret *list;
	size_t n, cap;
	uint64_t *grams; /* open-addressing set of 8-byte runs (0 = empty) */
	size_t ngrams, gcap;
	uint8_t filter[8192]; /* one bit per 16-bit hash of an 8-byte run */
	uint8_t class_lo[16]; /* the bytes secrets are made of, as a nibble table:
                            byte c occurs iff class_lo[c & 15] has bit c >> 4
                            (ASCII; any other byte sets `wide`) */
	int wide;
} e2bw_secrets;

/* Remembers a secret (shorter than 4 bytes: ignored; already known: no-op).
 * Returns -1 when out of memory. Secrets are never forgotten: a token stays
 * secret after its sandbox is gone. */
int e2bw_secrets_add(e2bw_secrets *s, const char *secret, int is_token);
void e2bw_secrets_free(e2bw_secrets *s);

/* Scrubs one EPP message (JSON text): only string contents change, whole
 * escapes at a time, so the text stays valid JSON. With allow_tokens, the
 * value of an "envd_access_token" member that is exactly a known envd token
 * is kept (envd_passthrough hands it out on purpose); the value of an
 * "e2b-traffic-access-token" member that is exactly a known traffic token is
 * always kept (ports.url names the header a request must carry). Returns the text to
 * send: `text` itself when nothing matched, else a new string (`text` is
 * freed); NULL when out of memory (`text` is freed: never send unscrubbed). */
char *e2bw_redact_json(const e2bw_secrets *s, char *text, size_t *len, int allow_tokens);

/* The same for raw text of known length (a detached string): returns `text`
 * itself, or a scrubbed replacement (`text` is freed); NULL when out of memory
 * (`text` is freed). */
char *e2bw_redact_bytes(const e2bw_secrets *s, char *text, size_t *len);

/* A scrubbed malloc'd copy of a plain string (backend text, before it is
 * cut to length); NULL when out of memory. */
char *e2bw_redact_raw(const e2bw_secrets *s, const char *str);

#endif
