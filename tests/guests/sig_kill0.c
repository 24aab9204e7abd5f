/* kill(0, sig) reaches the program's own process group: the program handles each of these
 * signals itself. Under detrun the group must be a process group of its own, so none of
 * them reaches detrun (or the shell around it). Prints "sig_kill0: 8 handled". */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_signal(int sig)
{
	got = sig;
}

int main(void)
{
	int sigs[] = { SIGABRT, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS, SIGXCPU };
	int handled = 0;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(sigs[i], &sa, NULL);
		got = 0;
		if (kill(0, sigs[i]) != 0) {
			perror("kill");
			return 1;
		}
		if (got != sigs[i]) {
			printf("signal %d not handled\n", sigs[i]);
			return 1;
		}
		handled++;
	}
	printf("sig_kill0: %d handled\n", handled);
	return 0;
}
