/* check.h — the unit tests' whole framework: CHECK records a failure and
 * goes on; each suite is a function listed in main.c. */
#ifndef E2BW_CHECK_H
#define E2BW_CHECK_H

#include <stdio.h>
#include <string.h>

extern int check_failures;
extern int check_count;

#define CHECK(cond) \
	do { \
		check_count++; \
		if (!(cond)) { \
			check_failures++; \
			fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		} \
	} while (0)

#define CHECK_STR(a, b) \
	do { \
		const char *check_a_ = (a), *check_b_ = (b); \
		check_count++; \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) { \
			check_failures++; \
			fprintf(stderr, "  FAIL %s:%d: %s == %s\n    got:      %s\n    expected: %s\n", \
				__FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)", \
				check_b_ ? check_b_ : "(null)"); \
		} \
	} while (0)

#define CHECK_NUM(a, b) \
	do { \
		double check_a_ = (double)(a), check_b_ = (double)(b); \
		check_count++; \
		if (check_a_ != check_b_) { \
			check_failures++; \
			fprintf(stderr, "  FAIL %s:%d: %s == %s (got %g, expected %g)\n", __FILE__, \
				__LINE__, #a, #b, check_a_, check_b_); \
		} \
	} while (0)

/* A named suite, and running a list of them: each prints "ok" or "FAILED". */
typedef struct check_suite {
	const char *name;
	void (*run)(void);
} check_suite;

static inline void check_run_suites(const check_suite *suites, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		int before = check_failures;
		suites[i].run();
		printf("%-10s %s\n", suites[i].name, check_failures == before ? "ok" : "FAILED");
	}
}

/* Prints the totals; the exit status: 1 when any check failed. */
static inline int check_report(void)
{
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
