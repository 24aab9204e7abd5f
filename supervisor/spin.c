#include "supervisor/spin.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "scheduler/scheduler.h"
#include "supervisor/task.h"
#include "supervisor/remote.h"
#include "supervisor/report.h"
#include "supervisor/stack.h"
#include "syscalls/syscall_table.h"
#include "supervisor/tracer.h"

enum {
	SAMPLES = 6,                  /* register samples per probe */
	SAMPLE_GAP_US = 1500,         /* wall time before the first look at a sample's run */
	SAMPLE_CPU_NS = 1000000,      /* CPU time the task must use between two samples */
	SAMPLE_WAIT_US = 500000,      /* longest wall-clock wait for that CPU time */
	MAX_BUDGET_MS = 4000,         /* a computing task is looked at no less often than this */
	READONLY_PATIENCE = 8,        /* probes a changing read-only loop gets before a hazard */
	MAX_DIGEST_BYTES = 256 << 20, /* memory digested per probe (where pages are not tracked) */
};

/* ---- the task's own CPU time ------------------------------------------------------------ */

/* Nanoseconds t has run, in the kernel too (/proc/TID/schedstat); -1 when it is gone. On a
 * busy machine wall time says nothing about how far a task got; its CPU time does. */
static int64_t task_cpu_ns(const struct task *t)
{
	char path[64], buf[128];
	snprintf(path, sizeof(path), "/proc/%d/schedstat", t->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

void spin_start(struct task *t)
{
	t->run_cpu_ns = task_cpu_ns(t);
}

int spin_remaining_ms(struct task *t, int budget_ms)
{
	int64_t now = task_cpu_ns(t);
	if (now < 0 || t->run_cpu_ns < 0)
		return 0; /* cannot tell: look, the probe finds out what became of it */
	int64_t left = budget_ms * 1000000LL - (now - t->run_cpu_ns);
	return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}

/* ---- native calls a probe cuts short ------------------------------------------------------- */

/* The kernel's restart codes: the call did not happen and is restarted through its syscall
 * instruction, so through the filter again (ERESTART_RESTARTBLOCK restarts through
 * restart_syscall, which the filter allows). */
static bool restarted_by_kernel(const struct task *t)
{
	int64_t ax = syscall_result(t);
	return syscall_number(t) >= 0 && ax <= -512 && ax >= -514;
}

static uint64_t args_digest(const struct task *t)
{
	uint64_t h = 1469598103934665603ULL;
	for (int i = 0; i < 6; i++)
		h = (h ^ syscall_arg(t, i)) * 1099511628211ULL;
	return h;
}

/* A probe's interrupt found t inside a native call that the kernel will restart. Without
 * the probe the call would have run once: its restart must not be a second event (nor run
 * its handler twice). Same call = same number, same place, same arguments — a new call
 * with the same arguments as an allowed one would not stop at all. */
static void mark_restart(struct task *t, int request)
{
	t->probe_restart_nr = syscall_number(t);
	t->probe_restart_rip = task_ip(t);
	t->probe_restart_args = args_digest(t);
	t->probe_restart_request = request;
}

bool spin_restarted(struct task *t, bool seccomp)
{
	long nr = t->probe_restart_nr;
	t->probe_restart_nr = -1;
	if (nr < 0 || !seccomp || remote_load_regs(t))
		return false;
	if (syscall_number(t) != nr || task_ip(t) != t->probe_restart_rip ||
	    args_digest(t) != t->probe_restart_args)
		return false;
	t->resume = t->probe_restart_request == PTRACE_SYSCALL ? RESUME_SYSCALL : RESUME_CONT;
	return true;
}

/* ---- stopping and starting the task ---------------------------------------------------- */

static int wait_for(const struct task *t, int *status)
{
	for (;;) {
		pid_t got = waitpid(t->tid, status, __WALL);
		if (got == t->tid)
			return 0;
		if (got < 0 && errno != EINTR)
			return -1;
	}
}

/* Interrupts t and waits for the interrupt stop. A different stop (t reached an event
 * first) is handed to `handle` and reported as false. */
static bool interrupt(struct task *t, void (*handle)(int, int))
{
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return false;
	int status;
	for (;;) {
		if (wait_for(t, &status))
			return false;
		if (WIFSTOPPED(status) && ((unsigned)status >> 16) == PTRACE_EVENT_STOP) {
			t->regs_valid = false;
			return true;
		}
		/* A syscall-exit stop with a restart code: the interrupt cut short a native call
		 * t was resumed into with PTRACE_SYSCALL. Its exit is the restarted call's, later;
		 * on to the interrupt stop. */
		t->regs_valid = false;
		if (WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80) &&
		    remote_load_regs(t) == 0 && restarted_by_kernel(t)) {
			mark_restart(t, PTRACE_SYSCALL);
			t->regs_valid = false;
			ptrace(PTRACE_CONT, t->tid, 0, 0);
			continue;
		}
		handle(t->tid, status);
		return false;
	}
}

bool spin_interrupt(struct task *t, void (*handle)(int, int))
{
	return interrupt(t, handle);
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool blocked_in_kernel(const struct task *t);

/* Lets t run until it has used SAMPLE_CPU_NS more CPU time, however long it waits for a
 * CPU. False when it did not get that within SAMPLE_WAIT_US, or sleeps in the kernel: the
 * samples would then show a task that did not run, not one that spins. */
static bool run_some(struct task *t)
{
	int64_t from = task_cpu_ns(t);
	ptrace(tracer_resume_request(t), t->tid, 0, 0);
	sleep_us(SAMPLE_GAP_US);
	for (long waited = SAMPLE_GAP_US; waited < SAMPLE_WAIT_US; waited += 250) {
		int64_t now = task_cpu_ns(t);
		if (from < 0 || now < 0 || now - from >= SAMPLE_CPU_NS)
			return true;
		if (blocked_in_kernel(t))
			return false;
		sleep_us(250);
	}
	return false;
}

/* ---- memory watch ------------------------------------------------------------------------ */

/*
 * Which pages did the task write? The kernel says, without reading any memory: each
 * writable mapping is registered with a userfaultfd in write-protect *async* mode for the
 * length of the probe, its pages are write-protected, and PAGEMAP_SCAN on
 * /proc/PID/pagemap lists the pages written since (the kernel resolves each write fault
 * itself, so no writer ever blocks — the reason plain uffd write-protection was dropped
 * earlier). Soft-dirty bits would do the same but CONFIG_MEM_SOFT_DIRTY is often off
 * (it is on this project's VMs). A written page is not yet a changed one — a spin on
 * `atomic_exchange(&lock, 1)` writes the same value forever — so the pages written in a
 * first short window are hashed, and the verdict window that follows counts as unchanged
 * only if every page it wrote was among them and still hashes the same.
 *
 * Write tracking is per address space (any thread's writes, and the kernel's through
 * copy_to_user), covers anonymous, private file-backed and shared mappings alike, and
 * sees through THP (a huge page is split when partly protected) and KSM (merged pages
 * are copied on the first write as always). It does not see writes another process makes
 * to shared memory through its own mapping: in the serial group no other member runs
 * during a probe. fork() copies no registration (no UFFD_FEATURE_EVENT_FORK): the child's
 * pages are plain. Mappings the kernel refuses to register (the program's own userfaultfd
 * holds them, say) fall back to a digest of their contents, as everything did before.
 * Registration is undone when the task reaches its next event (spin_end), so it is never
 * visible to the program at an event (/proc/PID/smaps flags, a registration of its own);
 * between probes of one long run only the pages written since are protected again.
 */

#define UFFD_FEATURE_WP_ASYNC_ (1ULL << 15)
#define PAGE_IS_WRITTEN_ (1ULL << 1)
struct page_region_ {
	uint64_t start, end, categories;
};
struct pm_scan_arg_ {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN_ _IOWR('f', 16, struct pm_scan_arg_)
#define PM_SCAN_WP_MATCHING_ (1ULL << 0)

enum {
	MAX_HASHED_PAGES = 4096, /* pages a first window may write and still be compared */
	MAX_SPACES = 64,
};

/* One userfaultfd per address space, made inside the task and held by detrun. */
static struct space {
	int aspace;
	int uffd, pagemap;
} spaces[MAX_SPACES];
static int n_spaces;
static int watch_mode = -1; /* 1: pages (userfaultfd), 0: digest everything */

/* The mappings registered and protected during the running task's current run. */
static struct {
	struct space *space;
	struct range_ {
		uint64_t start, end;
	} * r;
	int n, cap;
} active;

static bool aspace_alive(int aspace)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u->proc->aspace == aspace && u->state != TASK_DEAD)
			return true;
	return false;
}

void spin_end(void)
{
	for (int i = 0; i < active.n; i++) {
		struct uffdio_range range = { active.r[i].start,
					      active.r[i].end - active.r[i].start };
		ioctl(active.space->uffd, UFFDIO_UNREGISTER, &range);
	}
	active.n = 0;
	active.space = NULL;
}

static bool is_active(uint64_t start, uint64_t end)
{
	for (int i = 0; i < active.n; i++)
		if (active.r[i].start == start && active.r[i].end == end)
			return true;
	return false;
}

static void add_active(struct space *s, uint64_t start, uint64_t end)
{
	if (active.n == active.cap) {
		active.cap = active.cap ? active.cap * 2 : 64;
		active.r = realloc(active.r, (size_t)active.cap * sizeof(*active.r));
		if (!active.r)
			abort();
	}
	active.space = s;
	active.r[active.n++] = (struct range_){ start, end };
}

static void forget_dead_spaces(void)
{
	for (int i = 0; i < n_spaces;)
		if (!aspace_alive(spaces[i].aspace)) {
			if (spaces[i].uffd >= 0)
				close(spaces[i].uffd);
			if (spaces[i].pagemap >= 0)
				close(spaces[i].pagemap);
			spaces[i] = spaces[--n_spaces];
		} else {
			i++;
		}
}

/* A userfaultfd for t's address space: created by an injected call in t (the descriptor
 * lives in t's table only for the moment it takes to duplicate and close it). */
static int make_uffd(struct task *t)
{
	/* User-mode faults only: the program runs without CAP_SYS_PTRACE (launch.c), which
	 * a userfaultfd for kernel faults needs; write-protect async faults are resolved by
	 * the kernel whoever writes. */
	long fd = remote_syscall(t, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY,
				 0, 0, 0, 0, 0);
	if (fd < 0)
		return -1;
	int mine = remote_dup_fd(t, (int)fd);
	remote_syscall(t, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0);
	if (mine < 0)
		return -1;
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC_ };
	if (ioctl(mine, UFFDIO_API, &api) < 0) {
		close(mine);
		return -1;
	}
	return mine;
}

static struct space *space_of(struct task *t)
{
	if (watch_mode < 0) {
		const char *m = getenv("DETRUN_SPIN_WATCH");
		watch_mode = !(m && !strcmp(m, "digest"));
	}
	if (!watch_mode)
		return NULL;
	for (int i = 0; i < n_spaces; i++)
		if (spaces[i].aspace == t->proc->aspace)
			return spaces[i].uffd >= 0 ? &spaces[i] : NULL;
	forget_dead_spaces();
	if (n_spaces == MAX_SPACES)
		return NULL;
	struct space *s = &spaces[n_spaces++];
	*s = (struct space){ t->proc->aspace, make_uffd(t), -1 };
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->tid);
	if (s->uffd >= 0)
		s->pagemap = open(path, O_RDONLY | O_CLOEXEC);
	if (s->pagemap < 0 && s->uffd >= 0) {
		close(s->uffd);
		s->uffd = -1;
	}
	return s->uffd >= 0 ? s : NULL;
}

struct region {
	uint64_t start, end;
	uint64_t digest; /* untracked regions: a digest of the contents */
	bool tracked;    /* registered: the kernel tracks its written pages */
};

struct page_hash {
	uint64_t addr, hash;
};

struct probe {
	struct region *regions;
	int n;
	bool untrackable; /* digested memory too large to compare */
	bool overflow;    /* the first window wrote too many pages to compare */
	struct space *space;
	struct page_hash *pages;
	int npages;
};

static uint64_t digest(struct task *t, uint64_t start, uint64_t end)
{
	uint64_t h = 1469598103934665603ULL;
	static unsigned char buf[1 << 16];
	for (uint64_t a = start; a < end; a += sizeof(buf)) {
		size_t n = end - a < sizeof(buf) ? (size_t)(end - a) : sizeof(buf);
		if (remote_read(t, REMOTE(a), buf, n))
			return 0;
		for (size_t i = 0; i < n; i += 8) {
			uint64_t w;
			memcpy(&w, buf + i, 8);
			h = (h ^ w) * 1099511628211ULL;
		}
	}
	return h;
}

static bool track(struct space *s, struct region *r)
{
	struct uffdio_register reg = { .range = { r->start, r->end - r->start },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	if (ioctl(s->uffd, UFFDIO_REGISTER, &reg) < 0)
		return false;
	struct uffdio_writeprotect wp = { .range = reg.range, .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	if (ioctl(s->uffd, UFFDIO_WRITEPROTECT, &wp) < 0) {
		ioctl(s->uffd, UFFDIO_UNREGISTER, &reg.range);
		return false;
	}
	return true;
}

/* Calls `fn` for every run of pages of r written since it was last protected; with
 * `protect`, protects them again. Stops early when fn returns false (then false). */
static bool written_pages(struct probe *p, const struct region *r, bool protect,
			  bool (*fn)(struct probe *, uint64_t, uint64_t, void *), void *arg)
{
	struct page_region_ vec[256];
	uint64_t from = r->start;
	while (from < r->end) {
		struct pm_scan_arg_ a = {
			.size = sizeof(a),
			.flags = protect ? PM_SCAN_WP_MATCHING_ : 0,
			.start = from,
			.end = r->end,
			.vec = (uint64_t)(uintptr_t)vec,
			.vec_len = 256,
			.category_mask = PAGE_IS_WRITTEN_,
			.return_mask = PAGE_IS_WRITTEN_,
		};
		long n = ioctl(p->space->pagemap, PAGEMAP_SCAN_, &a);
		if (n < 0)
			return fn(p, r->start, r->end, arg); /* cannot tell: all of it */
		for (long i = 0; i < n; i++)
			if (!fn(p, vec[i].start, vec[i].end, arg))
				return false;
		if (a.walk_end <= from)
			break;
		from = a.walk_end;
	}
	return true;
}

static bool hash_pages(struct probe *p, uint64_t start, uint64_t end, void *t)
{
	for (uint64_t a = start; a < end; a += 4096) {
		if (p->npages == MAX_HASHED_PAGES) {
			p->overflow = true;
			return false;
		}
		p->pages[p->npages++] = (struct page_hash){ a, digest(t, a, a + 4096) };
	}
	return true;
}

/* True (go on) while every page written is one hashed before and still hashes the same. */
static bool same_pages(struct probe *p, uint64_t start, uint64_t end, void *t)
{
	for (uint64_t a = start; a < end; a += 4096) {
		int lo = 0, hi = p->npages;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (p->pages[mid].addr < a)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == p->npages || p->pages[lo].addr != a ||
		    digest(t, a, a + 4096) != p->pages[lo].hash)
			return false;
	}
	return true;
}

static bool ignore_pages(struct probe *p, uint64_t start, uint64_t end, void *t)
{
	return true;
}

/* Begins the watch: writable mappings are registered and protected (those registered at
 * an earlier probe of this run: their pages written since are protected again), or, failing
 * that, marked for a digest. Nothing is read yet. */
static void watch_memory(struct probe *p, struct task *t)
{
	*p = (struct probe){ 0 };
	p->space = space_of(t);
	if (active.space && active.space != p->space)
		spin_end();
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", t->tid);
	FILE *f = fopen(path, "re");
	if (!f) {
		p->untrackable = true;
		return;
	}
	int cap = 0;
	uint64_t digested = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char perms[8], name[256] = "";
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &start, &end, perms, name) < 3)
			continue;
		if (perms[1] != 'w' || !strcmp(name, "[vvar]") || !strcmp(name, "[vdso]"))
			continue;
		if (p->n == cap) {
			cap = cap ? cap * 2 : 64;
			p->regions = realloc(p->regions, (size_t)cap * sizeof(*p->regions));
			if (!p->regions)
				abort();
		}
		struct region *r = &p->regions[p->n++];
		*r = (struct region){ start, end, 0, false };
		if (p->space && is_active(start, end)) {
			r->tracked = true;
			written_pages(p, r, true, ignore_pages, t);
		} else if (p->space && track(p->space, r)) {
			r->tracked = true;
			add_active(p->space, start, end);
		}
		if (!r->tracked && (digested += end - start) > MAX_DIGEST_BYTES)
			p->untrackable = true;
	}
	fclose(f);
}

/* Between the first window and the verdict window: hash the pages the first one wrote
 * (protecting them again) and digest the untracked mappings. */
static void watch_settle(struct probe *p, struct task *t)
{
	if (p->untrackable)
		return;
	for (int i = 0; i < p->n; i++) {
		struct region *r = &p->regions[i];
		if (!r->tracked) {
			r->digest = digest(t, r->start, r->end);
			continue;
		}
		if (!p->pages && !(p->pages = malloc(MAX_HASHED_PAGES * sizeof(*p->pages))))
			abort();
		if (!p->overflow)
			written_pages(p, r, true, hash_pages, t);
	}
}

/* Ends the watch; true if watched memory changed during the verdict window. (The
 * registrations stay until spin_end.) */
static bool unwatch_memory(struct probe *p, struct task *t, bool judge)
{
	bool changed = p->untrackable || p->overflow;
	for (int i = 0; i < p->n && judge && !changed; i++) {
		struct region *r = &p->regions[i];
		if (r->tracked)
			changed = !written_pages(p, r, false, same_pages, t);
		else
			changed = digest(t, r->start, r->end) != r->digest;
	}
	free(p->regions);
	free(p->pages);
	return changed;
}

/* ---- the verdict ---------------------------------------------------------------------------- */

static bool same_state(const struct user_regs_struct *a, const struct user_regs_struct *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* In a syscall the task cannot take injected calls cleanly; it is not spinning there. */
static bool in_syscall(const struct task *t)
{
	int64_t ax = syscall_result(t);
	return syscall_number(t) >= 0 && ax <= -512 && ax >= -516;
}

void spin_note_interrupted_call(struct task *t)
{
	if (restarted_by_kernel(t))
		mark_restart(t, PTRACE_CONT);
}

static void longer_budget(struct task *t)
{
	t->run_budget_ms = (t->run_budget_ms ? t->run_budget_ms : 10) * 2;
	if (t->run_budget_ms > MAX_BUDGET_MS)
		t->run_budget_ms = MAX_BUDGET_MS;
}

/* Sleeping in a syscall the kernel runs for it (a blocking connect, a write to a slow pipe
 * outside): not a spin, and interrupting it would make the kernel restart the call — an
 * extra event that a replay, where the call does not wait, would not have. */
static bool blocked_in_kernel(const struct task *t)
{
	char path[64], state[16] = "";
	snprintf(path, sizeof(path), "/proc/%d/syscall", t->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, state, sizeof(state) - 1);
	close(fd);
	return n > 0 && strncmp(state, "running", 7) != 0;
}

static enum spin_verdict keep_running(struct task *t)
{
	longer_budget(t);
	ptrace(tracer_resume_request(t), t->tid, 0, 0);
	return SPIN_KEEP_RUNNING;
}

static enum spin_verdict deschedule(struct task *t)
{
	t->spin_probes = 0;
	t->spin_descheduled = true;
	t->state = TASK_STOPPED;
	t->syscall_nr = -1;
	return SPIN_DESCHEDULE;
}

enum sampling {
	SAMPLED,
	SAMPLING_MET_EVENT,
	SAMPLING_INCONCLUSIVE,
	SAMPLING_SAW_WRITES
};

/* Lets t run in short slices, sampling its registers after each into samples[0..SAMPLES].
 * A first window shows which pages the loop writes; the verdict window follows. */
static enum sampling take_samples(struct task *t, void (*handle)(int, int),
				  struct user_regs_struct *samples)
{
	struct probe probe;
	watch_memory(&probe, t);
	for (int taken = 0; taken <= SAMPLES; taken++) {
		bool ran = run_some(t);
		if (!interrupt(t, handle)) {
			unwatch_memory(&probe, t, false);
			return SAMPLING_MET_EVENT;
		}
		if (!ran) {
			unwatch_memory(&probe, t, false);
			return SAMPLING_INCONCLUSIVE; /* not a verdict: look again later */
		}
		remote_load_regs(t);
		samples[taken] = t->regs;
		if (taken == 0)
			watch_settle(&probe, t);
	}
	return unwatch_memory(&probe, t, true) ? SAMPLING_SAW_WRITES : SAMPLED;
}

/* Samples of a loop that wrote no memory: registers identical at the final stop and an
 * earlier sample, with at least SAMPLE_CPU_NS of the task's own running between them, are
 * a pure spin; changing registers are one only if they keep changing for long. */
static enum spin_verdict judge_samples(struct task *t, const struct user_regs_struct *samples)
{
	for (int i = 0; i < SAMPLES; i++)
		if (same_state(&samples[i], &samples[SAMPLES])) {
			trace_event(t, "  spin: no writes, state repeats at 0x%llx; descheduled",
				    (unsigned long long)task_ip(t));
			return deschedule(t);
		}
	if (++t->spin_probes < READONLY_PATIENCE)
		return keep_running(t);
	hazard(t, "a loop that writes no memory but whose registers change kept running "
		  "without an event; descheduled at a point chosen by timing, so this "
		  "task's later behaviour may vary between runs");
	stack_report(t, "spinning here");
	return deschedule(t);
}

enum spin_verdict spin_check(struct task *t, void (*handle)(int, int))
{
	if (blocked_in_kernel(t)) {
		longer_budget(t);
		return SPIN_KEEP_RUNNING;
	}
	t->probe_restart_nr = -1;
	if (!interrupt(t, handle))
		return SPIN_EVENT;
	if (remote_load_regs(t))
		return keep_running(t);
	if (in_syscall(t)) {
		if (restarted_by_kernel(t))
			mark_restart(t, PTRACE_CONT);
		return keep_running(t);
	}
	if (!t->proc->syscall_insn)
		return keep_running(t);
	struct user_regs_struct samples[SAMPLES + 1];
	switch (take_samples(t, handle, samples)) {
	case SAMPLING_MET_EVENT:
		return SPIN_EVENT;
	case SAMPLING_INCONCLUSIVE:
		return keep_running(t);
	case SAMPLING_SAW_WRITES:
		t->spin_probes = 0;
		return keep_running(t);
	case SAMPLED:
		break;
	}
	return judge_samples(t, samples);
}

/* Can this machine count a task's branches (what would let detrun stop a loop at a
 * deterministic point)? Asked once. */
static bool branch_counters_present(void)
{
	static int present = -1;
	if (present < 0) {
		struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE,
					     .size = sizeof(a),
					     .config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
					     .disabled = 1,
					     .exclude_kernel = 1,
					     .exclude_hv = 1 };
		int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		present = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	return present;
}

enum spin_verdict spin_preempt_for_timer(struct task *t, void (*handle)(int, int), int64_t ran_ms)
{
	if (blocked_in_kernel(t))
		return SPIN_KEEP_RUNNING; /* a call the kernel runs: interrupting it would restart it */
	if (!interrupt(t, handle))
		return SPIN_EVENT;
	if (!t->timer_hazard_shown) {
		t->timer_hazard_shown = true;
		hazard(t,
		       "a loop without syscalls that stop kept running while a timer signal "
		       "was due; %s, so it is stopped where the wall clock found it "
		       "(after %lld ms) and the signal lands there: this task's output may vary "
		       "between runs",
		       branch_counters_present()
			       ? "this machine has branch counters, which detrun does not use yet"
			       : "without branch counters no deterministic point can be chosen",
		       (long long)ran_ms);
		stack_report(t, "running here");
	} else {
		trace_event(t, "  loop stopped by the wall clock for a timer signal");
	}
	t->spin_probes = 0;
	t->spin_descheduled = true;
	t->state = TASK_STOPPED;
	t->syscall_nr = -1;
	return SPIN_DESCHEDULE;
}
