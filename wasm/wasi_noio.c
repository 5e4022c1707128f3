/* wasi_noio.c — linked only into core-wasi.wasm (clang + wasi-libc).
 * wasi-libc's stdio objects come along with snprintf/strtod and reference
 * three WASI calls the core never makes (it does no I/O). Defining them here
 * keeps that module, like core.wasm, free of imports; each fails with ENOSYS. */
#include <stdint.h>

#define WASI_ENOSYS 52

int32_t __imported_wasi_snapshot_preview1_fd_write(int32_t fd, int32_t iovs, int32_t n, int32_t written);
int32_t __imported_wasi_snapshot_preview1_fd_close(int32_t fd);
int32_t __imported_wasi_snapshot_preview1_fd_seek(int32_t fd, int64_t offset, int32_t whence, int32_t out);

int32_t __imported_wasi_snapshot_preview1_fd_write(int32_t fd, int32_t iovs, int32_t n, int32_t written)
{
	(void)fd, (void)iovs, (void)n, (void)written;
	return WASI_ENOSYS;
}
int32_t __imported_wasi_snapshot_preview1_fd_close(int32_t fd)
{
	(void)fd;
	return WASI_ENOSYS;
}
int32_t __imported_wasi_snapshot_preview1_fd_seek(int32_t fd, int64_t offset, int32_t whence, int32_t out)
{
	(void)fd, (void)offset, (void)whence, (void)out;
	return WASI_ENOSYS;
}
