/*
 * Replays a fuzzing corpus through LLVMFuzzerTestOneInput with the normal compiler (no
 * libFuzzer, no clang): `log_corpus_replay DIR...` runs every regular file of every DIR
 * once. A failing input aborts the run (the fuzz target checks its invariants with abort),
 * so reaching the end means every input passed. Exits non-zero if a directory is missing,
 * unreadable or holds no file.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			uint8_t *bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	int bad = !buf || ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return -1;
	}
	/* An exact-size copy, as libFuzzer gives, so an overread past the input is a real
	 * overread under a sanitizer. */
	*data = malloc(n ? n : 1);
	if (!*data) {
		free(buf);
		return -1;
	}
	memcpy(*data, buf, n);
	free(buf);
	*size = n;
	return 0;
}

/* Runs every regular file of dir; the number run, or -1. */
static long run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "log_corpus_replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **bigger = realloc(names, cap * sizeof(*names));
			if (!bigger) {
				fprintf(stderr, "log_corpus_replay: out of memory\n");
				exit(2);
			}
			names = bigger;
		}
		names[n] = strdup(e->d_name);
		if (!names[n]) {
			fprintf(stderr, "log_corpus_replay: out of memory\n");
			exit(2);
		}
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);

	long run = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			uint8_t *data;
			size_t size;
			if (read_file(path, &data, &size)) {
				fprintf(stderr, "log_corpus_replay: %s: cannot read\n", path);
				exit(2);
			}
			/* Named first, so a crash below is attributed to its input. */
			fprintf(stderr, "running %s (%zu bytes)\n", path, size);
			LLVMFuzzerTestOneInput(data, size);
			free(data);
			run++;
		}
		free(names[i]);
	}
	free(names);
	if (run == 0) {
		fprintf(stderr, "log_corpus_replay: %s: no input files\n", dir);
		return -1;
	}
	return run;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: log_corpus_replay DIR...\n");
		return 2;
	}
	long passed = 0;
	for (int i = 1; i < argc; i++) {
		long n = run_dir(argv[i]);
		if (n < 0)
			return 1;
		passed += n;
	}
	printf("%ld passed, 0 failed\n", passed);
	return 0;
}
