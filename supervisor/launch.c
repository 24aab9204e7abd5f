#include "supervisor/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

static __attribute__((noreturn)) void run_program(const char *path, char **argv, int go_fd,
						  int err_fd, bool shim)
{
	/* Address-space layout is part of the group's initial state: no randomization. */
	personality(ADDR_NO_RANDOMIZE);
	/* rdtsc and rdtscp fault, and detrun answers them from the virtual clock. The setting
	 * is inherited by every thread and process and survives exec. */
	prctl(PR_SET_TSC, PR_TSC_SIGSEGV);
	char go;
	if (read(go_fd, &go, 1) < 0)
		_exit(125);
	close(go_fd);
	int err = filter_install(shim);
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

/* ---- the namespace's init ------------------------------------------------------------ */

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0) {
			/* best effort: the file keeps the host's view */
		}
		close(fd);
	}
}

/* Covers `target` with a file holding `text` (a bind mount of an unlinked temporary). */
static void cover_file(const char *target, const char *text)
{
	char tmp[] = "/tmp/detrun-view-XXXXXX";
	int fd = mkstemp(tmp);
	if (fd < 0)
		return;
	size_t len = strlen(text);
	bool ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	if (ok)
		mount(tmp, target, NULL, MS_BIND, NULL);
	unlink(tmp);
}

static void host_cpu_flags(char *flags, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096];
	snprintf(flags, size, "fpu tsc cx8 cmov mmx fxsr sse sse2 syscall nx lm");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) && strchr(line, ':')) {
			snprintf(flags, size, "%s", strchr(line, ':') + 2);
			flags[strcspn(flags, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
}

/* The CPU count a program can see: the files libc and runtimes read. The feature flags are
 * the host's, so code that picks instructions from them stays safe. */
static void cover_cpu_views(int cpus)
{
	char range[32], flags[4096];
	if (cpus == 1)
		snprintf(range, sizeof(range), "0\n");
	else
		snprintf(range, sizeof(range), "0-%d\n", cpus - 1);
	cover_file("/sys/devices/system/cpu/online", range);
	cover_file("/sys/devices/system/cpu/possible", range);
	cover_file("/sys/devices/system/cpu/present", range);
	host_cpu_flags(flags, sizeof(flags));
	size_t cap = (size_t)cpus * 5000 + 1, len = 0;
	char *info = malloc(cap);
	if (!info)
		return;
	for (int i = 0; i < cpus; i++)
		len += (size_t)snprintf(info + len, cap - len,
					"processor\t: %d\nvendor_id\t: detrun\ncpu family\t: 6\n"
					"model\t\t: 0\nmodel name\t: detrun virtual CPU\n"
					"stepping\t: 0\ncpu MHz\t\t: 1000.000\n"
					"cache size\t: 1024 KB\nphysical id\t: 0\nsiblings\t: %d\n"
					"core id\t\t: %d\ncpu cores\t: %d\napicid\t\t: %d\n"
					"fpu\t\t: yes\nflags\t\t: %s\nbogomips\t: 2000.00\n"
					"clflush size\t: 64\ncache_alignment\t: 64\n"
					"address sizes\t: 46 bits physical, 48 bits virtual\n\n",
					i, cpus, i, cpus, i, flags);
	cover_file("/proc/cpuinfo", info);
	free(info);
	cover_file("/proc/loadavg", "0.00 0.00 0.00 1/1 1\n");
	cover_file("/proc/uptime", "3600.00 3600.00\n");
}

static void enter_private_views(const struct launch_options *lo)
{
	if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC) < 0)
		return;
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	/* A /proc of the new PID namespace: /proc/self and /proc/PID use the group's pids. */
	mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	cover_cpu_views(lo->cpus);
	sethostname(DETRUN_HOSTNAME, strlen(DETRUN_HOSTNAME));
	setdomainname("(none)", 6);
	write_file("/proc/sys/kernel/hostname", DETRUN_HOSTNAME);
}

/* Sends this process's credentials: the receiver's kernel translates the pid into the
 * receiver's namespace, which is how detrun learns the program's host pid. */
static void send_pid(int sock)
{
	struct ucred cred = { getpid(), getuid(), getgid() };
	char control[CMSG_SPACE(sizeof(cred))] = { 0 };
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
			      .msg_controllen = sizeof(control) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(cred));
	memcpy(CMSG_DATA(c), &cred, sizeof(cred));
	if (sendmsg(sock, &msg, 0) < 0)
		_exit(125);
}

static pid_t receive_pid(int sock)
{
	int on = 1;
	setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
	struct ucred cred;
	char control[CMSG_SPACE(sizeof(cred))];
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
			      .msg_controllen = sizeof(control) };
	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			return cred.pid;
		}
	return -1;
}

/* pid 1 of the namespace: starts the program as pid 2, then reaps whatever is orphaned
 * until nothing is left. It is not traced: it is not part of the group. */
static __attribute__((noreturn)) void namespace_init(const char *path, char **argv,
						      const struct launch_options *lo,
						      int go_fd, int err_fd, int sock)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	enter_private_views(lo);
	pid_t pid = fork();
	if (pid < 0)
		_exit(125);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		send_pid(sock);
		close(sock);
		run_program(path, argv, go_fd, err_fd, lo->shim_intercepts);
	}
	close(sock);
	close(go_fd);
	close(err_fd);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	_exit(0);
}

int launch_program(const char *path, char **argv, const struct launch_options *lo,
		   struct launch *out)
{
	int go[2], err[2], sock[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0)
		return -errno;
	*out = (struct launch){ .exec_error_fd = err[0] };
	out->namespaced = lo->namespaces && unshare(CLONE_NEWPID) == 0;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* The group's own process group (supervisor/foreground.h); the namespace's
		 * init leads it and the program inherits it. */
		setpgid(0, 0);
		close(go[1]);
		close(err[0]);
		close(sock[0]);
		if (out->namespaced)
			namespace_init(path, argv, lo, go[0], err[1], sock[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(125);
		run_program(path, argv, go[0], err[1], lo->shim_intercepts);
	}
	setpgid(pid, pid); /* as the child does: whichever runs first, it is done */
	close(go[0]);
	close(err[1]);
	close(sock[1]);
	out->pid = pid;
	if (out->namespaced) {
		out->init_pid = pid;
		out->pid = receive_pid(sock[0]);
	}
	close(sock[0]);
	if (out->pid <= 0 || ptrace(PTRACE_SEIZE, out->pid, 0, TRACE_OPTIONS) < 0) {
		int e = out->pid <= 0 ? ECHILD : errno;
		kill(pid, SIGKILL);
		return -e;
	}
	close(go[1]); /* the program proceeds to install the filter and exec */
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
