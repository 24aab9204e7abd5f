/* Inventory: identity. pids, ppids, tids, wait results, kill targets, /proc paths,
 * SCM_CREDENTIALS, uname, hostname, CPU count. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

static void *thread_main(void *arg)
{
	CHECK(syscall(SYS_gettid) != getpid(), "a thread's tid is its process's pid");
	printf("thread tid %ld\n", (long)syscall(SYS_gettid));
	return NULL;
}

static void credentials(void)
{
	int sv[2], on = 1;
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
	pid_t child = fork();
	if (child == 0) {
		struct ucred c = { getpid(), getuid(), getgid() };
		char ctl[CMSG_SPACE(sizeof(c))] = { 0 }, byte = 'x';
		struct iovec iov = { &byte, 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof(c));
		memcpy(CMSG_DATA(cm), &c, sizeof(c));
		sendmsg(sv[0], &m, 0);
		_exit(0);
	}
	char ctl[CMSG_SPACE(sizeof(struct ucred))], byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	recvmsg(sv[1], &m, 0);
	struct ucred c;
	memcpy(&c, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(c));
	CHECK(c.pid == child, "SCM_CREDENTIALS names pid %d, the sender is %d", c.pid, child);
	printf("SCM_CREDENTIALS pid %d (child %d, match %d)\n", c.pid, child, c.pid == child);
	waitpid(child, NULL, 0);
}

int main(void)
{
	printf("pid %d ppid %d tid %ld\n", getpid(), getppid(), (long)syscall(SYS_gettid));
	pthread_t th;
	pthread_create(&th, NULL, thread_main, NULL);
	pthread_join(th, NULL);
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(3);
	}
	char path[64], link[64] = "";
	snprintf(path, sizeof(path), "/proc/%d/stat", child);
	FILE *f = fopen(path, "r");
	int stat_pid = 0;
	if (f && fscanf(f, "%d", &stat_pid) == 1)
		fclose(f);
	ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	char self[16];
	snprintf(self, sizeof(self), "%d", getpid());
	CHECK(stat_pid == child && !strcmp(link, self),
	      "/proc/%d/stat names pid %d and /proc/self is %s; want %d and %s", child, stat_pid,
	      link, child, self);
	printf("child %d /proc/child/stat pid %d /proc/self -> %s\n", child, stat_pid, link);
	kill(child, SIGTERM);
	int status;
	pid_t waited = waitpid(-1, &status, 0);
	CHECK(waited == child && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	      "waitpid gave %d status 0x%x, want %d killed by SIGTERM", waited, status, child);
	printf("wait -> %d signaled %d sig %d\n", waited, WIFSIGNALED(status), WTERMSIG(status));
	credentials();
	struct utsname u;
	uname(&u);
	char host[64];
	gethostname(host, sizeof(host));
	CHECK(!strcmp(u.nodename, host), "uname's node %s is not the hostname %s", u.nodename,
	      host);
	printf("uname %s %s %s %s %s hostname %s\n", u.sysname, u.nodename, u.release, u.version,
	       u.machine, host);
	cpu_set_t set;
	sched_getaffinity(0, sizeof(set), &set);
	CHECK(CPU_COUNT(&set) >= 1 && sched_getcpu() >= 0 && CPU_ISSET(sched_getcpu(), &set),
	      "sched_getcpu says %d, outside the affinity (%d CPUs)", sched_getcpu(),
	      CPU_COUNT(&set));
	printf("cpus: onln %ld conf %ld affinity %d sched_getcpu %d\n",
	       sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_NPROCESSORS_CONF), CPU_COUNT(&set),
	       sched_getcpu());
	f = fopen("/proc/cpuinfo", "r");
	char line[512];
	int processors = 0;
	while (f && fgets(line, sizeof(line), f))
		processors += strncmp(line, "processor", 9) == 0;
	if (f)
		fclose(f);
	f = fopen("/sys/devices/system/cpu/online", "r");
	char online[64] = "?";
	if (f && fgets(online, sizeof(online), f))
		online[strcspn(online, "\n")] = 0;
	if (f)
		fclose(f);
	printf("/proc/cpuinfo processors %d /sys/devices/system/cpu/online %s\n", processors,
	       online);
	return 0;
}
