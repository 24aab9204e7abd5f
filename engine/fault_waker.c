/* The fault waker (fault_waker.h). */
#include "engine/fault_waker.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/page_owner.h"
#include "vkernel/report.h"

static int epoll_fd = -1, drained_fd = -1;
static atomic_bool rang;
static pid_t loop_tid;

static void *waker(void *unused)
{
	(void)unused;
	for (;;) {
		struct epoll_event ev;
		if (epoll_wait(epoll_fd, &ev, 1, -1) <= 0)
			continue;
		atomic_store(&rang, true);
		syscall(SYS_tgkill, getpid(), loop_tid, SIGALRM);
		uint64_t n;
		if (read(drained_fd, &n, sizeof(n)) < 0 && errno != EINTR)
			return NULL;
	}
}

static void start(void)
{
	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	drained_fd = eventfd(0, EFD_CLOEXEC);
	if (epoll_fd < 0 || drained_fd < 0)
		die("page ownership: cannot make the waker's descriptors: %s", strerror(errno));
	loop_tid = (pid_t)syscall(SYS_gettid);
	page_owner_thread(waker, "page ownership's fault waker");
}

int fault_waker_watch(int fd)
{
	if (epoll_fd < 0)
		start();
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

bool fault_waker_rang(void)
{
	return atomic_exchange(&rang, false);
}

void fault_waker_drained(void)
{
	uint64_t one = 1;
	if (write(drained_fd, &one, sizeof(one)) < 0)
		die("page ownership: cannot wake the waker: %s", strerror(errno));
}
