/* targz.c — see targz.h. ustar: POSIX.1-1988 headers; gzip: RFC 1952 with
 * RFC 1951 stored blocks. */
#include "targz.h"

#include <stdio.h>
#include <string.h>

#define BLOCK 512

/* Where path splits into a ustar prefix and name: the index of the '/', 0
 * when it fits the name field whole, -1 when it does not fit at all. */
static long split_at(const char *path)
{
	size_t n = strlen(path);
	if (n <= 100)
		return 0;
	for (size_t i = n - 1; i > 0; i--)
		if (path[i] == '/' && i <= 155 && n - i - 1 <= 100 && n - i - 1 > 0)
			return (long)i;
	return -1;
}

int e2bw_tar_fits(const char *path)
{
	return split_at(path) >= 0;
}

int e2bw_tar_add(e2bw_buf *tar, const char *path, unsigned mode, const uint8_t *data, size_t len, int is_dir)
{
	long cut = split_at(path);
	if (cut < 0)
		return -2;
	if (e2bw_buf_reserve(tar, BLOCK + len + BLOCK))
		return -1;
	char *h = tar->data + tar->len;
	memset(h, 0, BLOCK);
	if (cut) {
		memcpy(h + 345, path, (size_t)cut); /* prefix */
		memcpy(h, path + cut + 1, strlen(path) - (size_t)cut - 1);
	} else {
		memcpy(h, path, strlen(path));
	}
	snprintf(h + 100, 8, "%07o", mode & 07777);
	memcpy(h + 108, "0000000", 8); /* uid */
	memcpy(h + 116, "0000000", 8); /* gid */
	snprintf(h + 124, 12, "%011lo", (unsigned long)(is_dir ? 0 : len));
	memcpy(h + 136, "00000000000", 12); /* mtime */
	h[156] = is_dir ? '5' : '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8); /* the checksum counts its own field as blanks */
	unsigned sum = 0;
	for (int i = 0; i < BLOCK; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 7, "%06o", sum);
	tar->len += BLOCK;
	if (!is_dir && len) {
		memcpy(tar->data + tar->len, data, len);
		tar->len += len;
		size_t pad = (BLOCK - len % BLOCK) % BLOCK;
		memset(tar->data + tar->len, 0, pad);
		tar->len += pad;
	}
	tar->data[tar->len] = '\0';
	return 0;
}

int e2bw_tar_end(e2bw_buf *tar)
{
	if (e2bw_buf_reserve(tar, 2 * BLOCK))
		return -1;
	memset(tar->data + tar->len, 0, 2 * BLOCK);
	tar->len += 2 * BLOCK;
	tar->data[tar->len] = '\0';
	return 0;
}

/* CRC-32 (ISO 3309, as gzip), four bits at a time: a 16-entry table. */
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
	static const uint32_t nibble[16] = {0x00000000, 0x1DB71064, 0x3B6E20C8, 0x26D930AC, 0x76DC4190,
		0x6B6B51F4, 0x4DB26158, 0x5005713C, 0xEDB88320, 0xF00F9344, 0xD6D6A3E8, 0xCB61B38C,
		0x9B64C2B0, 0x86D3D2D4, 0xA00AE278, 0xBDBDF21C};
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		c = (c >> 4) ^ nibble[c & 15];
		c = (c >> 4) ^ nibble[c & 15];
	}
	return c ^ 0xFFFFFFFFu;
}

static void put32le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int e2bw_gzip_stored(e2bw_buf *out, const uint8_t *data, size_t len)
{
	size_t blocks = len / 65535 + 1;
	if (e2bw_buf_reserve(out, 10 + blocks * 5 + len + 8))
		return -1;
	uint8_t *p = (uint8_t *)out->data + out->len;
	static const uint8_t head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0,
		0xff}; /* deflate, no name, no time, unknown OS */
	memcpy(p, head, 10);
	p += 10;
	size_t left = len;
	do {
		size_t n = left < 65535 ? left : 65535;
		left -= n;
		*p++ = left ? 0 : 1; /* BFINAL on the last block, BTYPE 00: stored */
		p[0] = (uint8_t)n, p[1] = (uint8_t)(n >> 8), p[2] = (uint8_t)~n, p[3] = (uint8_t)(~n >> 8);
		p += 4;
		if (n)
			memcpy(p, data, n);
		p += n;
		data += n;
	} while (left);
	put32le(p, len ? crc32_of(data - len, len) : 0);
	put32le(p + 4, (uint32_t)len);
	p += 8;
	out->len = (size_t)((char *)p - out->data);
	out->data[out->len] = '\0';
	return 0;
}
