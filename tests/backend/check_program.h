/* The checks of the small C programs in tests/backend/ that drive the
 * backend's code against real sandboxes: CHECK prints a failure and goes
 * on; the program exits 1 when failures is not 0. */
#ifndef E2B_TESTS_BACKEND_CHECK_PROGRAM_H
#define E2B_TESTS_BACKEND_CHECK_PROGRAM_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__); \
			printf("\n"); \
			failures++; \
		} \
	} while (0)

#endif
