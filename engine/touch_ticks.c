/* First-touch ticks (touch_ticks.h). */
#include "engine/touch_ticks.h"

#include <errno.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/ptrace.h>

#include "scheduler/scheduler.h"
#include "engine/page_owner.h"
#include "engine/spin.h"
#include "engine/tracer.h"
#include "engine/tracer_internal.h"
#include "syscalls/syscall_table.h"
#include "vkernel/report.h"
#include "vkernel/task.h"

enum {
	PAGE = 4096,
	MAX_SPACES = 512,
	/* A fault maps the aligned block around it (resolve): cc1 first touches some 3,400
	 * pages a unit, mostly in sequence, and each fault is a round trip through detrun's
	 * thread. It weighs a page's worth of the block, as a mapping call's pages did. */
	TOUCH_BLOCK = 16 * PAGE,
	TOUCH_WEIGHT = 16,
};

/* An address space with a userfaultfd. `gen` tells a reused slot from the one an epoll
 * event was for. */
struct space {
	bool used;
	int aspace;
	int uffd;
	uint32_t gen;
	atomic_uint_fast64_t counted; /* touches not yet on its domain's clock */
};

static struct space spaces[MAX_SPACES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* the thread's view of `spaces` */
static int epoll_fd = -1;
static pid_t loop_tid;
static atomic_bool woke;
static uint64_t faults, collected;

static bool enabled(void)
{
	static int on = -1;
	if (on < 0) {
		/* Opt-in: on make -j2 their cost outweighed what they let run at once (bench/) */
		const char *v = getenv("DETRUN_TOUCH_TICKS");
		on = v && !strcmp(v, "1");
	}
	return on && tracer_parallel();
}

/* ---- the fault thread ----------------------------------------------------------------------- */

static bool zeropage(int uffd, uint64_t addr, uint64_t len, int64_t *done)
{
	struct uffdio_zeropage z = { .range = { addr, len },
				     .mode = UFFDIO_ZEROPAGE_MODE_DONTWAKE };
	bool ok = ioctl(uffd, UFFDIO_ZEROPAGE, &z) == 0;
	*done = z.zeropage;
	return ok;
}

/* Maps zeroed pages over [start, end) where none is mapped (a page mapped already fails
 * with EEXIST: stepped over). False when the range leaves the mapping (ENOENT). */
static bool fill(int uffd, uint64_t start, uint64_t end)
{
	uint64_t at = start;
	while (at < end) {
		int64_t done;
		if (zeropage(uffd, at, end - at, &done))
			return true;
		int err = errno;
		if (done > 0)
			at += (uint64_t)done;
		if (err == EAGAIN)
			continue;
		if (err != EEXIST)
			return err != ENOENT && err != EINVAL;
		at += PAGE;
	}
	return true;
}

/* Resolves a fault at `addr` of space sp: maps its page, counting it first if it was
 * missing, then the block around it (TOUCH_BLOCK bytes, aligned, or if that leaves the
 * mapping the largest aligned half, quarter ... that does not: a function of the address
 * and the mappings, both the program's), then wakes whoever waits there. A fault whose
 * page is mapped already is the same first touch again (its task left the fault for a
 * ptrace interrupt before it was resolved, and touched again): counted once, or timing
 * would choose the count. */
static bool resolve(struct space *sp, uint64_t addr)
{
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);
	int64_t done;
	bool first = zeropage(sp->uffd, page, PAGE, &done);
	if (first)
		atomic_fetch_add(&sp->counted, TOUCH_WEIGHT);
	uint64_t size = TOUCH_BLOCK, start = page & ~(size - 1);
	while (first && !fill(sp->uffd, start, start + size) && size > PAGE) {
		size /= 2;
		start = page & ~(size - 1);
	}
	struct uffdio_range range = { first ? start : page, first ? size : PAGE };
	ioctl(sp->uffd, UFFDIO_WAKE, &range);
	return first;
}

/* Reads the faults of space sp, counting each before its task is woken. */
static bool drain(struct space *sp)
{
	bool any = false;
	for (;;) {
		struct uffd_msg msg[16];
		ssize_t n = read(sp->uffd, msg, sizeof(msg));
		if (n <= 0)
			return any;
		for (size_t i = 0; i < (size_t)n / sizeof(msg[0]); i++) {
			if (msg[i].event != UFFD_EVENT_PAGEFAULT)
				continue;
			any |= resolve(sp, msg[i].arg.pagefault.address);
		}
	}
}

static void *fault_thread(void *unused)
{
	(void)unused;
	/* A task waits in its fault until this thread runs: ahead of the machine's other work
	 * if detrun may ask it (root), as its stop loop handles a stop. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10);
	for (;;) {
		struct epoll_event ev[8];
		int n = epoll_wait(epoll_fd, ev, 8, -1);
		bool any = false;
		for (int i = 0; i < n; i++) {
			uint32_t s = (uint32_t)ev[i].data.u64,
				 gen = (uint32_t)(ev[i].data.u64 >> 32);
			pthread_mutex_lock(&lock);
			if (s < MAX_SPACES && spaces[s].used && spaces[s].gen == gen)
				any |= drain(&spaces[s]);
			pthread_mutex_unlock(&lock);
		}
		if (any && !atomic_exchange(&woke, true))
			syscall(SYS_tgkill, getpid(), loop_tid, SIGALRM);
	}
	return NULL;
}

static void start_thread(void)
{
	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (epoll_fd < 0)
		die("first-touch ticks: cannot make the thread's epoll: %s", strerror(errno));
	loop_tid = (pid_t)syscall(SYS_gettid);
	/* A descriptor for each process alive: one refused (EMFILE) would leave a process
	 * uncounted where timing chose (how many others had gone by then). */
	struct rlimit files;
	if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
		files.rlim_cur = files.rlim_max;
		setrlimit(RLIMIT_NOFILE, &files);
	}
	page_owner_thread(fault_thread, "first-touch ticks' fault thread");
}

/* ---- the stop loop's side ------------------------------------------------------------------- */

static struct space *space_of(int aspace)
{
	for (int s = 0; s < MAX_SPACES; s++)
		if (spaces[s].used && spaces[s].aspace == aspace)
			return &spaces[s];
	return NULL;
}

/* A userfaultfd for t's address space, made in t (stopped at a call's exit). */
static struct space *open_space(struct task *t)
{
	int s = 0;
	while (s < MAX_SPACES && spaces[s].used)
		s++;
	if (s == MAX_SPACES)
		return NULL;
	struct page_owner po;
	if (page_owner_open(t, &po) != 0)
		return NULL;
	if (!po.kernel_faults) { /* the kernel's own first touches would fail with EFAULT */
		page_owner_close(&po);
		return NULL;
	}
	if (epoll_fd < 0)
		start_thread();
	struct space *sp = &spaces[s];
	pthread_mutex_lock(&lock);
	sp->used = true;
	sp->aspace = t->proc->aspace;
	sp->uffd = po.uffd;
	sp->gen++;
	atomic_store(&sp->counted, 0);
	pthread_mutex_unlock(&lock);
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.u64 = (uint64_t)sp->gen << 32 | (uint32_t)s };
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, sp->uffd, &ev) < 0)
		die("first-touch ticks: cannot watch a userfaultfd: %s", strerror(errno));
	return sp;
}

static void close_space(struct space *sp)
{
	pthread_mutex_lock(&lock);
	epoll_ctl(epoll_fd, EPOLL_CTL_DEL, sp->uffd, NULL);
	close(sp->uffd);
	sp->used = false;
	pthread_mutex_unlock(&lock);
}

static bool is_anonymous_private(long nr, const uint64_t *a)
{
	return nr == SYS_mmap && (a[3] & MAP_ANONYMOUS) &&
	       !(a[3] & (MAP_SHARED | MAP_SHARED_VALIDATE)) && !(a[3] & MAP_HUGETLB);
}

static bool touch_wants_exit(struct task *t, long nr, const uint64_t *args)
{
	return enabled() && !t->proc->touch_failed &&
	       (nr == SYS_brk || is_anonymous_private(nr, args));
}

static bool touch_counts(const struct task *t)
{
	return enabled() && space_of(t->proc->aspace);
}

static void touch_at_entry(struct task *t, long nr, const uint64_t *args)
{
	struct space *sp = enabled() && nr == SYS_madvise && args[2] == MADV_FREE
				   ? space_of(t->proc->aspace)
				   : NULL;
	if (!sp || args[0] % PAGE)
		return;
	struct uffdio_range range = { args[0], (args[1] + PAGE - 1) & ~(uint64_t)(PAGE - 1) };
	ioctl(sp->uffd, UFFDIO_UNREGISTER, &range); /* parts not registered: nothing to do */
}

static void register_range(struct task *t, struct space *sp, uint64_t addr, uint64_t end)
{
	addr = (addr + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	end = (end + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	if (end <= addr)
		return;
	struct uffdio_register reg = { .range = { addr, end - addr },
				       .mode = UFFDIO_REGISTER_MODE_MISSING };
	/* One the kernel refuses (VM_DROPPABLE, a range another userfaultfd has) is not
	 * counted: the same on every run, and no concern of the program's. */
	if (ioctl(sp->uffd, UFFDIO_REGISTER, &reg) < 0)
		trace_event(t, "first-touch ticks: %#llx-%#llx not registered: %s",
			    (unsigned long long)addr, (unsigned long long)end, strerror(errno));
}

/* The space of t's address space, opened now if it has none; NULL when it cannot be (its
 * process then counts no first touches). */
static struct space *space_for(struct task *t)
{
	struct space *sp = space_of(t->proc->aspace);
	if (!sp && !(sp = open_space(t)))
		t->proc->touch_failed = true;
	return sp;
}

static void touch_after_call(struct task *t, long nr, const uint64_t *args, long ret)
{
	struct process *p = t->proc;
	uint64_t brk_before = p->touch_brk;
	if (nr == SYS_brk && ret > 0)
		p->touch_brk = (uint64_t)ret;
	if (ret < 0 && ret > -4096)
		return;
	struct space *sp = space_for(t);
	if (!sp)
		return;
	if (nr == SYS_brk && brk_before)
		register_range(t, sp, brk_before, p->touch_brk);
	else if (nr == SYS_mmap)
		register_range(t, sp, (uint64_t)ret, (uint64_t)ret + args[1]);
}

/* Registers the private anonymous mappings of t's address space (the heap, those without a
 * name): a fork child's copies, which the kernel left unregistered. */
static void register_anonymous(struct task *t, struct space *sp)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", t->tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, ino;
		char perms[5], name[256] = "";
		if (sscanf(line, "%llx-%llx %4s %*s %*s %llu %255s", &start, &end, perms, &ino,
			   name) < 4)
			continue;
		if (perms[3] == 'p' && ino == 0 && (!name[0] || !strcmp(name, "[heap]")))
			register_range(t, sp, start, end);
	}
	fclose(f);
}

void touch_forked(struct task *parent, struct task *child)
{
	struct process *p = child->proc;
	if (!enabled() || parent->proc->aspace == p->aspace || !space_of(parent->proc->aspace))
		return;
	p->touch_brk = parent->proc->touch_brk;
	struct space *sp = space_for(child);
	if (!sp)
		return;
	child->regs_valid = false;
	register_anonymous(child, sp);
}

/* ---- TICK stops ------------------------------------------------------------------------------ */

/* How far a tick moves its domain's clock: one, as an event, and one more for each page of
 * fresh anonymous memory the call maps (mmap of anonymous memory, brk growing the heap).
 * A process that computes without events allocates as it goes (a compiler optimising:
 * about a page per event's time, against a few pages for a loader's burst of mappings at
 * start-up), so its clock keeps pace with the events of processes that make calls. A
 * function of the call's arguments and of the process's earlier brk calls only: the same
 * on every run. Sizes, not addresses, count (the break's growth). */
static uint64_t tick_weight(struct task *t, const struct __ptrace_syscall_info *info)
{
	const uint64_t *a = info->seccomp.args;
	uint64_t pages = 0;
	if (touch_counts(t)) {
		pages = 0; /* its first touches count them (touch_ticks.h) */
	} else if (info->seccomp.nr == SYS_mmap && (a[3] & MAP_ANONYMOUS)) {
		pages = (a[1] + 4095) / 4096;
	} else if (info->seccomp.nr == SYS_brk) {
		uint64_t before = t->proc->tick_brk;
		pages = before && a[0] > before ? (a[0] - before + 4095) / 4096 : 0;
		t->proc->tick_brk = a[0]; /* brk(0), a loader's first, starts over */
	}
	return 1 + pages;
}

/* A tick: a call on the process's own memory map, stopped only to move its domain's clock
 * (syscalls.def, TICK), goes on at once as it would have without the stop, whoever has
 * the timeline. Not while its process dies: that stop is its way out. */
static bool tick_entry(struct task *t, int status)
{
	struct __ptrace_syscall_info info;
	if ((unsigned)status >> 16 != PTRACE_EVENT_SECCOMP || t->proc->dying ||
	    ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) <= 0 ||
	    info.op != PTRACE_SYSCALL_INFO_SECCOMP || info.seccomp.ret_data != SYSCALL_TICK_TAG)
		return false;
	long nr = (long)info.seccomp.nr;
	const uint64_t *a = info.seccomp.args;
	sched_domain_tick(tracer_domain_of(t), tick_weight(t, &info));
	touch_at_entry(t, nr, a);
	spin_stale_interrupt_cut(t, status); /* a stop a probe's interrupt may have lost to */
	t->debugger_saw = false;
	int request = tracer_resume_request(t);
	t->touch_nr = 0;
	/* What it maps is registered at its exit stop (tick_exit). A step of the debugger's
	 * over the call has none: its mapping is not registered. */
	if ((request == PTRACE_CONT || request == PTRACE_SYSCALL) && touch_wants_exit(t, nr, a)) {
		t->touch_pass = request == PTRACE_SYSCALL; /* the exit stop is wanted anyway */
		request = PTRACE_SYSCALL;
		t->touch_nr = nr;
		t->touch_len = a[1];
	}
	if (ptrace(request, t->tid, 0, 0) < 0 && errno != ESRCH)
		task_warn(t, "cannot resume after a tick: %s", strerror(errno));
	return true;
}

/* The exit stop of a tick resumed to it (tick_entry): what the call mapped is registered for
 * first-touch ticks before the program can touch it, and the task goes on, unless the stop
 * was wanted anyway (every call of the process stops, or the debugger asked): it is then
 * handled as before. Any other stop ends the wait for it (a resume by someone else went
 * past the exit). */
static bool tick_exit(struct task *t, int status)
{
	long nr = t->touch_nr;
	t->touch_nr = 0;
	if (!nr || (unsigned)status >> 16 || WSTOPSIG(status) != (SIGTRAP | 0x80) || t->in_call ||
	    t->proc->dying)
		return false;
	struct __ptrace_syscall_info info;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) <= 0 ||
	    info.op != PTRACE_SYSCALL_INFO_EXIT)
		return false;
	uint64_t args[6] = { 0, t->touch_len };
	t->regs_valid = false; /* an injected call saves and restores this stop's */
	touch_after_call(t, nr, args, (long)info.exit.rval);
	if (t->touch_pass)
		return false;
	t->debugger_saw = false;
	if (ptrace(tracer_resume_request(t), t->tid, 0, 0) < 0 && errno != ESRCH)
		task_warn(t, "cannot resume after a tick's exit: %s", strerror(errno));
	return true;
}

bool touch_tick_stop(struct task *t, int status)
{
	return tick_exit(t, status) || tick_entry(t, status);
}

void touch_collect(void)
{
	if (epoll_fd < 0)
		return;
	for (int s = 0; s < MAX_SPACES; s++) {
		uint64_t n = spaces[s].used ? atomic_exchange(&spaces[s].counted, 0) : 0;
		if (!n)
			continue;
		faults += n / TOUCH_WEIGHT;
		struct task *t = tracer_task_in_aspace(spaces[s].aspace, NULL);
		if (t) {
			sched_domain_tick(tracer_domain_of(t), n);
			collected += n;
		}
	}
}

bool touch_woke(void)
{
	return atomic_exchange(&woke, false);
}

void touch_forget(const struct process *gone)
{
	for (int s = 0; s < MAX_SPACES; s++) {
		if (!spaces[s].used)
			continue;
		if (!tracer_task_in_aspace(spaces[s].aspace, gone))
			close_space(&spaces[s]);
	}
}

void touch_report(void)
{
	if (report_trace && faults)
		fprintf(report_trace_out, "[t=%llu] first-touch ticks: %llu faults, %llu ticks\n",
			(unsigned long long)sched_now(), (unsigned long long)faults,
			(unsigned long long)collected);
}
