#include "supervisor/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/filter.h"

#define TRACE_OPTIONS                                                                       \
	(PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE |                  \
	 PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE |               \
	 PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD)

static int executable_file(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (access(path, X_OK) < 0)
		return -EACCES;
	return 0;
}

int resolve_program(const char *prog, char *path, size_t size)
{
	if (strchr(prog, '/')) {
		snprintf(path, size, "%s", prog);
		return executable_file(path);
	}
	const char *dirs = getenv("PATH");
	if (!dirs)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	int found = -ENOENT;
	while (*dirs) {
		const char *end = strchrnul(dirs, ':');
		int len = (int)(end - dirs);
		snprintf(path, size, "%.*s/%s", len ? len : 1, len ? dirs : ".", prog);
		int err = executable_file(path);
		if (!err)
			return 0;
		if (err == -EACCES)
			found = err; /* keep looking, but remember a non-executable match */
		dirs = *end ? end + 1 : end;
	}
	return found;
}

static __attribute__((noreturn)) void child(const char *path, char **argv, int go_fd,
					     int err_fd, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	/* Address-space layout is part of the group's initial state: no randomization. */
	personality(ADDR_NO_RANDOMIZE);
	char go;
	if (read(go_fd, &go, 1) < 0)
		_exit(125);
	close(go_fd);
	int err = filter_install();
	if (err) {
		fprintf(stderr, "detrun: cannot install the seccomp filter: %s\n", strerror(-err));
		_exit(125);
	}
	execv(path, argv);
	int e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int launch_program(const char *path, char **argv, struct launch *out)
{
	int go[2], err[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return -errno;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(go[1]);
		close(err[0]);
		child(path, argv, go[0], err[1], parent);
	}
	close(go[0]);
	close(err[1]);
	if (ptrace(PTRACE_SEIZE, pid, 0, TRACE_OPTIONS) < 0) {
		int e = errno;
		kill(pid, SIGKILL);
		return -e;
	}
	close(go[1]); /* the child proceeds to install the filter and exec */
	out->pid = pid;
	out->exec_error_fd = err[0];
	return 0;
}

int launch_exec_error(struct launch *l)
{
	int e = 0;
	if (read(l->exec_error_fd, &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(l->exec_error_fd);
	return e;
}
