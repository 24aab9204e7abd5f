/*
 * Page ownership of shared memory between the group's processes, through userfaultfd.
 *
 * Processes that share a MAP_SHARED mapping can run in parallel only if neither sees the
 * other's stores at a moment set by timing. So each page is owned by one process at a time
 * (or read by several, written by none), and another process that touches it blocks in a
 * userfaultfd fault that detrun reads; detrun moves the page at a point of its choosing on
 * the logical timeline, and the stores the new owner sees are exactly those made before.
 *
 * Each process's address space has one userfaultfd, made inside it by an injected call
 * (a userfaultfd serves the address space of the task that creates it) and then held by
 * detrun alone (pidfd_getfd); detrun registers, protects and resolves with its own copy,
 * without running code in the process. A registered range is in one of three states per
 * process:
 *   - not owned: no page-table entry. Any access faults: a *minor* fault when the page is
 *     in the page cache (UFFDIO_REGISTER_MODE_MINOR), a *missing* one for a hole never
 *     touched by anyone (MODE_MISSING; without it the kernel would fill the hole itself,
 *     and the process would read the page without owning it).
 *   - read: mapped and write-protected (MODE_WP); a store faults with UFFD_PAGEFAULT_FLAG_WP.
 *   - written: mapped writable; nothing faults.
 * page_owner_give() maps (UFFDIO_CONTINUE, or UFFDIO_ZEROPAGE for a hole) and sets or clears
 * the write protection, and so resolves any fault waiting in the range. Taking write access
 * away is UFFDIO_WRITEPROTECT and needs nothing of the process; taking all access away means
 * dropping its page-table entries, and the kernel lets only the process itself do that:
 * process_madvise(2) refuses MADV_DONTNEED (and the guard-region advices) for another
 * process on 6.18, so page_owner_take() injects madvise(MADV_DONTNEED) into a stopped task.
 * That costs nothing in determinism: a process must be stopped at a point on the timeline
 * anyway when a page leaves it, or which of its stores went with the page would depend on
 * timing. The data stays in the page cache; a later access is a minor fault.
 *
 * Which memory this covers: shmem only — anonymous MAP_SHARED, memfd, shm_open (tmpfs),
 * any tmpfs file. The kernel refuses to register SysV shm (its mappings are shmem behind
 * shm_vm_ops, which vma_is_shmem does not recognise) and files of other filesystems (ext4:
 * only write-protect *async*, which never blocks a writer): UFFDIO_REGISTER gives EINVAL,
 * and those need another mechanism (guard regions or mprotect injected into non-owners,
 * whose faults come as SIGSEGV). Notes for the engine:
 *   - A task blocked in a fault is in the kernel, not in a ptrace stop. A fault taken in
 *     user mode is interruptible: PTRACE_INTERRUPT makes the task leave it and stop (it
 *     faults again, with a new message, when resumed) and SIGKILL kills it. A fault the
 *     kernel takes on the process's behalf (write(2) from a page it does not own) is not
 *     left for a non-fatal signal: after PTRACE_INTERRUPT the task spins on a CPU retrying
 *     it (state R) until the page is given, and stops only when its call is done. So give
 *     first, or do not interrupt a task whose /proc/TID/syscall shows it in a call.
 *   - userfaultfd(2) gives a userfaultfd that takes the kernel's faults only to a process
 *     with CAP_SYS_PTRACE (or with vm.unprivileged_userfaultfd set), and a program under
 *     detrun has none. /dev/userfaultfd asks no capability of the caller of its ioctl, so
 *     page_owner_open opens it and hands it to the stopped task for that one call (through
 *     a socketpair made in the task). Only without the device does it fall back to
 *     UFFD_USER_MODE_ONLY, and then the kernel's own access to a page the process does not
 *     own fails the call with EFAULT (page_owner.kernel_faults says which).
 *   - detrun's own reads of a page the process does not own fault too: process_vm_readv
 *     (remote_read's first try) blocks detrun's thread on the process's userfaultfd, which
 *     only detrun can resolve, a deadlock; /proc/PID/mem fails with EIO instead. Before
 *     reading or writing a call's shared buffer, give the page (the call is the owner's
 *     event anyway), or read the memory through a mapping of detrun's own.
 *   - The thread id in a fault is the faulting thread's id in its own PID namespace
 *     (task_pid_vnr in the kernel's userfault_msg), the group's tid, not the host's.
 *   - fork() does not carry the registration to the child (without
 *     UFFD_FEATURE_EVENT_FORK the kernel resets the child's copies of the mappings): the
 *     child needs its own page_owner, registered and taken, before it runs.
 *   - Registration belongs to the mapping (the kernel's vma): a range unmapped and mapped
 *     again (munmap, mremap, a new mmap over it) is no longer registered.
 *   - A mapping is registered with one userfaultfd at a time: the spin probe's own
 *     (spin_watch.c, write-protect async, for the length of a probe) gets EBUSY on owned
 *     ranges and digests them instead, and page_owner_register gets EBUSY during a probe.
 *
 * Every function returns 0 or -errno; a process that died meanwhile gives -ESRCH.
 */
#ifndef DETRUN_SUPERVISOR_PAGE_OWNER_H
#define DETRUN_SUPERVISOR_PAGE_OWNER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct task;

/* One process's address space, as page ownership sees it. */
struct page_owner {
	int uffd;           /* detrun's copy of the userfaultfd; -1 when closed */
	bool kernel_faults; /* the kernel's own accesses fault too (not UFFD_USER_MODE_ONLY) */
};

/* A fault waiting in a process: the thread is blocked until the page is given. */
enum page_access {
	PAGE_READ,
	PAGE_WRITE,
};
enum page_fault_kind {
	PAGE_MISSING, /* a hole: no page in the page cache yet */
	PAGE_MINOR,   /* cached but not mapped in this process */
	PAGE_WP,      /* mapped read-only, and written */
};
struct page_fault {
	uint64_t addr; /* the page's address (page-aligned) */
	pid_t tid;     /* the faulting thread, in its PID namespace */
	enum page_access access;
	enum page_fault_kind kind;
};

/* Makes the userfaultfd of t's address space (t stopped, its syscall instruction known) and
 * takes it; the process keeps no descriptor of it. */
int page_owner_open(struct task *t, struct page_owner *po);
void page_owner_close(struct page_owner *po);

/* Puts [addr, addr+len) (page-aligned, shmem) under ownership. Pages the process has
 * mapped stay as they are until taken. -EINVAL for memory the kernel refuses (above). */
int page_owner_register(struct page_owner *po, uint64_t addr, uint64_t len);
int page_owner_unregister(struct page_owner *po, uint64_t addr, uint64_t len);

/* The process may read [addr, addr+len), and write it too if `writable`; wakes the threads
 * waiting there. A whole region at once is one or two ioctls however many pages it has. */
int page_owner_give(struct page_owner *po, uint64_t addr, uint64_t len, bool writable);

/* The process may no longer write [addr, addr+len): the next store faults. */
int page_owner_protect(struct page_owner *po, uint64_t addr, uint64_t len);

/* The process may no longer touch [addr, addr+len): its page-table entries are dropped by
 * madvise(MADV_DONTNEED) injected into t, a stopped task of it (see remote_syscall). */
int page_owner_take(struct page_owner *po, struct task *t, uint64_t addr, uint64_t len);

/* The same for several ranges at once, with one injected call (process_madvise(2) of the
 * process on itself, which takes MADV_DONTNEED since 6.13): a region's scattered pages
 * cost what one page costs. At most PAGE_OWNER_MAX_RANGES. */
#define PAGE_OWNER_MAX_RANGES 1024 /* the kernel's UIO_MAXIOV */
struct page_range {
	uint64_t addr, len;
};
int page_owner_take_ranges(struct page_owner *po, struct task *t, const struct page_range *r,
			   int n);

/* The next fault waiting in the process, without blocking: 1 and *f filled, 0 when none
 * waits, or -errno. A thread that left its fault (a signal, PTRACE_INTERRUPT) faults again
 * when it runs, so the same page can come twice: giving it twice is harmless. */
int page_owner_next_fault(struct page_owner *po, struct page_fault *f);

/* Ends a fault by giving its page: written faults get it writable. */
int page_owner_resolve(struct page_owner *po, const struct page_fault *f);

/* Starts a detached thread of detrun's that watches or answers userfaultfds (`what` names
 * it if it cannot start: detrun dies). It takes none of detrun's signals, which are the
 * stop loop's (waitpid ends on them), and must touch no tracee: ptrace is the loop's. */
void page_owner_thread(void *(*body)(void *), const char *what);

#endif
