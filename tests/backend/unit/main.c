/* main.c — the local backend's unit tests: its pure code (clock, query
 * strings, list cursors, protobuf-JSON, Connect framing, text, egress
 * rules, the store's records and squashing, the off-loop worker, the egress
 * proxy's splice relay and stream sides, cgroup
 * files, the error type and the devices program), on the core's check.h. Built natively and with ASan+UBSan (make backend-unit);
 * exit status 1 when any check failed. */
#include "check.h"
#include "suites.h"

int check_failures = 0;
int check_count = 0;

static const check_suite suites[] = {
	{"clock", suite_clock},
	{"query", suite_query},
	{"cursor", suite_list_cursor},
	{"protojson", suite_protojson},
	{"connect", suite_connect},
	{"text", suite_text},
	{"net policy", suite_net_policy},
	{"net rules", suite_net_rules},
	{"records", suite_store_records},
	{"snapshot_names", suite_snapshot_names},
	{"secrets_names", suite_secrets_names},
	{"images", suite_images},
	{"images follow", suite_images_follow},
	{"squash", suite_store_squash},
	{"worker", suite_worker},
	{"fs owners", suite_fs_owners},
	{"egress sni", suite_egress_sni},
	{"egress host", suite_egress_host},
	{"egress socks", suite_egress_socks},
	{"egress http", suite_egress_http},
	{"egress ca", suite_egress_ca},
	{"registry log", suite_registry_log},
	{"egress splice", suite_egress_splice},
	{"egress stream", suite_egress_stream},
	{"cgroup", suite_cgroup},
	{"err", suite_err},
};

int main(void)
{
	check_run_suites(suites, sizeof suites / sizeof suites[0]);
	return check_report();
}
