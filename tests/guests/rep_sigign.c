/* Prints which of the signals a shell leaves ignored for a background job or under nohup
 * are ignored at start: a replay must start the program the same way. */
#include <signal.h>
#include <stdio.h>

int main(void)
{
	const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGUSR1 };
	const char *names[] = { "HUP", "INT", "QUIT", "PIPE", "TERM", "USR1" };
	for (int i = 0; i < 6; i++) {
		struct sigaction sa;
		sigaction(sigs[i], NULL, &sa);
		printf("SIG%s %s\n", names[i], sa.sa_handler == SIG_IGN ? "ignored" : "default");
	}
	return 0;
}
