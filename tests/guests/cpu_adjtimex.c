/* Reads the clock through adjtimex and clock_adjtime (no clock_gettime), and tries
 * clock_adjtime on a clock that cannot be adjusted. With "set", also tries to set the
 * tick length to its current value (a change of nothing, but a change request). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

static void show(const char *what, int r, const struct timex *tx)
{
	if (r < 0) {
		printf("%s: %s\n", what, strerror(errno));
		return;
	}
	printf("%s: state %d time %lld.%06ld offset %ld freq %ld status %#x tick %ld\n", what, r,
	       (long long)tx->time.tv_sec, (long)tx->time.tv_usec, tx->offset, tx->freq, tx->status,
	       tx->tick);
}

int main(int argc, char **argv)
{
	struct timex tx;
	memset(&tx, 0, sizeof(tx));
	show("adjtimex", adjtimex(&tx), &tx);
	memset(&tx, 0, sizeof(tx));
	show("clock_adjtime realtime", (int)syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx), &tx);
	memset(&tx, 0, sizeof(tx));
	show("clock_adjtime monotonic", (int)syscall(SYS_clock_adjtime, CLOCK_MONOTONIC, &tx), &tx);
	if (argc > 1 && !strcmp(argv[1], "set")) {
		memset(&tx, 0, sizeof(tx));
		adjtimex(&tx);
		long tick = tx.tick;
		memset(&tx, 0, sizeof(tx));
		tx.modes = ADJ_TICK;
		tx.tick = tick;
		show("set tick", adjtimex(&tx), &tx);
	}
	return 0;
}
