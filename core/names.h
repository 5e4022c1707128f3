/* names.h — how a name a host wrote relates to one the core knows. Hosts
 * write field names in other styles (apiUrl for api_url) or misspell them
 * (timout): such a field would otherwise be ignored as an extension and
 * its value silently lost, so the method table and the config answer
 * "did you mean" instead. */
#ifndef E2BW_NAMES_H
#define E2BW_NAMES_H

/* 1 when a and b are equal ignoring ASCII case. */
int e2bw_name_equal_nocase(const char *a, const char *b);

/* How close `given` is to `known`: 0 for the same name written in another
 * style (case, '_' and '-' ignored: apiUrl, API_URL, api-url for api_url),
 * else the Damerau-Levenshtein distance (optimal string alignment, ASCII
 * case ignored). -1 when they are further apart than a slip of the keys:
 * more than 2 edits for a known name of 5 or more characters, more than 1
 * for a shorter one (docs/errors.md). */
int e2bw_name_near(const char *given, const char *known);

/* The known name closest to a given one, over a loop of candidates. */
typedef struct e2bw_name_match {
	const char *meant; /* NULL while no candidate is near */
	int distance;
} e2bw_name_match;
#define E2BW_NAME_MATCH_INIT \
	{ \
		NULL, -1 \
	}
/* Keeps known in *m when it is near given and closer than what *m holds. */
void e2bw_name_consider(e2bw_name_match *m, const char *given, const char *known);
/* Keeps known in *m when it is closer to given than what *m holds, however
 * far, for naming the nearest of a closed set: the distance is given's
 * (case, '_' and '-' ignored) to known or to a run of its '_'-separated
 * words, whichever is least, so "timout" is 1 from request_timeout. */
void e2bw_name_consider_nearest(e2bw_name_match *m, const char *given, const char *known);

#endif
