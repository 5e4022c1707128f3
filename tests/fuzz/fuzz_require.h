/* fuzz_require.h — the backend fuzz targets' check: a failed invariant
 * prints what broke and aborts, which libFuzzer reports as a crash with the
 * input that caused it. */
#ifndef E2BW_FUZZ_REQUIRE_H
#define E2BW_FUZZ_REQUIRE_H

#include <stdio.h>
#include <stdlib.h>

#define REQUIRE(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, "\n"); \
			abort(); \
		} \
	} while (0)

#endif
