/* Prints the timestamps stat gives for each FILE, in nanoseconds: the program does not
 * change the files, so they must be the files' own, however soon after their last change
 * the run starts. */
#include <stdio.h>
#include <sys/stat.h>

static long long ns(struct timespec ts)
{
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		printf("%s mtime %lld ctime %lld\n", argv[i], ns(st.st_mtim), ns(st.st_ctim));
	}
	return 0;
}
