/* replay_main.c — runs a fuzz target over corpus files without libFuzzer,
 * so CI replays the committed corpora with any compiler (under ASan/UBSan):
 *   replay_<target> FILE_OR_DIR...   exit 0 when every input ran clean. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	uint8_t *data = NULL;
	size_t len = 0, cap = 0, n;
	uint8_t chunk[65536];
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (len + n > cap) {
			cap = (len + n) * 2;
			uint8_t *grown = realloc(data, cap);
			if (!grown)
				abort();
			data = grown;
		}
		memcpy(data + len, chunk, n);
		len += n;
	}
	fclose(f);
	/* a copy of exactly len bytes, so ASan sees any read past the input */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact)
		abort();
	if (len)
		memcpy(exact, data, len);
	free(data);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	int count = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
			return 2;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i]) != 0;
			count++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
			bad |= run_file(path) != 0;
			count++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", count);
	return bad ? 1 : 0;
}
