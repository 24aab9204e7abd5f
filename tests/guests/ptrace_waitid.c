// A tracer that waits with waitid(2): a tracee's stop is reported with CLD_TRAPPED (its
// status the stop's signal), even without WSTOPPED; WNOWAIT leaves it to report again;
// the exit comes as CLD_EXITED. Prints the same natively and under detrun.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static void wait_id(const char *what, idtype_t type, pid_t pid, int options)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	int r = waitid(type, type == P_ALL ? 0 : pid, &si, options);
	printf("%s: waitid %d, signo %d, code %d, status 0x%x, the child %d\n", what, r,
	       si.si_signo, si.si_code, si.si_status, si.si_pid == pid);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(6);
	}
	wait_id("not consumed", P_ALL, pid, WEXITED | WNOWAIT);
	wait_id("stop", P_PID, pid, WEXITED);
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	wait_id("exit", P_PID, pid, WEXITED);
	return 0;
}
