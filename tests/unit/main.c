/* main.c — runs every unit suite; exit status 1 when any check failed. */
#include <stdio.h>

#include "check.h"
#include "harness.h"
#include "suites.h"

int check_failures = 0;
int check_count = 0;

static const struct {
  const char *name;
  void (*run)(void);
} suites[] = {
    {"buf+url", suite_util},     {"ndjson", suite_ndjson},         {"jsonrpc", suite_jsonrpc},
    {"errors", suite_errors},    {"dispatch", suite_dispatch},     {"config", suite_config},
    {"sandbox", suite_sandbox},  {"transport", suite_transport}, {"codecs", suite_codecs},
    {"process", suite_process}, {"redact", suite_redact}, {"redirects", suite_redirects}, {"oom", suite_oom},
    {"files", suite_files},      {"printf", suite_printf},      {"strstr", suite_strstr},
    {"strtod", suite_strtod},
};

/* The suites whose messages carry long strings, again with every long
 * string detached (harness.h), in and out. */
static const struct {
  const char *name;
  void (*run)(void);
} detached[] = {
    {"files/d", suite_files}, {"process/d", suite_process}, {"dispatch/d", suite_dispatch}, {"redact/d", suite_redact}, {"oom/d", suite_oom},
};

int main(void) {
  for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
    int before = check_failures;
    suites[i].run();
    printf("%-10s %s\n", suites[i].name, check_failures == before ? "ok" : "FAILED");
  }
  h_detach = 1;
  for (size_t i = 0; i < sizeof detached / sizeof detached[0]; i++) {
    int before = check_failures;
    detached[i].run();
    printf("%-10s %s\n", detached[i].name, check_failures == before ? "ok" : "FAILED");
  }
  printf("%d checks, %d failed\n", check_count, check_failures);
  return check_failures ? 1 : 0;
}
