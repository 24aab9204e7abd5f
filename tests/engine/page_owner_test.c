/*
 * Page ownership between two traced processes (engine/page_owner.h), driven the way the
 * engine will drive it: this program is the supervisor, its forked children the tracees.
 *
 *   page_owner_test kinds      which shared-memory kinds register (shmem ones must)
 *   page_owner_test alternate  two processes increment one shared counter without atomics,
 *                              in parallel; ownership moves at each one's stop, so the
 *                              increments interleave A, B, A, B ... and none is lost
 *   page_owner_test blocked    a thread blocked in a fault: PTRACE_INTERRUPT stops it (a
 *                              user-mode fault) or not (the kernel's fault, until given),
 *                              SIGKILL ends it
 *   page_owner_test capless    the same kernel-mode fault in a child without CAP_SYS_PTRACE
 *                              (as under detrun): its userfaultfd comes from /dev/userfaultfd
 *   page_owner_test write_after_read  a page given for reading faults at the first store
 *   page_owner_test file_guard a shared ext4 file's page fenced by a guard region instead
 *   page_owner_test ranges     scattered pages taken with one injected call
 *   page_owner_test bench      the cost of one transfer and of handing a region at once
 *
 * Exit status 0 when every check holds; each failure prints one line.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/page_owner.h"
#include "engine/remote.h"
#include "vkernel/task.h"

enum {
	PAGE = 4096,
	INCREMENTS = 200,
	BENCH_ROUNDS = 2000,
	BENCH_PAGES = 1024,
	SKIPPED = 77, /* ctest's SKIP_RETURN_CODE */
};

/* A syscall instruction for injected calls: the children are forks of this program. */
extern char po_syscall_insn[];
__asm__(".pushsection .text\n.globl po_syscall_insn\npo_syscall_insn:\n\tsyscall\n\tret\n"
	".popsection\n");

static int failures;
#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			failures++; \
		} \
	} while (0)
#define MUST(call) \
	do { \
		long rc_ = (call); \
		if (rc_ < 0) { \
			fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
				strerror((int)-rc_)); \
			exit(1); \
		} \
	} while (0)

/* A traced child as the engine keeps it, with its address space's ownership. */
struct child {
	struct process proc;
	struct task task;
	struct page_owner po;
	pid_t pid;
	int stops; /* int3 stops seen */
};

static void yield_point(void)
{
	__asm__ volatile("int3" ::: "memory");
}

/* The next child drops CAP_SYS_PTRACE before its first stop, as a program under detrun
 * runs (engine/launch.c): userfaultfd(2) then refuses it one that takes the kernel's faults. */
static bool spawn_capless;

static void drop_ptrace_cap(void)
{
	struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &head, data) < 0)
		_exit(91);
	data[0].effective &= ~(1u << CAP_SYS_PTRACE);
	data[0].permitted &= ~(1u << CAP_SYS_PTRACE);
	data[0].inheritable &= ~(1u << CAP_SYS_PTRACE);
	if (syscall(SYS_capset, &head, data) < 0)
		_exit(92);
}

/* Forks a child that runs fn(arg) after its first stop; returns at that stop, with the
 * child seized and its userfaultfd taken. */
static void spawn(struct child *c, void (*fn)(void *), void *arg)
{
	int go[2];
	MUST(pipe(go));
	pid_t pid = fork();
	if (pid == 0) {
		char b;
		close(go[1]);
		if (spawn_capless)
			drop_ptrace_cap();
		if (read(go[0], &b, 1) != 1)
			_exit(90);
		yield_point();
		fn(arg);
		_exit(0);
	}
	close(go[0]);
	MUST(ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_EXITKILL));
	MUST(write(go[1], "g", 1));
	close(go[1]);
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->proc = (struct process){ .refs = 1, .tgid = pid, .pidfd = -1, .stat_fd = -1 };
	c->proc.syscall_insn = (uint64_t)(uintptr_t)po_syscall_insn;
	c->task.tid = pid;
	c->task.proc = &c->proc;
	int st;
	MUST(waitpid(pid, &st, __WALL));
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
		fprintf(stderr, "FAIL: child %d did not stop at its start (%#x)\n", pid, st);
		exit(1);
	}
	MUST(page_owner_open(&c->task, &c->po));
}

/* Resumes a child from a stop (the int3's SIGTRAP is not delivered). */
static void resume(struct child *c)
{
	c->task.regs_valid = false;
	MUST(ptrace(PTRACE_CONT, c->pid, 0, 0));
}

/* Waits for the child's next stop (true) or its end (false, *status set). */
static bool next_stop(struct child *c, int *status)
{
	MUST(waitpid(c->pid, status, __WALL));
	if (!WIFSTOPPED(*status))
		return false;
	c->stops++;
	return true;
}

/* Waits for the child's next fault. The child is known to be on its way to one; if it
 * stops or ends instead, it ran on without faulting (a page was not taken): a failure, seen
 * while the poll waits rather than as a hang. */
static struct page_fault wait_fault(struct child *c)
{
	struct page_fault f;
	for (;;) {
		struct pollfd p = { c->po.uffd, POLLIN, 0 };
		MUST(poll(&p, 1, 100));
		int got = page_owner_next_fault(&c->po, &f);
		MUST(got);
		if (got)
			return f;
		int st;
		if (waitpid(c->pid, &st, __WALL | WNOHANG) == c->pid) {
			fprintf(stderr,
				"FAIL: child %d reached a stop or its end (%#x), not a fault\n",
				c->pid, st);
			exit(1);
		}
	}
}

static void reap(struct child *c, int want_status)
{
	int st;
	while (next_stop(c, &st))
		resume(c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == want_status, "child %d ended with %#x", c->pid,
	      st);
	page_owner_close(&c->po);
	remote_forget_process(&c->proc);
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* ---- shared memory of each kind ---------------------------------------------------------- */

static char *map_fd(int fd, size_t len)
{
	if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
		return MAP_FAILED;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p;
}

static char *map_kind(const char *kind, size_t len)
{
	char path[128];
	if (!strcmp(kind, "anonymous"))
		return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!strcmp(kind, "memfd"))
		return map_fd(memfd_create("page_owner", MFD_CLOEXEC), len);
	if (!strcmp(kind, "shm_open") || !strcmp(kind, "file")) {
		const char *dir = !strcmp(kind, "file") ? (getenv("TMPDIR") ?: "/tmp") : "/dev/shm";
		snprintf(path, sizeof(path), "%s/page_owner.%d", dir, getpid());
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		unlink(path);
		return map_fd(fd, len);
	}
	if (!strcmp(kind, "sysv")) {
		int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
		void *p = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
		if (id >= 0)
			shmctl(id, IPC_RMID, NULL);
		return p == (void *)-1 ? MAP_FAILED : p;
	}
	return MAP_FAILED;
}

/* ---- kinds ------------------------------------------------------------------------------- */

static void idle(void *arg)
{
}

static int test_kinds(void)
{
	static const char *const kinds[] = { "anonymous", "memfd", "shm_open", "sysv", "file" };
	char *maps[5];
	for (int i = 0; i < 5; i++) {
		maps[i] = map_kind(kinds[i], 4 * PAGE);
		if (maps[i] == MAP_FAILED) {
			fprintf(stderr, "FAIL: cannot map %s: %s\n", kinds[i], strerror(errno));
			return 1;
		}
	}
	struct child c;
	spawn(&c, idle, NULL);
	printf("userfaultfd takes the kernel's faults: %s\n", c.po.kernel_faults ? "yes" : "no");
	for (int i = 0; i < 5; i++) {
		int err = page_owner_register(&c.po, (uint64_t)(uintptr_t)maps[i], 4 * PAGE);
		printf("%-10s register: %s\n", kinds[i], err ? strerror(-err) : "ok");
		if (i < 3)
			CHECK(err == 0, "%s is shmem and must register", kinds[i]);
	}
	resume(&c);
	reap(&c, 0);
	return failures != 0;
}

/* ---- alternate --------------------------------------------------------------------------- */

struct counter {
	int role;
	volatile int *value; /* the shared counter */
	volatile char *log;  /* log[v]: the role that moved the counter from v */
	int increments;
};

static void increment(void *arg)
{
	struct counter *k = arg;
	for (int i = 0; i < k->increments; i++) {
		int v = *k->value; /* not atomic: two racing processes lose increments */
		k->log[v] = (char)k->role;
		*k->value = v + 1;
		yield_point();
	}
}

struct round_costs {
	double take, give, round; /* µs summed */
	int n;
};

/* The owner stopped at its yield point: the page goes to the other, which is (or soon
 * will be) blocked in a fault on it. */
static void hand_over(struct child *from, struct child *to, uint64_t page, size_t len,
		      struct round_costs *cost)
{
	double t0 = now_us();
	MUST(page_owner_take(&from->po, &from->task, page, len));
	double t1 = now_us();
	struct page_fault f = wait_fault(to);
	CHECK(f.addr == page && f.tid == to->pid, "fault at %#lx by %d", (unsigned long)f.addr,
	      f.tid);
	double t2 = now_us();
	MUST(page_owner_give(&to->po, page, len, true));
	double t3 = now_us();
	cost->take += t1 - t0;
	cost->give += t3 - t2;
	cost->n++;
}

/* Two children, each `n` increments; returns the counter's final value and fills log. */
static int alternate(const char *kind, int n, char *log_out, struct round_costs *cost)
{
	char *region = map_kind(kind, PAGE + 2 * (size_t)n);
	if (region == MAP_FAILED) {
		fprintf(stderr, "FAIL: cannot map %s\n", kind);
		exit(1);
	}
	uint64_t base = (uint64_t)(uintptr_t)region;
	size_t len = PAGE + (2 * (size_t)n + PAGE - 1) / PAGE * PAGE;
	struct counter k[2];
	struct child c[2];
	for (int i = 0; i < 2; i++) {
		k[i] = (struct counter){ i, (volatile int *)region, region + PAGE, n };
		spawn(&c[i], increment, &k[i]);
		MUST(page_owner_register(&c[i].po, base, len));
		MUST(page_owner_take(&c[i].po, &c[i].task, base, len));
	}
	MUST(page_owner_give(&c[0].po, base, len, true));
	resume(&c[0]);
	resume(&c[1]);
	double start = now_us();
	int owner = 0;
	while (c[0].stops < n || c[1].stops < n) {
		int st;
		if (!next_stop(&c[owner], &st)) {
			CHECK(false, "child %d ended early (%#x)", c[owner].pid, st);
			break;
		}
		/* The other has increments left: it is, or soon will be, waiting for the page. */
		if (c[!owner].stops < n) {
			hand_over(&c[owner], &c[!owner], base, len, cost);
			resume(&c[owner]);
			owner = !owner;
		} else {
			resume(&c[owner]);
		}
	}
	cost->round += now_us() - start;
	reap(&c[0], 0);
	reap(&c[1], 0);
	int value = *(volatile int *)region;
	memcpy(log_out, region + PAGE, 2 * (size_t)n);
	munmap(region, len);
	return value;
}

static int test_alternate(void)
{
	static const char *const kinds[] = { "anonymous", "memfd", "shm_open" };
	char log[2 * INCREMENTS];
	for (int i = 0; i < 3; i++) {
		struct round_costs cost = { 0 };
		int value = alternate(kinds[i], INCREMENTS, log, &cost);
		CHECK(value == 2 * INCREMENTS, "%s: counter %d, not %d", kinds[i], value,
		      2 * INCREMENTS);
		int wrong = -1;
		for (int v = 0; v < value && wrong < 0; v++)
			if (log[v] != v % 2)
				wrong = v;
		CHECK(wrong < 0, "%s: increment %d was made by process %d", kinds[i], wrong,
		      wrong < 0 ? 0 : log[wrong]);
		printf("%-10s %d increments in the order A, B, A, B ...: %s\n", kinds[i], value,
		       wrong < 0 ? "yes" : "no");
	}
	return failures != 0;
}

/* ---- blocked ----------------------------------------------------------------------------- */

static void load_page(void *arg)
{
	_exit(*(volatile char *)arg);
}

struct kernel_read {
	int fd;
	char *page;
};

static void write_page_to_pipe(void *arg)
{
	struct kernel_read *r = arg;
	_exit(write(r->fd, r->page, 8) == 8 ? 0 : 1);
}

/* The scheduling state /proc shows for the child: R running, S sleeping, t traced ... */
static char proc_state(pid_t pid, unsigned long *cpu_ticks)
{
	char path[64], buf[512], state = '?';
	unsigned long utime = 0, stime = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	char *paren = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	if (f)
		fclose(f);
	if (paren)
		sscanf(paren + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &state,
		       &utime, &stime);
	*cpu_ticks = utime + stime;
	return state;
}

static bool stopped_within(struct child *c, int ms)
{
	for (int i = 0; i < ms; i++) {
		int st;
		pid_t got = waitpid(c->pid, &st, __WALL | WNOHANG);
		if (got == c->pid)
			return true;
		usleep(1000);
	}
	return false;
}

/* The kernel's fault (write(2) reads a page the child does not own): it waits for the page
 * like the program's own; an interrupt does not end it (the task spins until the page is
 * given: printed, not checked), and the call completes once given, with the page's bytes. */
static int kernel_access(void)
{
	char *region = map_kind("memfd", PAGE);
	uint64_t page = (uint64_t)(uintptr_t)region;
	region[0] = 7;
	int pipefd[2], st;
	MUST(pipe(pipefd));
	struct kernel_read r = { pipefd[1], region };
	struct child c;
	spawn(&c, write_page_to_pipe, &r);
	if (!c.po.kernel_faults) {
		kill(c.pid, SIGKILL);
		if (access("/dev/userfaultfd", R_OK | W_OK) < 0 && geteuid() != 0) {
			printf("skipped: not root, and /dev/userfaultfd is not open to this user\n");
			return SKIPPED;
		}
		CHECK(false, "a userfaultfd for user-mode faults only");
		return 1;
	}
	MUST(page_owner_register(&c.po, page, PAGE));
	resume(&c);
	struct page_fault f = wait_fault(&c);
	CHECK(f.kind == PAGE_MINOR && f.access == PAGE_READ, "kind %d access %d", f.kind, f.access);
	unsigned long before, after;
	proc_state(c.pid, &before);
	MUST(ptrace(PTRACE_INTERRUPT, c.pid, 0, 0));
	bool early = stopped_within(&c, 100);
	char state = proc_state(c.pid, &after);
	int extra = 0;
	struct page_fault g;
	while (page_owner_next_fault(&c.po, &g) == 1)
		extra++;
	printf("kernel-mode fault after PTRACE_INTERRUPT: %s within 100 ms, state %c, %lu ms of "
	       "CPU meanwhile, %d more messages\n",
	       early ? "stopped" : "not stopped", state, (after - before) * 1000 / 100, extra);
	MUST(page_owner_resolve(&c.po, &f));
	if (!early)
		CHECK(next_stop(&c, &st) && st >> 16 == PTRACE_EVENT_STOP, "status %#x", st);
	resume(&c);
	reap(&c, 0);
	char got[8];
	CHECK(read(pipefd[0], got, 8) == 8 && got[0] == 7, "the pipe got the page");
	close(pipefd[0]);
	close(pipefd[1]);
	munmap(region, PAGE);
	return failures != 0;
}

/* As a program under detrun: without CAP_SYS_PTRACE, the userfaultfd comes through
 * /dev/userfaultfd and still takes the kernel's faults. */
static int test_capless(void)
{
	spawn_capless = true;
	return kernel_access();
}

static int test_blocked(void)
{
	char *region = map_kind("memfd", PAGE);
	uint64_t page = (uint64_t)(uintptr_t)region;
	region[0] = 7;
	struct child c;
	int st;

	/* A user-mode fault: PTRACE_INTERRUPT stops the thread; resumed, it faults again. */
	spawn(&c, load_page, region);
	MUST(page_owner_register(&c.po, page, PAGE));
	resume(&c);
	struct page_fault f = wait_fault(&c);
	CHECK(f.kind == PAGE_MINOR && f.access == PAGE_READ, "kind %d access %d", f.kind, f.access);
	MUST(ptrace(PTRACE_INTERRUPT, c.pid, 0, 0));
	CHECK(next_stop(&c, &st) && st >> 16 == PTRACE_EVENT_STOP, "status %#x", st);
	resume(&c);
	f = wait_fault(&c);
	CHECK(f.addr == page, "fault again at %#lx", (unsigned long)f.addr);
	MUST(page_owner_resolve(&c.po, &f));
	reap(&c, 7);

	/* SIGKILL ends a thread blocked in a fault. */
	spawn(&c, load_page, region);
	MUST(page_owner_register(&c.po, page, PAGE));
	resume(&c);
	wait_fault(&c);
	kill(c.pid, SIGKILL);
	MUST(waitpid(c.pid, &st, __WALL));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x", st);
	page_owner_close(&c.po);
	remote_forget_process(&c.proc);
	return kernel_access();
}

/* ---- write_after_read -------------------------------------------------------------------- */

static void read_then_write(void *arg)
{
	volatile char *p = arg;
	char v = p[0];
	p[0] = (char)(v + 1);
	_exit(p[0]);
}

/* A page given for reading: the load runs without a fault, the store faults (write-protect),
 * and given writable the store completes. */
static int test_write_after_read(void)
{
	char *region = map_kind("shm_open", PAGE);
	uint64_t page = (uint64_t)(uintptr_t)region;
	region[0] = 20;
	struct child c;
	spawn(&c, read_then_write, region);
	MUST(page_owner_register(&c.po, page, PAGE));
	MUST(page_owner_give(&c.po, page, PAGE, false));
	resume(&c);
	struct page_fault f = wait_fault(&c);
	CHECK(f.addr == page && f.kind == PAGE_WP && f.access == PAGE_WRITE && f.tid == c.pid,
	      "fault at %#lx kind %d access %d tid %d", (unsigned long)f.addr, f.kind, f.access,
	      f.tid);
	CHECK(region[0] == 20, "the store went through before the fault: %d", region[0]);
	MUST(page_owner_resolve(&c.po, &f));
	reap(&c, 21);
	CHECK(region[0] == 21, "the store is in the shared page: %d", region[0]);
	munmap(region, PAGE);
	return failures != 0;
}

/* ---- file_guard ------------------------------------------------------------------------- */

enum {
	GUARD_INSTALL = 102,
	GUARD_REMOVE = 103
}; /* MADV_GUARD_*, newer than the headers */

/* What userfaultfd cannot register (a MAP_SHARED file of ext4, SysV shm) a guard region
 * can fence: installed by an injected madvise, an access stops the child with SIGSEGV (a
 * ptrace stop, unlike a userfaultfd fault); the guard removed, the load runs again and
 * reads the file's bytes, which the guard never touched. */
static int test_file_guard(void)
{
	char *region = map_kind("file", PAGE);
	uint64_t page = (uint64_t)(uintptr_t)region;
	region[0] = 9;
	struct child c;
	spawn(&c, load_page, region);
	MUST(remote_syscall(&c.task, SYS_madvise, page, PAGE, GUARD_INSTALL, 0, 0, 0));
	resume(&c);
	int st;
	CHECK(next_stop(&c, &st) && WSTOPSIG(st) == SIGSEGV && st >> 16 == 0,
	      "status %#x, not SIGSEGV's delivery", st);
	siginfo_t si;
	MUST(ptrace(PTRACE_GETSIGINFO, c.pid, 0, &si));
	CHECK((uint64_t)(uintptr_t)si.si_addr == page && si.si_code == SEGV_MAPERR,
	      "si_addr %p code %d", si.si_addr, si.si_code);
	c.task.regs_valid = false;
	MUST(remote_syscall(&c.task, SYS_madvise, page, PAGE, GUARD_REMOVE, 0, 0, 0));
	resume(&c); /* the SIGSEGV is not delivered: the load runs again */
	reap(&c, 9);
	munmap(region, PAGE);
	return failures != 0;
}

/* ---- ranges ------------------------------------------------------------------------------ */

static void read_pages(void *arg)
{
	volatile char *p = arg;
	int sum = 0;
	for (int i = 0; i < 8; i++)
		sum += p[(size_t)i * PAGE];
	_exit(sum);
}

/* Every other page of eight taken with one injected call: the child faults on those four
 * only, in order, and reads what they hold. */
static int test_ranges(void)
{
	char *region = map_kind("memfd", 8 * PAGE);
	uint64_t base = (uint64_t)(uintptr_t)region;
	for (int i = 0; i < 8; i++)
		region[i * PAGE] = (char)(i + 1);
	struct child c;
	spawn(&c, read_pages, region);
	MUST(page_owner_register(&c.po, base, 8 * PAGE));
	MUST(page_owner_give(&c.po, base, 8 * PAGE, false));
	struct page_range taken[4];
	for (int i = 0; i < 4; i++)
		taken[i] = (struct page_range){ base + 2 * (uint64_t)i * PAGE, PAGE };
	MUST(page_owner_take_ranges(&c.po, &c.task, taken, 4));
	resume(&c);
	for (int i = 0; i < 4; i++) {
		struct page_fault f = wait_fault(&c);
		CHECK(f.addr == taken[i].addr && f.kind == PAGE_MINOR,
		      "fault %d at page %ld, kind %d", i, (long)(f.addr - base) / PAGE, f.kind);
		MUST(page_owner_resolve(&c.po, &f));
	}
	reap(&c, 36); /* 1 + 2 + ... + 8 */
	munmap(region, 8 * PAGE);
	return failures != 0;
}

/* ---- bench ------------------------------------------------------------------------------- */

static void touch_pages(void *arg)
{
	char *p = arg;
	for (int i = 0; i < BENCH_PAGES; i++)
		p[(size_t)i * PAGE] = 1;
	yield_point();
}

/* A child touches every page of a region it does not own: faults resolved one page at a
 * time, or the region given whole first. Returns µs from resume to its stop. */
static double touch_region(bool whole)
{
	size_t len = (size_t)BENCH_PAGES * PAGE;
	char *region = map_kind("memfd", len);
	memset(region, 0, len); /* in the page cache: the child's faults are minor */
	uint64_t base = (uint64_t)(uintptr_t)region;
	struct child c;
	spawn(&c, touch_pages, region);
	MUST(page_owner_register(&c.po, base, len));
	double t0 = now_us();
	if (whole)
		MUST(page_owner_give(&c.po, base, len, true));
	resume(&c);
	for (int i = 0; !whole && i < BENCH_PAGES; i++) {
		struct page_fault f = wait_fault(&c);
		MUST(page_owner_resolve(&c.po, &f));
	}
	int st;
	CHECK(next_stop(&c, &st), "status %#x", st);
	double us = now_us() - t0;
	resume(&c);
	reap(&c, 0);
	munmap(region, len);
	return us;
}

/* The parts of a transfer on a stopped child: an injected call of nothing (getpid), the
 * injected madvise that takes a page, giving it back mapped, write-protecting it. */
static void bench_parts(void)
{
	char *region = map_kind("memfd", PAGE);
	region[0] = 1;
	uint64_t page = (uint64_t)(uintptr_t)region;
	char *wide = map_kind("memfd", 128 * PAGE);
	memset(wide, 1, 128 * PAGE);
	char *file = map_kind("file", PAGE);
	file[0] = 1;
	struct child c;
	spawn(&c, idle, NULL);
	MUST(page_owner_register(&c.po, page, PAGE));
	double inject = 0, take = 0, give = 0, protect = 0, unprotect = 0;
	for (int i = 0; i < BENCH_ROUNDS; i++) {
		double t0 = now_us();
		MUST(remote_syscall(&c.task, SYS_getpid, 0, 0, 0, 0, 0, 0));
		double t1 = now_us();
		MUST(page_owner_take(&c.po, &c.task, page, PAGE));
		double t2 = now_us();
		MUST(page_owner_give(&c.po, page, PAGE, true));
		double t3 = now_us();
		MUST(page_owner_protect(&c.po, page, PAGE));
		double t4 = now_us();
		MUST(page_owner_give(&c.po, page, PAGE, true));
		double t5 = now_us();
		inject += t1 - t0, take += t2 - t1, give += t3 - t2, protect += t4 - t3;
		unprotect += t5 - t4;
	}
	struct page_range every_other[64];
	for (int i = 0; i < 64; i++)
		every_other[i] = (struct page_range){
			(uint64_t)(uintptr_t)wide + 2 * (uint64_t)i * PAGE, PAGE
		};
	double scattered = 0;
	for (int i = 0; i < BENCH_ROUNDS / 10; i++) {
		double t0 = now_us();
		MUST(page_owner_take_ranges(&c.po, &c.task, every_other, 64));
		scattered += now_us() - t0;
	}
	printf("take of 64 scattered pages with one injected call: %.1f us\n",
	       scattered / (BENCH_ROUNDS / 10));
	double guard = 0;
	uint64_t file_page = (uint64_t)(uintptr_t)file;
	for (int i = 0; i < BENCH_ROUNDS / 10; i++) {
		double t0 = now_us();
		MUST(remote_syscall(&c.task, SYS_madvise, file_page, PAGE, GUARD_INSTALL, 0, 0, 0));
		MUST(remote_syscall(&c.task, SYS_madvise, file_page, PAGE, GUARD_REMOVE, 0, 0, 0));
		guard += now_us() - t0;
	}
	printf("a shared ext4 file's page fenced and opened again (two injected madvise): %.1f "
	       "us\n",
	       guard / (BENCH_ROUNDS / 10));
	munmap(file, PAGE);
	munmap(wide, 128 * PAGE);
	printf("on a stopped process, a page (us): injected getpid %.1f, take (injected madvise) "
	       "%.1f, give (continue, nobody waiting) %.1f, protect %.1f, give write back %.1f\n",
	       inject / BENCH_ROUNDS, take / BENCH_ROUNDS, give / BENCH_ROUNDS,
	       protect / BENCH_ROUNDS, unprotect / BENCH_ROUNDS);
	resume(&c);
	reap(&c, 0);
	munmap(region, PAGE);
}

static int bench(void)
{
	bench_parts();
	char log[2 * BENCH_ROUNDS];
	struct round_costs cost = { 0 };
	alternate("memfd", BENCH_ROUNDS, log, &cost);
	printf("transfer (one page, memfd), %d transfers: %.1f us each, of which take (injected "
	       "madvise) %.1f us, give (UFFDIO_CONTINUE) %.1f us; the rest is the owner's stop, "
	       "the fault's delivery and the resumes\n",
	       cost.n, cost.round / cost.n, cost.take / cost.n, cost.give / cost.n);
	double one = touch_region(false), whole = touch_region(true);
	printf("%d pages (%d KiB): faulted and given one by one %.0f us (%.2f us a page); "
	       "given whole first %.0f us (%.2f us a page)\n",
	       BENCH_PAGES, BENCH_PAGES * PAGE / 1024, one, one / BENCH_PAGES, whole,
	       whole / BENCH_PAGES);
	return failures != 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "kinds"))
		return test_kinds();
	if (!strcmp(what, "alternate"))
		return test_alternate();
	if (!strcmp(what, "blocked"))
		return test_blocked();
	if (!strcmp(what, "capless"))
		return test_capless();
	if (!strcmp(what, "write_after_read"))
		return test_write_after_read();
	if (!strcmp(what, "file_guard"))
		return test_file_guard();
	if (!strcmp(what, "ranges"))
		return test_ranges();
	if (!strcmp(what, "bench"))
		return bench();
	fprintf(stderr,
		"usage: page_owner_test kinds|alternate|blocked|capless|write_after_read|file_guard|"
		"ranges|bench\n");
	return 2;
}
