/* /volumes (api_volumes.h). */
#include "api/api_volumes.h"

#include "http/http_body.h"
#include "http/http_field.h"
#include "http/http_reply.h"
#include "volumes/volumes.h"

#include <cJSON.h>
#include <stdint.h>

static cJSON *volume_json(const struct api_ctx *ctx, const struct volume *v, bool with_token)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "volumeID", v->id);
	cJSON_AddStringToObject(o, "name", v->name);
	cJSON_AddNumberToObject(o, "sizeMB", v->size_mb); /* ours: E2B's volumes have no size field */
	if (with_token) {
		char token[VOLUME_TOKEN_LEN + 1];
		volumes_token(ctx->volumes, v, token);
		cJSON_AddStringToObject(o, "token", token);
	}
	return o;
}

int api_volume_create(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	struct err berr;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &berr);
	if (!body)
		return reply_error(req, berr.status, berr.msg);
	const char *name = NULL;
	int64_t size_mb = VOLUME_DEFAULT_SIZE_MB;
	enum field_result r = field_string(body, "name", &name, &berr);
	if (r == FIELD_ABSENT)
		body_error_set(&berr, "field \"name\" is required");
	if (r != FIELD_OK || field_int(body, "sizeMB", 1, INT32_MAX, &size_mb, &berr) == FIELD_BAD) {
		cJSON_Delete(body);
		return reply_error(req, berr.status, berr.msg);
	}
	struct err err;
	const struct volume *v = volumes_create(ctx->volumes, name, (int)size_mb, &err);
	cJSON_Delete(body);
	if (!v)
		return reply_error(req, err.status, err.msg);
	return reply_json(req, 201, volume_json(ctx, v, true));
}

int api_volume_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; list && i < volumes_count(ctx->volumes); i++)
		cJSON_AddItemToArray(list, volume_json(ctx, volumes_at(ctx->volumes, i), false));
	return reply_json(req, 200, list);
}

int api_volume_get(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	const struct volume *v = volumes_find(ctx->volumes, id);
	if (!v)
		return reply_errorf(req, 404, "Volume %.64s not found", id);
	return reply_json(req, 200, volume_json(ctx, v, true));
}

int api_volume_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct err err;
	if (volumes_delete(ctx->volumes, id, &err) != 0)
		return reply_error(req, err.status, err.msg);
	return reply_empty(req, 204);
}
