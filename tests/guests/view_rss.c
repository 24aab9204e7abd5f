/* Maps FILE, touches its first page and prints the resident set as /proc/self/stat,
 * statm and status show it. The kernel's fault-around maps the file's neighbouring pages
 * only if they are in the page cache, so natively the figures follow whatever the machine
 * did with that cache before the run; under detrun they must not. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void print_file_field(const char *path, const char *prefix)
{
	char line[512];
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!prefix || !strncmp(line, prefix, strlen(prefix)))
			printf("%s: %s", path, line);
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: view_rss FILE\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	volatile const char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* No readahead: a cold file gets only the page touched, a cached one its neighbours. */
	madvise((void *)p, (size_t)st.st_size, MADV_RANDOM);
	printf("first byte %d\n", p[0]);
	char stat[1024] = "";
	FILE *f = fopen("/proc/self/stat", "r");
	if (f && fgets(stat, sizeof(stat), f)) {
		char *s = strrchr(stat, ')');
		unsigned long long rss = 0;
		for (int field = 2; s && field < 24; field++)
			s = strchr(s + 1, ' ');
		if (s)
			sscanf(s + 1, "%llu", &rss);
		printf("/proc/self/stat rss: %llu\n", rss);
	}
	if (f)
		fclose(f);
	print_file_field("/proc/self/statm", NULL);
	print_file_field("/proc/self/status", "VmRSS");
	print_file_field("/proc/self/status", "RssFile");
	return 0;
}
