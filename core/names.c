/* names.c — near-miss field names (names.h). */
#include "names.h"

#include <string.h>

/* Longer names are never near a known one: every known name is shorter. */
#define NAME_MAX_LEN 40

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int e2bw_name_equal_nocase(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (lower(*a) != lower(*b))
			return 0;
	return *a == *b;
}

/* The name in lower case without '_' and '-'; 0 when too long. */
static size_t folded(const char *s, char *out)
{
	size_t n = 0;
	for (; *s; s++) {
		if (*s == '_' || *s == '-')
			continue;
		if (n == NAME_MAX_LEN)
			return 0;
		out[n++] = lower(*s);
	}
	out[n] = '\0';
	return n;
}

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
	return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

/* Optimal string alignment distance of two strings of at most NAME_MAX_LEN
 * (distances fit a byte). */
static unsigned edit_distance(const char *a, size_t n, const char *b, size_t m)
{
	unsigned char d[NAME_MAX_LEN + 1][NAME_MAX_LEN + 1];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned char)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned char)j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			unsigned best = min3(d[i - 1][j] + 1u, d[i][j - 1] + 1u,
				d[i - 1][j - 1] + (a[i - 1] != b[j - 1]));
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
				d[i - 2][j - 2] + 1u < best)
				best = d[i - 2][j - 2] + 1u;
			d[i][j] = (unsigned char)best;
		}
	}
	return d[n][m];
}

int e2bw_name_near(const char *given, const char *known)
{
	size_t n = strlen(given), m = strlen(known);
	if (n > NAME_MAX_LEN || m > NAME_MAX_LEN)
		return -1;
	char fg[NAME_MAX_LEN + 1], fk[NAME_MAX_LEN + 1];
	size_t gn = folded(given, fg), kn = folded(known, fk);
	if (gn && gn == kn && memcmp(fg, fk, gn) == 0)
		return 0;
	size_t limit = m >= 5 ? 2 : 1;
	if ((n > m ? n - m : m - n) > limit)
		return -1;
	char lg[NAME_MAX_LEN + 1], lk[NAME_MAX_LEN + 1];
	for (size_t i = 0; i <= n; i++)
		lg[i] = lower(given[i]);
	for (size_t i = 0; i <= m; i++)
		lk[i] = lower(known[i]);
	unsigned d = edit_distance(lg, n, lk, m);
	return d <= limit ? (int)d : -1;
}

void e2bw_name_consider(e2bw_name_match *m, const char *given, const char *known)
{
	int d = e2bw_name_near(given, known);
	if (d >= 0 && (m->distance < 0 || d < m->distance)) {
		m->meant = known;
		m->distance = d;
	}
}

/* The least distance of folded given to a run of known's words, each run
 * folded as given is. */
static unsigned word_run_distance(const char *fg, size_t gn, const char *known)
{
	size_t m = strlen(known);
	unsigned best = (unsigned)gn + NAME_MAX_LEN;
	for (size_t start = 0; start < m; start++) {
		if (start > 0 && known[start - 1] != '_')
			continue; /* runs start at a word */
		for (size_t end = start + 1; end <= m; end++) {
			if (end < m && known[end] != '_')
				continue; /* and end at one */
			char run[NAME_MAX_LEN + 1], fr[NAME_MAX_LEN + 1];
			if (end - start > NAME_MAX_LEN)
				break;
			memcpy(run, known + start, end - start);
			run[end - start] = '\0';
			size_t rn = folded(run, fr);
			if (!rn)
				continue;
			unsigned d = edit_distance(fg, gn, fr, rn);
			if (d < best)
				best = d;
		}
	}
	return best;
}

void e2bw_name_consider_nearest(e2bw_name_match *m, const char *given, const char *known)
{
	char fg[NAME_MAX_LEN + 1];
	size_t gn = strlen(given) <= NAME_MAX_LEN ? folded(given, fg) : 0;
	/* a name too long to measure is as far as can be: the first known name wins */
	int d = gn ? (int)word_run_distance(fg, gn, known) : 2 * NAME_MAX_LEN;
	if (m->distance < 0 || d < m->distance) {
		m->meant = known;
		m->distance = d;
	}
}
