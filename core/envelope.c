#include "envelope.h"

#include <string.h>

void e2bw_env_decoder_init(e2bw_env_decoder *d)
{
	memset(d, 0, sizeof *d);
}

void e2bw_env_decoder_free(e2bw_env_decoder *d)
{
	e2bw_buf_free(&d->payload);
}

int e2bw_env_decoder_at_boundary(const e2bw_env_decoder *d)
{
	return d->head_len == 0 && !d->error;
}

static e2bw_env_status fail(e2bw_env_decoder *d, e2bw_env_status status)
{
	d->error = status;
	e2bw_buf_free(&d->payload);
	return status;
}

e2bw_env_status e2bw_env_decode(e2bw_env_decoder *d, const uint8_t *data, size_t len, size_t *consumed,
	e2bw_env_frame *frame)
{
	const uint8_t *p = data, *end = data + len;
	e2bw_env_status status = E2BW_ENV_NEED_MORE;
	*consumed = 0;
	if (d->error)
		return (e2bw_env_status)d->error;

	/* 1. the 5-byte head, possibly across feeds */
	if (d->head_len < 5) {
		size_t n = 5 - d->head_len;
		if (n > (size_t)(end - p))
			n = (size_t)(end - p);
		memcpy(d->head + d->head_len, p, n);
		d->head_len += n;
		p += n;
		if (d->head_len < 5)
			goto out;
		uint8_t flags = d->head[0];
		d->need = (uint32_t)d->head[1] << 24 | (uint32_t)d->head[2] << 16 |
			(uint32_t)d->head[3] << 8 | d->head[4];
		if (flags & E2BW_ENV_FLAG_COMPRESSED)
			status = E2BW_ENV_ERR_COMPRESSED;
		else if (flags & ~(E2BW_ENV_FLAG_COMPRESSED | E2BW_ENV_FLAG_END_STREAM))
			status = E2BW_ENV_ERR_FLAGS;
		else if (d->need > E2BW_ENV_MAX_PAYLOAD)
			status = E2BW_ENV_ERR_TOO_LARGE;
		if (status != E2BW_ENV_NEED_MORE)
			goto failed;
		e2bw_buf_reset(&d->payload);
	}

	/* 2. the payload: in place when it is all here and nothing was buffered */
	size_t avail = (size_t)(end - p);
	if (d->payload.len == 0 && avail >= d->need) {
		frame->data = p;
		p += d->need;
		status = E2BW_ENV_FRAME;
	} else {
		size_t n = d->need - d->payload.len;
		if (n > avail)
			n = avail;
		if (e2bw_buf_append(&d->payload, p, n) != 0) {
			status = E2BW_ENV_ERR_NOMEM;
			goto failed;
		}
		p += n;
		if (d->payload.len == d->need) {
			frame->data = (const uint8_t *)d->payload.data;
			status = E2BW_ENV_FRAME;
		}
	}
	if (status == E2BW_ENV_FRAME) {
		frame->flags = d->head[0];
		frame->len = d->need;
		d->head_len = 0;
	}
out:
	*consumed = (size_t)(p - data);
	d->offset += *consumed;
	return status;
failed:
	*consumed = (size_t)(p - data);
	d->offset += *consumed;
	return fail(d, status);
}

int e2bw_env_encode(e2bw_buf *out, uint8_t flags, const void *payload, size_t len)
{
	if (len > 0xffffffffu)
		return -1;
	uint8_t head[5] = {flags, (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
		(uint8_t)len};
	if (e2bw_buf_reserve(out, 5 + len) != 0)
		return -1;
	e2bw_buf_append(out, head, 5);
	e2bw_buf_append(out, payload, len);
	return 0;
}

const char *e2bw_env_strerror(e2bw_env_status status)
{
	switch (status) {
	case E2BW_ENV_ERR_COMPRESSED:
		return "a compressed frame (compression was never negotiated)";
	case E2BW_ENV_ERR_TOO_LARGE:
		return "a frame larger than the 4 MiB limit";
	case E2BW_ENV_ERR_FLAGS:
		return "a frame with unknown flag bits";
	case E2BW_ENV_ERR_NOMEM:
		return "a frame too large for the memory left";
	default:
		return "no error";
	}
}
