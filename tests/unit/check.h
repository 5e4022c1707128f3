/* check.h — the unit tests' whole framework: CHECK records a failure and
 * goes on; each suite is a function listed in main.c. */
#ifndef E2BW_CHECK_H
#define E2BW_CHECK_H

#include <stdio.h>
#include <string.h>

extern int check_failures;
extern int check_count;

#define CHECK(cond)                                                                  \
  do {                                                                               \
    check_count++;                                                                   \
    if (!(cond)) {                                                                   \
      check_failures++;                                                              \
      fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);              \
    }                                                                                \
  } while (0)

#define CHECK_STR(a, b)                                                              \
  do {                                                                               \
    const char *check_a_ = (a), *check_b_ = (b);                                     \
    check_count++;                                                                   \
    if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                 \
      check_failures++;                                                              \
      fprintf(stderr, "  FAIL %s:%d: %s == %s\n    got:      %s\n    expected: %s\n", \
              __FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",           \
              check_b_ ? check_b_ : "(null)");                                       \
    }                                                                                \
  } while (0)

#define CHECK_NUM(a, b)                                                              \
  do {                                                                               \
    double check_a_ = (double)(a), check_b_ = (double)(b);                           \
    check_count++;                                                                   \
    if (check_a_ != check_b_) {                                                      \
      check_failures++;                                                              \
      fprintf(stderr, "  FAIL %s:%d: %s == %s (got %g, expected %g)\n", __FILE__,     \
              __LINE__, #a, #b, check_a_, check_b_);                                 \
    }                                                                                \
  } while (0)

#endif
