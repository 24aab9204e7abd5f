#include "engine/page_owner.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine/remote.h"
#include "vkernel/report.h"

/* Newer than the distribution's header (kernel 6.4 and later). */
#define UFFD_FEATURE_WP_UNPOPULATED_ (1ULL << 13)
#define UFFDIO_CONTINUE_MODE_WP_ (1ULL << 1)
#define PIDFD_SELF_THREAD_GROUP_ (-10001) /* 6.15 and later */

enum {
	PAGE = 4096,
	FEATURES = UFFD_FEATURE_THREAD_ID | UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM |
		   UFFD_FEATURE_WP_HUGETLBFS_SHMEM | UFFD_FEATURE_WP_UNPOPULATED_,
};

/* Closes descriptor `fd` of t, if it is one. */
static void close_in_task(struct task *t, long fd)
{
	if (fd >= 0)
		remote_syscall(t, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0);
}

/* What recvmsg(2) in t fills: laid out in t's scratch memory, its pointers t's addresses. */
struct rights_msg {
	struct msghdr msg;
	struct iovec iov;
	char byte;
	union {
		struct cmsghdr head;
		char room[CMSG_SPACE(sizeof(int))];
	} control;
};

/* Receives in t, on its socket `sock`, the descriptor detrun sent: its number in t. */
static long receive_in_task(struct task *t, long sock)
{
	struct rights_msg m = { 0 };
	uint64_t at = remote_scratch(t, &m, sizeof(m));
	if (!at)
		return -EFAULT;
	m.msg.msg_iov = (void *)(uintptr_t)(at + offsetof(struct rights_msg, iov));
	m.msg.msg_iovlen = 1;
	m.msg.msg_control = (void *)(uintptr_t)(at + offsetof(struct rights_msg, control));
	m.msg.msg_controllen = sizeof(m.control);
	m.iov = (struct iovec){ (void *)(uintptr_t)(at + offsetof(struct rights_msg, byte)), 1 };
	int err = remote_write(t, REMOTE(at), &m, sizeof(m));
	if (err)
		return err;
	long n = remote_syscall(t, SYS_recvmsg, (uint64_t)sock, at, MSG_CMSG_CLOEXEC, 0, 0, 0);
	if (n < 0)
		return n;
	err = remote_read(t, REMOTE(at), &m, sizeof(m));
	if (err)
		return err;
	if (m.control.head.cmsg_level != SOL_SOCKET || m.control.head.cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	int fd;
	memcpy(&fd, CMSG_DATA(&m.control.head), sizeof(fd));
	return fd;
}

/* Sends detrun's descriptor `fd` to t: a socketpair made in t, detrun's copy of one end. */
static long send_to_task(struct task *t, int fd)
{
	int pair[2] = { -1, -1 };
	uint64_t at = remote_scratch(t, pair, sizeof(pair));
	if (!at)
		return -EFAULT;
	long err = remote_syscall(t, SYS_socketpair, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, at, 0,
				  0);
	if (err == 0)
		err = remote_read(t, REMOTE(at), pair, sizeof(pair));
	if (err)
		return err;
	int end = remote_dup_fd(t, pair[1]);
	long got = end;
	if (end >= 0) {
		char byte = 0;
		struct iovec iov = { &byte, 1 };
		union {
			struct cmsghdr head;
			char room[CMSG_SPACE(sizeof(int))];
		} control = { 0 };
		struct msghdr msg = { .msg_iov = &iov,
				      .msg_iovlen = 1,
				      .msg_control = &control,
				      .msg_controllen = sizeof(control) };
		control.head = (struct cmsghdr){ CMSG_LEN(sizeof(int)), SOL_SOCKET, SCM_RIGHTS };
		memcpy(CMSG_DATA(&control.head), &fd, sizeof(fd));
		got = sendmsg(end, &msg, 0) < 0 ? -errno : receive_in_task(t, pair[0]);
		close(end);
	}
	close_in_task(t, pair[0]);
	close_in_task(t, pair[1]);
	return got;
}

/* A userfaultfd for t's address space through /dev/userfaultfd, whose USERFAULTFD_IOC_NEW
 * asks no capability (the device's file mode is the check, and detrun opens it): for a
 * process without CAP_SYS_PTRACE, which userfaultfd(2) refuses one that takes the kernel's
 * faults. The device's descriptor is in t only while t is stopped, between injected calls. */
static long make_through_device(struct task *t)
{
	int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	long there = send_to_task(t, dev);
	close(dev);
	if (there < 0)
		return there;
	long fd = remote_syscall(t, SYS_ioctl, (uint64_t)there, USERFAULTFD_IOC_NEW,
				 O_CLOEXEC | O_NONBLOCK, 0, 0, 0);
	close_in_task(t, there);
	return fd;
}

/* The userfaultfd made inside t: one that takes the kernel's faults if the process may
 * make one (itself, or through the device), else one for its user-mode faults. */
static long make_in_task(struct task *t, bool *kernel_faults)
{
	long fd = remote_syscall(t, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK, 0, 0, 0, 0, 0);
	if (fd == -EPERM)
		fd = make_through_device(t);
	*kernel_faults = fd >= 0;
	if (fd < 0)
		fd = remote_syscall(t, SYS_userfaultfd,
				    O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY, 0, 0, 0, 0, 0);
	return fd;
}

int page_owner_open(struct task *t, struct page_owner *po)
{
	*po = (struct page_owner){ .uffd = -1 };
	long fd = make_in_task(t, &po->kernel_faults);
	if (fd < 0)
		return (int)fd;
	int mine = remote_dup_fd(t, (int)fd);
	long closed = remote_syscall(t, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0);
	if (mine < 0)
		return mine;
	if (closed < 0) {
		close(mine);
		return (int)closed;
	}
	struct uffdio_api api = { .api = UFFD_API, .features = FEATURES };
	if (ioctl(mine, UFFDIO_API, &api) < 0) {
		int err = -errno;
		close(mine);
		return err;
	}
	po->uffd = mine;
	return 0;
}

void page_owner_close(struct page_owner *po)
{
	if (po->uffd >= 0)
		close(po->uffd);
	po->uffd = -1;
}

int page_owner_register(struct page_owner *po, uint64_t addr, uint64_t len)
{
	struct uffdio_register reg = {
		.range = { addr, len },
		.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR |
			UFFDIO_REGISTER_MODE_WP,
	};
	return ioctl(po->uffd, UFFDIO_REGISTER, &reg) < 0 ? -errno : 0;
}

int page_owner_unregister(struct page_owner *po, uint64_t addr, uint64_t len)
{
	struct uffdio_range range = { addr, len };
	return ioctl(po->uffd, UFFDIO_UNREGISTER, &range) < 0 ? -errno : 0;
}

static int write_protect(struct page_owner *po, uint64_t addr, uint64_t len, bool on)
{
	struct uffdio_writeprotect wp = { { addr, len }, on ? UFFDIO_WRITEPROTECT_MODE_WP : 0 };
	return ioctl(po->uffd, UFFDIO_WRITEPROTECT, &wp) < 0 ? -errno : 0;
}

/* A hole (no page in the page cache, so nothing to continue with): a zeroed page, as the
 * kernel would have made, put in the cache and mapped. Another process's fault may have
 * filled it meanwhile (EEXIST): then it is mapped here already or continued next. The
 * page comes writable (UFFDIO_ZEROPAGE has no write-protect mode), so its waiters are not
 * woken here: page_owner_give sets the protection first, then wakes them. */
static int fill_hole(struct page_owner *po, uint64_t addr)
{
	struct uffdio_zeropage z = { .range = { addr, PAGE },
				     .mode = UFFDIO_ZEROPAGE_MODE_DONTWAKE };
	if (ioctl(po->uffd, UFFDIO_ZEROPAGE, &z) == 0 || errno == EEXIST)
		return 0;
	return -errno;
}

/* Maps every page of [addr, end) the process does not map yet, write-protected unless
 * `writable`. *all_new says whether every page was new (their protection is then right). */
static int map_range(struct page_owner *po, uint64_t addr, uint64_t end, bool writable,
		     bool *all_new)
{
	*all_new = true;
	while (addr < end) {
		struct uffdio_continue c = { .range = { addr, end - addr },
					     .mode = writable ? 0 : UFFDIO_CONTINUE_MODE_WP_ };
		if (ioctl(po->uffd, UFFDIO_CONTINUE, &c) == 0)
			return 0;
		int err = errno;
		addr += c.mapped > 0 ? (uint64_t)c.mapped : 0;
		if (err == EAGAIN)
			continue; /* the address space changed under the call: try again */
		if (err == EEXIST) {
			*all_new = false; /* mapped already: its protection is set after */
			addr += PAGE;
		} else if (err == EFAULT) {
			int hole = fill_hole(po, addr);
			if (hole)
				return hole;
			*all_new = false;
			addr += PAGE;
		} else {
			return -err;
		}
	}
	return 0;
}

int page_owner_give(struct page_owner *po, uint64_t addr, uint64_t len, bool writable)
{
	bool all_new;
	int err = map_range(po, addr, addr + len, writable, &all_new);
	if (err || all_new)
		return err; /* UFFDIO_CONTINUE woke the range's waiters */
	err = write_protect(po, addr, len, !writable);
	if (err || writable)
		return err; /* clearing the protection woke them */
	struct uffdio_range range = { addr, len };
	return ioctl(po->uffd, UFFDIO_WAKE, &range) < 0 ? -errno : 0;
}

int page_owner_protect(struct page_owner *po, uint64_t addr, uint64_t len)
{
	return write_protect(po, addr, len, true);
}

int page_owner_take(struct page_owner *po, struct task *t, uint64_t addr, uint64_t len)
{
	long r = remote_syscall(t, SYS_madvise, addr, len, MADV_DONTNEED, 0, 0, 0);
	return r < 0 ? (int)r : 0;
}

int page_owner_take_ranges(struct page_owner *po, struct task *t, const struct page_range *r, int n)
{
	if (n == 1)
		return page_owner_take(po, t, r[0].addr, r[0].len);
	if (n < 1 || n > PAGE_OWNER_MAX_RANGES)
		return -EINVAL;
	struct iovec iov[PAGE_OWNER_MAX_RANGES];
	uint64_t total = 0;
	for (int i = 0; i < n; i++) {
		iov[i] = (struct iovec){ (void *)(uintptr_t)r[i].addr, r[i].len };
		total += r[i].len;
	}
	uint64_t vec = remote_scratch(t, iov, (size_t)n * sizeof(iov[0]));
	if (!vec)
		return -EFAULT;
	long done = remote_syscall(t, SYS_process_madvise, (uint64_t)PIDFD_SELF_THREAD_GROUP_, vec,
				   (uint64_t)n, MADV_DONTNEED, 0, 0);
	if (done < 0)
		return (int)done;
	return (uint64_t)done == total ? 0 : -EIO; /* a range the kernel stopped at */
}

int page_owner_next_fault(struct page_owner *po, struct page_fault *f)
{
	struct uffd_msg msg;
	ssize_t n = read(po->uffd, &msg, sizeof(msg));
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (n != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
		return -EPROTO; /* no other event was asked for (UFFDIO_API) */
	uint64_t flags = msg.arg.pagefault.flags;
	*f = (struct page_fault){
		.addr = msg.arg.pagefault.address & ~(uint64_t)(PAGE - 1),
		.tid = (pid_t)msg.arg.pagefault.feat.ptid,
		.access = flags & UFFD_PAGEFAULT_FLAG_WRITE ? PAGE_WRITE : PAGE_READ,
		.kind = flags & UFFD_PAGEFAULT_FLAG_WP      ? PAGE_WP
			: flags & UFFD_PAGEFAULT_FLAG_MINOR ? PAGE_MINOR
							    : PAGE_MISSING,
	};
	return 1;
}

int page_owner_resolve(struct page_owner *po, const struct page_fault *f)
{
	return page_owner_give(po, f->addr, PAGE, f->access == PAGE_WRITE);
}

void page_owner_thread(void *(*body)(void *), const char *what)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t thread;
	int err = pthread_create(&thread, NULL, body, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		die("%s: cannot start its thread: %s", what, strerror(err));
	pthread_detach(thread);
}
