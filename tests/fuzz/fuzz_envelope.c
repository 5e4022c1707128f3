/* libFuzzer target: the Connect envelope decoder. The same bytes fed whole,
 * byte by byte, and in pieces the first byte chooses must give the same
 * frames (or the same error at the same offset); consumed never exceeds
 * what was given; nothing leaks or over-reads (ASan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "envelope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Log of frames: flags, length and a checksum of each payload. */
static void run(const uint8_t *data, size_t size, size_t step, e2bw_buf *log)
{
	e2bw_env_decoder d;
	e2bw_env_decoder_init(&d);
	size_t pos = 0;
	while (pos < size) {
		size_t n = size - pos < step ? size - pos : step;
		const uint8_t *p = data + pos;
		size_t left = n;
		while (left) {
			size_t used;
			e2bw_env_frame f;
			e2bw_env_status st = e2bw_env_decode(&d, p, left, &used, &f);
			if (used > left)
				abort();
			p += used;
			left -= used;
			char line[96];
			if (st == E2BW_ENV_FRAME) {
				uint32_t sum = 2166136261u;
				for (size_t i = 0; i < f.len; i++)
					sum = (sum ^ f.data[i]) * 16777619u;
				snprintf(line, sizeof line, "F%u:%lu:%08x|", f.flags, (unsigned long)f.len,
					sum);
				e2bw_buf_append_str(log, line);
			} else if (st < 0) {
				snprintf(line, sizeof line, "E%d@%llu|", -st, (unsigned long long)d.offset);
				e2bw_buf_append_str(log, line);
				e2bw_env_decoder_free(&d);
				return;
			} else if (left) {
				abort(); /* NEED_MORE must have consumed everything */
			}
		}
		pos += n;
	}
	e2bw_buf_append_str(log, e2bw_env_decoder_at_boundary(&d) ? "END" : "PARTIAL");
	e2bw_env_decoder_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t step = data[0] % 13 + 1;
	data++;
	size--;
	e2bw_buf whole = {0}, bytes = {0}, pieces = {0};
	run(data, size, size ? size : 1, &whole);
	run(data, size, 1, &bytes);
	run(data, size, step, &pieces);
	if (strcmp(whole.data, bytes.data) != 0 || strcmp(whole.data, pieces.data) != 0) {
		fprintf(stderr, "chunking changed the result:\n  whole:  %s\n  bytes:  %s\n  pieces: %s\n",
			whole.data, bytes.data, pieces.data);
		abort();
	}
	e2bw_buf_free(&whole);
	e2bw_buf_free(&bytes);
	e2bw_buf_free(&pieces);
	return 0;
}
