/* json_add.h — cJSON_AddItemTo* keep the item when they fail (out of
 * memory): these free it instead, so an item is always owned by somebody. */
#ifndef E2BW_JSON_ADD_H
#define E2BW_JSON_ADD_H

#include "cJSON.h"

static inline int e2bw_add(cJSON *object, const char *key, cJSON *item)
{
	if (cJSON_AddItemToObject(object, key, item))
		return 1;
	cJSON_Delete(item);
	return 0;
}
static inline int e2bw_push(cJSON *array, cJSON *item)
{
	if (cJSON_AddItemToArray(array, item))
		return 1;
	cJSON_Delete(item);
	return 0;
}

#endif
