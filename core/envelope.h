/* envelope.h — Connect protocol enveloped messages (docs/e2b-protocol-notes.md,
 * "Connect protocol"): one flag byte (0x01 compressed, 0x02 end-stream), a
 * 4-byte big-endian length, the payload. A pure codec: no connection state.
 *
 * The decoder is incremental: feed it bytes split anywhere and it yields the
 * same frames. A payload that lies wholly inside the bytes just fed is returned
 * in place (no copy); one spanning feeds is assembled in the decoder's buffer.
 * Once it fails it keeps failing until reset. */
#ifndef E2BW_ENVELOPE_H
#define E2BW_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define E2BW_ENV_FLAG_COMPRESSED 0x01
#define E2BW_ENV_FLAG_END_STREAM 0x02

/* Frames above this are refused before any of the payload is buffered.
 * envd sends output in chunks of at most 32 KiB (base64: ~44 KiB of JSON). */
#ifndef E2BW_ENV_MAX_PAYLOAD
#define E2BW_ENV_MAX_PAYLOAD (4u * 1024u * 1024u)
#endif

typedef enum e2bw_env_status {
	E2BW_ENV_FRAME = 1,           /* *frame is valid until the next call */
	E2BW_ENV_NEED_MORE = 0,       /* every byte was consumed; feed more */
	E2BW_ENV_ERR_COMPRESSED = -1, /* compressed frame: never negotiated */
	E2BW_ENV_ERR_TOO_LARGE = -2,  /* payload length over the limit */
	E2BW_ENV_ERR_FLAGS = -3,      /* unknown flag bits */
	E2BW_ENV_ERR_NOMEM = -4
} e2bw_env_status;

typedef struct e2bw_env_frame {
	uint8_t flags;
	const uint8_t *data;
	size_t len;
} e2bw_env_frame;

typedef struct e2bw_env_decoder {
	uint8_t head[5];
	size_t head_len;  /* bytes of head[] filled */
	uint32_t need;    /* payload length of the frame being read */
	e2bw_buf payload; /* assembled payload when it spans feeds */
	int error;        /* sticky failure (an e2bw_env_status < 0) */
	uint64_t offset;  /* total bytes consumed, for error reports */
} e2bw_env_decoder;

void e2bw_env_decoder_init(e2bw_env_decoder *d);
void e2bw_env_decoder_free(e2bw_env_decoder *d);
/* 1 when no partial frame is pending (a stream may end here cleanly). */
int e2bw_env_decoder_at_boundary(const e2bw_env_decoder *d);

/* Consumes from data[0..len); *consumed tells how many bytes were used.
 * Call again with the rest after every E2BW_ENV_FRAME. */
e2bw_env_status e2bw_env_decode(e2bw_env_decoder *d, const uint8_t *data, size_t len, size_t *consumed,
	e2bw_env_frame *frame);

/* Appends one frame (head + payload) to out. 0, or -1 when out of memory. */
int e2bw_env_encode(e2bw_buf *out, uint8_t flags, const void *payload, size_t len);

const char *e2bw_env_strerror(e2bw_env_status status);

#endif
