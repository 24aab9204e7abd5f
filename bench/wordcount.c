/* Phoenix-style word count: mmap a text file, split it at whitespace into THREADS slices,
 * count words per slice in private hash tables, merge, and print the total, the number of
 * distinct words and the ten most frequent ones. Usage: wordcount FILE THREADS. */
#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct entry {
	const char *word; /* points into the mapping; NULL = empty slot */
	uint32_t len;
	uint64_t count;
};

struct table {
	struct entry *slots;
	size_t cap, used;
};

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static void add(struct table *t, const char *w, uint32_t len, uint64_t count);

static void grow(struct table *t)
{
	struct table bigger = { calloc(t->cap * 2, sizeof(struct entry)), t->cap * 2, 0 };
	if (!bigger.slots)
		exit(1);
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].word)
			add(&bigger, t->slots[i].word, t->slots[i].len, t->slots[i].count);
	free(t->slots);
	*t = bigger;
}

static void add(struct table *t, const char *w, uint32_t len, uint64_t count)
{
	if (2 * (t->used + 1) > t->cap)
		grow(t);
	size_t i = hash(w, len) & (t->cap - 1);
	while (t->slots[i].word && (t->slots[i].len != len || memcmp(t->slots[i].word, w, len)))
		i = (i + 1) & (t->cap - 1);
	if (!t->slots[i].word) {
		t->slots[i].word = w;
		t->slots[i].len = len;
		t->used++;
	}
	t->slots[i].count += count;
}

struct job {
	const char *lo, *hi;
	struct table table;
	uint64_t words;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	j->table = (struct table){ calloc(1024, sizeof(struct entry)), 1024, 0 };
	const char *p = j->lo;
	while (p < j->hi) {
		while (p < j->hi && !isalpha((unsigned char)*p))
			p++;
		const char *w = p;
		while (p < j->hi && isalpha((unsigned char)*p))
			p++;
		if (p > w) {
			add(&j->table, w, (uint32_t)(p - w), 1);
			j->words++;
		}
	}
	return NULL;
}

static int by_count(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	int c = memcmp(a->word, b->word, a->len < b->len ? a->len : b->len);
	return c ? c : (int)a->len - (int)b->len;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: wordcount FILE THREADS\n");
		return 2;
	}
	int nthreads = atoi(argv[2]);
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (nthreads <= 0 || nthreads > 64 || fd < 0 || fstat(fd, &st) || st.st_size == 0)
		return 2;
	const char *text = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (text == MAP_FAILED)
		return 1;
	struct job jobs[64] = { { 0 } };
	pthread_t th[64];
	const char *start = text, *end = text + st.st_size;
	for (int t = 0; t < nthreads; t++) { /* cut at whitespace so no word is split */
		const char *cut = t == nthreads - 1 ? end : text + st.st_size * (t + 1) / nthreads;
		while (cut < end && isalpha((unsigned char)*cut))
			cut++;
		if (cut < start)
			cut = start;
		jobs[t].lo = start;
		jobs[t].hi = cut;
		start = cut;
		if (pthread_create(&th[t], NULL, worker, &jobs[t]))
			return 1;
	}
	struct table all = { calloc(1024, sizeof(struct entry)), 1024, 0 };
	uint64_t words = 0;
	for (int t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		words += jobs[t].words;
		for (size_t i = 0; i < jobs[t].table.cap; i++)
			if (jobs[t].table.slots[i].word)
				add(&all, jobs[t].table.slots[i].word, jobs[t].table.slots[i].len,
				    jobs[t].table.slots[i].count);
	}
	struct entry *list = malloc(all.used * sizeof *list);
	size_t n = 0;
	for (size_t i = 0; i < all.cap; i++)
		if (all.slots[i].word)
			list[n++] = all.slots[i];
	qsort(list, n, sizeof *list, by_count);
	printf("wordcount words=%llu distinct=%zu top:", (unsigned long long)words, n);
	for (size_t i = 0; i < n && i < 10; i++)
		printf(" %.*s=%llu", (int)list[i].len, list[i].word,
		       (unsigned long long)list[i].count);
	printf("\n");
	return 0;
}
