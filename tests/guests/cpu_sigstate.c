/* The signal state a program sets must survive detrun's traps on RDTSC (SIGSEGV) and on
 * patched CPUID (SIGILL). Prints each signal's blocked bit and action at checkpoints; the
 * output must be the same natively and under detrun.
 *   cpu_sigstate              blocks SIGSEGV and SIGILL, ignores SIGSEGV, then runs itself
 *                             again through exec (the loader reads the TSC and CPUID under
 *                             the inherited mask), then the in-process checks
 *   cpu_sigstate inproc       handlers, blocked, ignored, SA_RESETHAND, with rdtsc/cpuid */
#include <cpuid.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
	handled++;
}

static const char *action(int sig)
{
	struct sigaction sa;
	sigaction(sig, NULL, &sa);
	if (sa.sa_handler == SIG_DFL)
		return "default";
	if (sa.sa_handler == SIG_IGN)
		return "ignore";
	return sa.sa_handler == on_signal
		       ? (sa.sa_flags & SA_RESETHAND ? "handler/resethand" : "handler")
		       : "other";
}

static void show(const char *when)
{
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("%-28s SIGSEGV blocked %d %-17s SIGILL blocked %d %s\n", when,
	       sigismember(&now, SIGSEGV), action(SIGSEGV), sigismember(&now, SIGILL),
	       action(SIGILL));
}

static void traps(void)
{
	unsigned a, b, c, d;
	volatile unsigned long long tsc = __rdtsc();
	__cpuid(0, a, b, c, d);
	(void)tsc;
}

static void set(int sig, void (*h)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

static void block(int sig, int how)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(how, &s, NULL);
}

static int in_process(void)
{
	show("after exec");
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	set(SIGSEGV, SIG_DFL, 0);
	set(SIGILL, SIG_DFL, 0);
	traps();
	show("default, unblocked");
	block(SIGSEGV, SIG_BLOCK);
	block(SIGILL, SIG_BLOCK);
	traps();
	show("default, blocked");
	set(SIGSEGV, on_signal, 0);
	set(SIGILL, on_signal, SA_RESETHAND);
	traps();
	show("handlers, blocked");
	sigprocmask(SIG_SETMASK, &none, NULL);
	traps();
	show("handlers, unblocked");
	set(SIGSEGV, SIG_IGN, 0);
	set(SIGILL, SIG_IGN, 0);
	traps();
	show("ignored, unblocked");
	block(SIGSEGV, SIG_BLOCK);
	traps();
	show("ignored, SIGSEGV blocked");
	/* Real signals still behave: an ignored one is dropped, a handler runs once with
	 * SA_RESETHAND and then the action is the default. */
	sigprocmask(SIG_SETMASK, &none, NULL);
	raise(SIGSEGV);
	set(SIGILL, on_signal, SA_RESETHAND);
	raise(SIGILL);
	show("after raise");
	printf("handler ran %d times\n", (int)handled);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "inproc"))
		return in_process();
	block(SIGSEGV, SIG_BLOCK);
	block(SIGILL, SIG_BLOCK);
	set(SIGSEGV, SIG_IGN, 0);
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "inproc", (char *)NULL);
	perror("exec");
	return 1;
}
