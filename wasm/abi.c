/* abi.c — the WebAssembly ABI of the core: flat functions of numbers only,
 * so any loader (js-shim/, a browser, another runtime) can drive it with a
 * few lines. Byte inputs go through one scratch buffer per instance that the
 * loader fills in place (input_buffer), so no per-call allocation crosses the
 * boundary. Outputs are pointer/length pairs into the core's memory, valid
 * until the next next_action call. The module imports nothing. */
#include <stdlib.h>

#include "buf.h"
#include "e2bw.h"

#define WASM_EXPORT(name) __attribute__((export_name(name)))

typedef struct abi_instance {
	e2bw_core *core;
	e2bw_buf scratch;
	char *described;
} abi_instance;

WASM_EXPORT("core_new") abi_instance *abi_core_new(void)
{
	abi_instance *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->core = e2bw_core_new();
	if (!h->core) {
		free(h);
		return NULL;
	}
	return h;
}

WASM_EXPORT("core_free") void abi_core_free(abi_instance *h)
{
	if (!h)
		return;
	e2bw_core_free(h->core);
	e2bw_buf_free(&h->scratch);
	e2bw_free(h->described);
	free(h);
}

/* A buffer of at least `size` bytes for the next byte input; 0 when out of memory. */
WASM_EXPORT("input_buffer") char *abi_input_buffer(abi_instance *h, size_t size)
{
	e2bw_buf_reset(&h->scratch);
	if (e2bw_buf_reserve(&h->scratch, size) != 0)
		return NULL;
	return h->scratch.data;
}

WASM_EXPORT("submit") void abi_submit(abi_instance *h, size_t len, double now)
{
	e2bw_core_submit(h->core, h->scratch.data, len, now);
}

/* The scratch buffer holds the message, the member's name, then its value. */
WASM_EXPORT("submit_detached")
void abi_submit_detached(abi_instance *h, size_t len, size_t member_len, size_t value_len, double now)
{
	const char *p = h->scratch.data;
	e2bw_core_submit_detached(h->core, p, len, p + len, member_len, p + len + member_len, value_len, now);
}

WASM_EXPORT("set_detach") void abi_set_detach(abi_instance *h, size_t min_len)
{
	e2bw_core_set_detach(h->core, min_len);
}

/* The scratch buffer holds the config's JSON text. */
WASM_EXPORT("set_host_config") int abi_set_host_config(abi_instance *h, size_t len)
{
	return e2bw_core_set_host_config(h->core, h->scratch.data, len);
}

/* The scratch buffer holds the hint's text. */
WASM_EXPORT("set_key_hint") void abi_set_key_hint(abi_instance *h, size_t len)
{
	e2bw_core_set_key_hint(h->core, h->scratch.data, len);
}

WASM_EXPORT("ndjson_feed") void abi_ndjson_feed(abi_instance *h, size_t len, double now)
{
	e2bw_core_ndjson_feed(h->core, h->scratch.data, len, now);
}

WASM_EXPORT("ndjson_end") void abi_ndjson_end(abi_instance *h, double now)
{
	e2bw_core_ndjson_end(h->core, now);
}

WASM_EXPORT("http_head")
void abi_http_head(abi_instance *h, uint32_t op, int status, size_t headers_len, double now)
{
	e2bw_core_http_head(h->core, op, status, h->scratch.data, headers_len, now);
}

WASM_EXPORT("http_body") void abi_http_body(abi_instance *h, uint32_t op, size_t len, double now)
{
	e2bw_core_http_body(h->core, op, (const uint8_t *)h->scratch.data, len, now);
}

WASM_EXPORT("http_end") void abi_http_end(abi_instance *h, uint32_t op, double now)
{
	e2bw_core_http_end(h->core, op, now);
}

WASM_EXPORT("http_fail") void abi_http_fail(abi_instance *h, uint32_t op, int failure, double now)
{
	e2bw_core_http_fail(h->core, op, failure, now);
}

WASM_EXPORT("http_hold") void abi_http_hold(abi_instance *h, uint32_t op, int held, double now)
{
	e2bw_core_http_hold(h->core, op, held, now);
}

WASM_EXPORT("next_deadline") double abi_next_deadline(abi_instance *h)
{
	return e2bw_core_next_deadline(h->core);
}
WASM_EXPORT("tick") void abi_tick(abi_instance *h, double now)
{
	e2bw_core_tick(h->core, now);
}
WASM_EXPORT("next_action") int abi_next_action(abi_instance *h)
{
	return e2bw_core_next_action(h->core);
}
WASM_EXPORT("action_op") uint32_t abi_action_op(abi_instance *h)
{
	return e2bw_action_op(h->core);
}
WASM_EXPORT("action_text") const char *abi_action_text(abi_instance *h)
{
	return e2bw_action_text(h->core);
}
WASM_EXPORT("action_text_len") size_t abi_action_text_len(abi_instance *h)
{
	return e2bw_action_text_len(h->core);
}
WASM_EXPORT("action_body") const uint8_t *abi_action_body(abi_instance *h)
{
	return e2bw_action_body(h->core);
}
WASM_EXPORT("action_body_len") size_t abi_action_body_len(abi_instance *h)
{
	return e2bw_action_body_len(h->core);
}
WASM_EXPORT("action_message") int abi_action_message(abi_instance *h)
{
	return e2bw_action_message(h->core);
}
WASM_EXPORT("is_shut_down") int abi_is_shut_down(abi_instance *h)
{
	return e2bw_core_is_shut_down(h->core);
}

/* The method table as JSON (NUL-terminated, owned by the instance). */
WASM_EXPORT("describe_methods") const char *abi_describe_methods(abi_instance *h)
{
	if (!h->described)
		h->described = e2bw_describe_methods();
	return h->described;
}

#ifdef __EMSCRIPTEN__
/* Emscripten's allocator reports memory growth to the embedder through an
 * import; the loader re-reads memory.buffer after every call instead, so a
 * no-op here keeps the module free of imports. */
void emscripten_notify_memory_growth(size_t memory_index);
void emscripten_notify_memory_growth(size_t memory_index)
{
	(void)memory_index;
}
#endif
