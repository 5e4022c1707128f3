/* The backend's unit suites (tests/backend/unit/main.c lists them). */
#ifndef E2B_BACKEND_UNIT_SUITES_H
#define E2B_BACKEND_UNIT_SUITES_H

void suite_clock(void);
void suite_query(void);
void suite_list_cursor(void);
void suite_protojson(void);
void suite_connect(void);
void suite_text(void);
void suite_net_policy(void);
void suite_net_rules(void);
void suite_store_records(void);
void suite_snapshot_names(void);
void suite_secrets_names(void);
void suite_images(void);
void suite_images_follow(void);
void suite_store_squash(void);
void suite_worker(void);
void suite_fs_owners(void);
void suite_egress_sni(void);
void suite_egress_host(void);
void suite_egress_socks(void);
void suite_egress_http(void);
void suite_egress_ca(void);
void suite_registry_log(void);
void suite_egress_splice(void);
void suite_egress_stream(void);
void suite_cgroup(void);
void suite_err(void);

#endif
