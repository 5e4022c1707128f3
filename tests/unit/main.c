/* main.c — runs every unit suite; exit status 1 when any check failed. */
#include <stdio.h>

#include "check.h"
#include "harness.h"
#include "suites.h"

int check_failures = 0;
int check_count = 0;

static const check_suite suites[] = {
	{"buf+url", suite_util},
	{"ndjson", suite_ndjson},
	{"jsonrpc", suite_jsonrpc},
	{"errors", suite_errors},
	{"dispatch", suite_dispatch},
	{"config", suite_config},
	{"sandbox", suite_sandbox},
	{"transport", suite_transport},
	{"codecs", suite_codecs},
	{"process", suite_process},
	{"redact", suite_redact},
	{"redirects", suite_redirects},
	{"oom", suite_oom},
	{"files", suite_files},
	{"printf", suite_printf},
	{"strstr", suite_strstr},
	{"strtod", suite_strtod},
	{"dockerfile", suite_dockerfile},
	{"templates", suite_templates},
	{"code", suite_code},
};

/* The suites whose messages carry long strings, again with every long
 * string detached (harness.h), in and out. */
static const check_suite detached[] = {
	{"files/d", suite_files},
	{"process/d", suite_process},
	{"dispatch/d", suite_dispatch},
	{"redact/d", suite_redact},
	{"oom/d", suite_oom},
	{"templates/d", suite_templates},
	{"code/d", suite_code},
};

int main(void)
{
	check_run_suites(suites, sizeof suites / sizeof suites[0]);
	h_detach = 1;
	check_run_suites(detached, sizeof detached / sizeof detached[0]);
	return check_report();
}
