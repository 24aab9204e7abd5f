/* e2e guest: producer/consumer hand-offs through a small bounded buffer protected by a
 * pthread mutex and two condition variables. Several producers and consumers; every
 * hand-off is logged as "consumer<-producer.item". Signature: the hand-off order and each
 * consumer's checksum. Natively the order varies; under detrun it must not.
 * usage: mutex_condvar [PRODUCERS] [CONSUMERS] [ITEMS_PER_PRODUCER] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selfcheck.h"

#define CAP 3
#define MAXT 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int buf[CAP], head, count, producers_left;
static int nprod, ncons, items;

static char *log_buf;
static size_t log_len, log_cap;
static long sums[MAXT], taken[MAXT];

static void log_add(const char *s)
{
	size_t n = strlen(s);
	if (log_len + n + 1 > log_cap) {
		log_cap = (log_cap + n + 1) * 2;
		log_buf = realloc(log_buf, log_cap);
	}
	memcpy(log_buf + log_len, s, n + 1);
	log_len += n;
}

/* The buffer is a FIFO: every item is taken once, each producer's in the order it made
 * them, and the totals are known. */
static int next_of[MAXT];

static void check_handoff(int v)
{
	int p = v / 1000, i = v % 1000;
	CHECK(p >= 0 && p < nprod && i == next_of[p], "took p%d.%d, want p%d.%d", p, i, p,
	      p >= 0 && p < nprod ? next_of[p] : -1);
	next_of[p]++;
}

static void check_totals(long n, long total)
{
	long want_sum = 0;
	for (int p = 0; p < nprod; p++)
		want_sum += (long)items * p * 1000 + (long)items * (items - 1) / 2;
	CHECK(n == (long)nprod * items, "%ld items taken, want %ld", n, (long)nprod * items);
	CHECK(total == want_sum, "sum %ld, want %ld", total, want_sum);
}

static void *producer(void *arg)
{
	int id = (int)(long)arg;
	for (int i = 0; i < items; i++) {
		/* a little private work between items, so the producers race */
		volatile unsigned x = (unsigned)(id * 7919 + i);
		for (int k = 0; k < 2000; k++)
			x = x * 1103515245u + 12345u;
		pthread_mutex_lock(&lock);
		while (count == CAP)
			pthread_cond_wait(&not_full, &lock);
		buf[(head + count) % CAP] = id * 1000 + i;
		count++;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	if (--producers_left == 0)
		pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *consumer(void *arg)
{
	int id = (int)(long)arg;
	char entry[64];
	for (;;) {
		pthread_mutex_lock(&lock);
		while (count == 0 && producers_left > 0)
			pthread_cond_wait(&not_empty, &lock);
		if (count == 0) {
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		int v = buf[head];
		head = (head + 1) % CAP;
		count--;
		check_handoff(v);
		snprintf(entry, sizeof entry, "c%d<-p%d.%d ", id, v / 1000, v % 1000);
		log_add(entry);
		sums[id] += v;
		taken[id]++;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&lock);
	}
}

int main(int argc, char **argv)
{
	nprod = argc > 1 ? atoi(argv[1]) : 3;
	ncons = argc > 2 ? atoi(argv[2]) : 3;
	items = argc > 3 ? atoi(argv[3]) : 200;
	if (nprod < 1 || nprod > MAXT || ncons < 1 || ncons > MAXT || items < 1 || items > 999) {
		fprintf(stderr, "usage: mutex_condvar [PRODUCERS] [CONSUMERS] [ITEMS 1..999]\n");
		return 2;
	}
	producers_left = nprod;
	pthread_t p[MAXT], c[MAXT];
	for (long i = 0; i < ncons; i++)
		CHECK(pthread_create(&c[i], NULL, consumer, (void *)i) == 0,
		      "pthread_create failed");
	for (long i = 0; i < nprod; i++)
		CHECK(pthread_create(&p[i], NULL, producer, (void *)i) == 0,
		      "pthread_create failed");
	for (int i = 0; i < nprod; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < ncons; i++)
		pthread_join(c[i], NULL);
	long total = 0, n = 0;
	for (int i = 0; i < ncons; i++) {
		printf("consumer %d took %ld items, sum %ld\n", i, taken[i], sums[i]);
		total += sums[i];
		n += taken[i];
	}
	check_totals(n, total);
	printf("total %ld items, sum %ld\n", n, total);
	/* the hand-off order, 10 entries a line */
	int col = 0;
	for (char *s = log_buf ? strtok(log_buf, " ") : NULL; s; s = strtok(NULL, " ")) {
		printf("%s%s", s, ++col % 10 ? " " : "\n");
	}
	if (col % 10)
		printf("\n");
	return 0;
}
