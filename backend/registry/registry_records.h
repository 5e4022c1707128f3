/* A sandbox's record (records/sandboxes/<id>.json, store/store_records.h):
 * what a later backend needs to bring it back paused. Ids, client id,
 * template and layer stack, metadata, env vars, volume mounts, the network
 * asked for at create, the default user and workdir, sizes, the host id range its files carry, lifetimes
 * (endAt, the lifetime left while paused, when the record was written) and
 * auto-pause. Tokens are never stored: each is HMAC-SHA256 of the API key
 * and "<kind>:<id>:<nonce>", and the record keeps only the nonce.
 * Calls store/ (layers), runtime/ (the id range) and lib/. */
#ifndef E2B_BACKEND_REGISTRY_RECORDS_H
#define E2B_BACKEND_REGISTRY_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

struct cJSON;
struct sandbox;

#define REGISTRY_RECORDS_KIND "sandboxes"

/* The tokens of sb from its nonce (sb->token_nonce) and key: the envd
 * token when secure, the traffic token when private_traffic. 0 or -1. */
int registry_records_tokens(struct sandbox *sb, const char *key, bool secure, bool private_traffic);
/* The id of the store layer whose tree is root (a sandbox's layers are
 * their roots), or NULL. */
const char *registry_records_layer_id(const char *root);
/* The record of sb as of now_ms. NULL when out of memory. */
struct cJSON *registry_records_of(const struct sandbox *sb, int64_t now_ms);
/* Fills a new (zeroed) sandbox from a record: everything but the runtime
 * (its layers from the store: -1 when one is missing);
 * it is paused, with the lifetime it had left (a sandbox that was running
 * when the record was written: endAt minus the record's time). id_base is
 * the host id range its files carry. 0, or -1 for a record that is not one. */
int registry_records_load(struct sandbox *sb, const struct cJSON *record, const char *key, uint32_t *id_base);

#endif
