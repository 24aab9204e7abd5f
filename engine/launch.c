#include "engine/launch.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdint.h>
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
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "scheduler/vclock.h"
#include "engine/file_view.h"
#include "engine/filter.h"

#define TRACE_OPTIONS \
	(PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | \
	 PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | \
	 PTRACE_O_TRACESYSGOOD)

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

/* ---- what the program may reach ------------------------------------------------------
 *
 * No process outside the group may be reachable by it: not the namespace's reaper, not
 * detrun, not a shim program. Every kernel route into another process's memory or
 * descriptors (/proc/PID/mem, fd/, ns/, root, cwd; process_vm_readv/writev; pidfd_getfd;
 * ptrace; kcmp) is gated by ptrace_may_access, which refuses a caller without
 * CAP_SYS_PTRACE a target that is non-dumpable or holds capabilities the caller lacks.
 * detrun and the reaper are non-dumpable (and keep their capabilities), and the program
 * runs without CAP_SYS_PTRACE: dropped from the bounding, permitted, effective,
 * inheritable and ambient sets, so no exec gives it back, and a user namespace the program
 * creates gives it only over that namespace, not over detrun's processes. Members stay
 * reachable from each other as natively (same user and capabilities, dumpable). Opens do
 * not stop at the filter, so this gate is what closes /proc/PID/... whatever path names
 * it; the calls that name a pid are confined to members at their seccomp stop as well
 * (sys_reach.c), which also covers signals and the processes this gate cannot protect (a
 * shim program of the same user under --no-namespaces). The kernel still lets a program
 * with CAP_SYS_ADMIN read a non-dumpable process's maps and environ: detrun refuses every
 * open of a non-member's /proc/PID files at its exit (sys_kernfs.c).
 * Tracing and filtering the reaper like a member was the other way: it would make pid 1
 * a task of the schedule, its wait() an event the group could not run without, and it
 * would still leave detrun and shim programs to guard this way. */

static int drop_ptrace_capability(void)
{
	struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	/* Fails without CAP_SETPCAP (an unprivileged run): checked below by the sets. */
	prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_PTRACE, 0, 0);
	if (syscall(SYS_capget, &head, data) < 0)
		return -errno;
	uint32_t bit = 1u << CAP_SYS_PTRACE; /* CAP_SYS_PTRACE < 32: word 0 */
	if (!((data[0].permitted | data[0].effective | data[0].inheritable) & bit))
		return 0;
	data[0].permitted &= ~bit;
	data[0].effective &= ~bit;
	data[0].inheritable &= ~bit;
	if (syscall(SYS_capset, &head, data) < 0)
		return -errno;
	if (prctl(PR_CAPBSET_READ, CAP_SYS_PTRACE, 0, 0, 0) == 1)
		return -EPERM; /* it could come back with the next exec */
	return 0;
}

static __attribute__((noreturn)) void run_program(const char *path, char **argv, int go_fd,
						  int err_fd, const struct launch_options *lo)
{
	/* Address-space layout is part of the group's initial state: no randomization. */
	personality((unsigned)personality(0xffffffff) | ADDR_NO_RANDOMIZE);
	/* rdtsc and rdtscp fault, and detrun answers them from the virtual clock. The setting
	 * is inherited by every thread and process and survives exec. */
	prctl(PR_SET_TSC, PR_TSC_SIGSEGV);
	char go;
	int err = drop_ptrace_capability();
	if (err) {
		fprintf(stderr, "detrun: cannot drop CAP_SYS_PTRACE from the program: %s\n",
			strerror(-err));
		_exit(125);
	}
	if (read(go_fd, &go, 1) < 0)
		_exit(125);
	close(go_fd);
	/* detrun has seized this process with PTRACE_O_EXITKILL, which now kills it if detrun
	 * dies (and in a PID namespace, the reaper's death kills the whole namespace). The
	 * death signal set at fork only covered the moment before; cleared, so the program
	 * finds its own setting (PR_GET_PDEATHSIG 0) as it would natively. */
	prctl(PR_SET_PDEATHSIG, 0);
	err = filter_install(lo->shim_intercepts, lo->parallel);
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

/* The files that cover host views live on a small tmpfs, mounted over an existing
 * directory while the covers are made and detached afterwards: the bind mounts keep it,
 * and mountinfo shows the same names on every run (no random temporary names). */
static const char *view_stage;

static bool stage_views(void)
{
	static const char *const dirs[] = { "/tmp", "/dev", "/mnt", "/run" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mount("detrun-views", dirs[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=1m,mode=0755") == 0) {
			view_stage = dirs[i];
			return true;
		}
	return false;
}

static void unstage_views(void)
{
	umount2(view_stage, MNT_DETACH);
}

/* Covers `target` with a file holding `text`, a bind mount of a file on the stage named
 * after the target. */
static void cover_file(const char *target, const char *text)
{
	char path[256];
	int n = snprintf(path, sizeof(path), "%s/", view_stage);
	for (const char *c = target + 1; *c && n < (int)sizeof(path) - 1; c++)
		path[n++] = *c == '/' ? '-' : *c;
	path[n] = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0)
		return;
	size_t len = strlen(text);
	bool ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	if (ok)
		mount(path, target, NULL, MS_BIND, NULL);
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
	char flags[4096];
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

/* The machine sysinfo(2) and uname(2) describe (sys_identity.c): 8 GiB, half of it free,
 * every CPU idle since the group's boot an hour before its start (/proc/uptime), at the
 * virtual epoch. The real files are absent (sys_kernfs.c). */
static void cover_machine_views(int cpus)
{
	cover_file("/proc/meminfo", "MemTotal:        8388608 kB\nMemFree:         4194304 kB\n"
				    "MemAvailable:    4194304 kB\nBuffers:               0 kB\n"
				    "Cached:                0 kB\nSwapCached:            0 kB\n"
				    "Active:                0 kB\nInactive:              0 kB\n"
				    "SwapTotal:             0 kB\nSwapFree:              0 kB\n"
				    "Dirty:                 0 kB\nWriteback:             0 kB\n"
				    "AnonPages:             0 kB\nMapped:                0 kB\n"
				    "Shmem:                 0 kB\nCommitLimit:     4194304 kB\n"
				    "Committed_AS:          0 kB\nHugePages_Total:       0\n"
				    "HugePages_Free:        0\nHugepagesize:       2048 kB\n");
	long long idle = 360000; /* one hour in USER_HZ ticks */
	size_t cap = (size_t)cpus * 64 + 512, len = 0;
	char *stat = malloc(cap);
	if (!stat)
		return;
	len += (size_t)snprintf(stat, cap, "cpu  0 0 0 %lld 0 0 0 0 0 0\n", idle * cpus);
	for (int i = 0; i < cpus; i++)
		len += (size_t)snprintf(stat + len, cap - len, "cpu%d 0 0 0 %lld 0 0 0 0 0 0\n", i,
					idle);
	snprintf(stat + len, cap - len,
		 "intr 0\nctxt 0\nbtime %lld\nprocesses 1\nprocs_running 1\n"
		 "procs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
		 (long long)(vclock_epoch_ns() / 1000000000LL));
	cover_file("/proc/stat", stat);
	free(stat);
	cover_file("/proc/version", "Linux version 6.1.0-detrun (detrun) #1 SMP PREEMPT_DYNAMIC "
				    "detrun\n");
	cover_file("/proc/sys/kernel/osrelease", "6.1.0-detrun\n");
	cover_file("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC detrun\n");
}

/* The group's /sys: an empty file system but for the CPU count files libc reads. The
 * host's sysfs (and the cgroup, debug and tracing file systems under it) is covered, and
 * absent wherever the program mounts it again (sys_kernfs.c). */
static void private_sys(int cpus)
{
	if (mount("detrun-sys", "/sys", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=64k,mode=0555") < 0) {
		fprintf(stderr, "detrun: warning: cannot give the group its own /sys (%s)\n",
			strerror(errno));
		return;
	}
	static const char *const dirs[] = { "/sys/devices", "/sys/devices/system",
					    "/sys/devices/system/cpu" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		mkdir(dirs[i], 0555);
	char range[32];
	snprintf(range, sizeof(range), cpus == 1 ? "0\n" : "0-%d\n", cpus - 1);
	static const char *const files[] = { "online", "possible", "present" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[64];
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s", files[i]);
		close(open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444));
		write_file(path, range);
	}
	mount(NULL, "/sys", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

void unescape_mount_point(char *s)
{
	char *out = s;
	for (char *in = s; *in; in++) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' &&
		    in[3] >= '0' && in[3] <= '7') {
			*out++ = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
			in += 3;
		} else {
			*out++ = *in;
		}
	}
	*out = 0;
}

/* The mount points of every proc file system in this mount namespace, deepest last. */
static int proc_mount_points(char points[][256], int max)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char point[256], *dash = strstr(line, " - ");
		if (!dash || strncmp(dash + 3, "proc ", 5) ||
		    sscanf(line, "%*s %*s %*s %*s %255s", point) != 1)
			continue;
		unescape_mount_point(point);
		if (n < max)
			snprintf(points[n++], 256, "%s", point);
	}
	if (f)
		fclose(f);
	return n;
}

/* Every proc file system the namespace inherited shows the host's processes (detrun, the
 * shim program, everything else): one the program unmounts, or one mounted elsewhere,
 * would give it their /proc/PID. They are detached, not covered, before the group's own
 * /proc is mounted; a proc file system the program mounts later is of its own PID
 * namespace. (Submounts go with their parent: their own umount then fails, harmlessly.)
 * Returns how many are still mounted: locked ones, in a user namespace's container,
 * which the program cannot unmount either. */
static int detach_host_proc(void)
{
	char points[64][256];
	int n = proc_mount_points(points, 64);
	for (int i = n - 1; i >= 0; i--)
		umount2(points[i], MNT_DETACH);
	return proc_mount_points(points, 64);
}

/* POSIX shared memory and semaphores live in /dev/shm under names a seeded program picks
 * the same on every run: the host's would show another run's leftovers (a killed server's
 * segments, which change what the next run sees) and let the group share memory with
 * processes outside it. The group gets an empty one of its own. */
static void private_shm(void)
{
	struct stat st;
	if (stat("/dev/shm", &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	if (mount("detrun-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
		fprintf(stderr,
			"detrun: warning: cannot give the group its own /dev/shm (%s): "
			"it shares the host's\n",
			strerror(errno));
}

/* Named network namespaces (ip netns add) are nsfs mounts under /run/netns that other
 * processes add and remove at any time (the replicate tests' clusters do): the group's
 * mount table, a copy of the host's at its start, would show whichever were there then.
 * The group gets an empty, read-only /run/netns instead (the subtree detached first, so
 * that none of those mounts stays listed under it). */
static void private_netns_dir(void)
{
	struct stat st;
	if (stat("/run/netns", &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	umount2("/run/netns", MNT_DETACH); /* EINVAL where it is no mount point: none below */
	if (mount("detrun-netns", "/run/netns", "tmpfs",
		  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=755") < 0)
		fprintf(stderr,
			"detrun: warning: cannot hide the host's named network namespaces (%s): "
			"the group's mount table lists those there at its start\n",
			strerror(errno));
}

/* false if the namespaces could not be made */
static bool enter_private_views(const struct launch_options *lo)
{
	if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC) < 0)
		return false;
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	if (detach_host_proc())
		fprintf(stderr,
			"detrun: warning: the host's /proc cannot be detached from the "
			"group's mount namespace (locked mounts); the group's /proc covers it\n");
	/* A /proc of the new PID namespace: /proc/self and /proc/PID use the group's pids. */
	mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if (stage_views()) {
		cover_cpu_views(lo->cpus);
		cover_machine_views(lo->cpus);
		/* userfaultfd is refused (syscalls.def): its device must not hand one out. */
		if (access("/dev/userfaultfd", F_OK) == 0)
			cover_file("/dev/userfaultfd", "");
		unstage_views();
	}
	private_sys(lo->cpus);
	private_shm();
	private_netns_dir();
	sethostname(DETRUN_HOSTNAME, strlen(DETRUN_HOSTNAME));
	setdomainname("(none)", 6);
	write_file("/proc/sys/kernel/hostname", DETRUN_HOSTNAME);
	return true;
}

/* A replay's group sees the recording's starting files (engine/file_view.h), in the mount
 * namespace of the launched child: the namespace's own, or one made here for a run without
 * namespaces. A group that cannot have that view does not start: it would change the
 * user's files. */
static void enter_file_view(bool own_namespace)
{
	if (!file_view_wanted())
		return;
	char err[PATH_MAX + 256] = "";
	int e = 0;
	if (!own_namespace && unshare(CLONE_NEWNS) < 0)
		e = -errno, snprintf(err, sizeof(err), "a mount namespace: %s", strerror(errno));
	else if (!own_namespace)
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	if (!e)
		e = file_view_enter(err, sizeof(err));
	if (!e)
		return;
	fprintf(stderr,
		"detrun: cannot give the replay the recording's starting files on a private "
		"view (%s); it would run on the real ones and change them\n",
		err);
	_exit(125);
}

/* Sends this process's credentials: the receiver's kernel translates the pid into the
 * receiver's namespace, which is how detrun learns the program's host pid. */
static void send_pid(int sock)
{
	struct ucred cred = { getpid(), getuid(), getgid() };
	char control[CMSG_SPACE(sizeof(cred))] = { 0 };
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = control,
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
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = control,
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
 * until nothing is left. It is not traced: it is not part of the group, so the group must
 * not reach it: it is non-dumpable (see drop_ptrace_capability) and keeps no descriptor
 * but the standard ones, which the program has too. */
static __attribute__((noreturn)) void namespace_init(const char *path, char **argv,
						     const struct launch_options *lo, int go_fd,
						     int err_fd, int sock)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_DUMPABLE, 0);
	enter_file_view(enter_private_views(lo));
	pid_t pid = fork();
	if (pid < 0)
		_exit(125);
	if (pid == 0) {
		prctl(PR_SET_DUMPABLE, 1); /* until exec, for detrun's PTRACE_SEIZE */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		send_pid(sock);
		close(sock);
		run_program(path, argv, go_fd, err_fd, lo);
	}
	/* Everything inherited from detrun (a record log, a shim's socket) goes. */
	syscall(SYS_close_range, 3, ~0U, 0);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	_exit(0);
}

/* Nothing reaches the child's copy of detrun's handlers: every signal waits until the
 * child has the dispositions detrun was given. */
static pid_t fork_with_given_signals(const struct launch_options *lo)
{
	sigset_t all, given_mask;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &given_mask);
	pid_t pid = fork();
	int fork_errno = errno;
	if (pid == 0 && lo->in_child)
		lo->in_child();
	sigprocmask(SIG_SETMASK, &given_mask, NULL);
	errno = fork_errno;
	return pid;
}

/* The group's own process group (engine/foreground.h); the namespace's init leads it and
 * the program inherits it. Without the terminal, the group gives it up (TIOCNOTTY frees a
 * process that leads no session from its controlling terminal, and children inherit that)
 * but stays in detrun's session: getsid(2) is then 0 in the namespace, as it was when
 * recorded, where a session of its own would make it 1. */
static void lead_own_group(const struct launch_options *lo)
{
	setpgid(0, 0);
	int tty = lo->no_terminal ? open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
	if (tty >= 0) {
		ioctl(tty, TIOCNOTTY);
		close(tty);
	}
}

int launch_program(const char *path, char **argv, const struct launch_options *lo,
		   struct launch *out)
{
	int go[2], err[2], sock[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0)
		return -errno;
	*out = (struct launch){ .exec_error_fd = err[0] };
	int own_pid_ns = lo->namespaces ? open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC) : -1;
	out->namespaced = lo->namespaces && unshare(CLONE_NEWPID) == 0;
	pid_t parent = getpid();
	pid_t pid = fork_with_given_signals(lo);
	/* Back in detrun's own namespace for what it starts later: no thread can be made
	 * while new children would go to another (replicate's NATS client makes some). */
	if (pid != 0 && own_pid_ns >= 0)
		setns(own_pid_ns, CLONE_NEWPID);
	if (pid != 0 && own_pid_ns >= 0)
		close(own_pid_ns);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		lead_own_group(lo);
		close(go[1]);
		close(err[0]);
		close(sock[0]);
		if (out->namespaced)
			namespace_init(path, argv, lo, go[0], err[1], sock[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(125);
		enter_file_view(false);
		run_program(path, argv, go[0], err[1], lo);
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
	/* detrun itself is non-dumpable from here on (drop_ptrace_capability says why); its
	 * children so far (a shim program) exec'd and are unaffected, and detrun reaches its
	 * tracees with its own capabilities. */
	prctl(PR_SET_DUMPABLE, 0);
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
