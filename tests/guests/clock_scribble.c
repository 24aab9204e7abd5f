/* A program that writes over its vDSO's data page and tries to shrink the memory behind
 * it: under detrun that page ([vvar] in its maps) is detrun's virtual clock, shared with
 * detrun. Writing it may change the program's own clock reads until its next event,
 * nothing else; shrinking it (through /proc/self/map_files) is refused by its seal, so
 * detrun's next write to it cannot fault. Prints what it read and what it was told.
 * Only meaningful under detrun: natively [vvar] is the kernel's, and read-only. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long start = 0, end = 0;
	while (maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "[vvar]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	if (maps)
		fclose(maps);
	if (!start) {
		printf("no [vvar]\n");
		return 1;
	}
	printf("before: %lld\n", mono());
	/* The layout of engine/vdso_data.h: the monotonic time first, then the epoch, the
	 * boot time and the count of reads. */
	volatile int64_t *page = (volatile int64_t *)start;
	page[0] = 42;
	page[3] = 0;
	printf("after writing 42: %lld\n", mono());
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", start, end);
	int fd = open(path, O_RDWR);
	if (fd < 0) {
		printf("open map_files: %s\n", strerror(errno));
	} else {
		printf("truncate: %s\n", ftruncate(fd, 0) ? strerror(errno) : "done");
		close(fd);
	}
	struct timespec ms = { 0, 1000000 };
	nanosleep(&ms, NULL); /* an event: detrun writes the page again */
	long long after = mono();
	printf("after a sleep: %s\n", after >= 3600000000000LL ? "virtual again" : "STILL WRONG");
	printf("at %lld\n", after);
	return 0;
}
