/* Phoenix-style histogram: count the red, green and blue values of a 24-bit BMP file.
 * Usage: histogram FILE THREADS. Each thread pread()s its share of the pixel array in
 * 1 MiB blocks (so the workload also makes some file syscalls) and fills private
 * histograms; the main thread merges them and prints a digest. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK (3 << 19) /* 1.5 MiB: a whole number of pixels */

struct job {
	int fd;
	off_t lo, hi; /* byte range, a multiple of 3 apart */
	uint64_t hist[3][256];
};

static void *worker(void *arg)
{
	struct job *j = arg;
	unsigned char *buf = malloc(BLOCK);
	if (!buf)
		exit(1);
	for (off_t off = j->lo; off < j->hi;) {
		size_t want = (size_t)(j->hi - off) < BLOCK ? (size_t)(j->hi - off) : BLOCK;
		ssize_t got = pread(j->fd, buf, want, off);
		if (got <= 0 || got % 3) {
			fprintf(stderr, "histogram: short read\n");
			exit(1);
		}
		for (ssize_t i = 0; i < got; i += 3) { /* BMP pixels are stored B, G, R */
			j->hist[2][buf[i]]++;
			j->hist[1][buf[i + 1]]++;
			j->hist[0][buf[i + 2]]++;
		}
		off += got;
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: histogram FILE.bmp THREADS\n");
		return 2;
	}
	int nthreads = atoi(argv[2]);
	if (nthreads <= 0 || nthreads > 64)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	unsigned char hdr[54];
	if (fd < 0 || fstat(fd, &st) || pread(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr ||
	    memcmp(hdr, "BM", 2)) {
		fprintf(stderr, "histogram: %s is not a BMP file\n", argv[1]);
		return 1;
	}
	uint32_t data_off;
	memcpy(&data_off, hdr + 10, 4);
	off_t pixels = (st.st_size - data_off) / 3;
	struct job *jobs = calloc(nthreads, sizeof *jobs);
	pthread_t th[64];
	for (int t = 0; t < nthreads; t++) {
		jobs[t].fd = fd;
		jobs[t].lo = data_off + 3 * (pixels * t / nthreads);
		jobs[t].hi = data_off + 3 * (pixels * (t + 1) / nthreads);
		if (pthread_create(&th[t], NULL, worker, &jobs[t]))
			return 1;
	}
	uint64_t hist[3][256] = { { 0 } };
	for (int t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		for (int c = 0; c < 3; c++)
			for (int v = 0; v < 256; v++)
				hist[c][v] += jobs[t].hist[c][v];
	}
	uint64_t digest = 1469598103934665603ull; /* FNV-1a over the three histograms */
	for (int c = 0; c < 3; c++)
		for (int v = 0; v < 256; v++)
			digest = (digest ^ hist[c][v]) * 1099511628211ull;
	printf("histogram pixels=%lld red[0]=%llu green[128]=%llu blue[255]=%llu digest=%016llx\n",
	       (long long)pixels, (unsigned long long)hist[0][0], (unsigned long long)hist[1][128],
	       (unsigned long long)hist[2][255], (unsigned long long)digest);
	return 0;
}
