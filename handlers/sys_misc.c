/* Scheduling hints, randomness, and calls detrun refuses. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "engine/cpu_patch.h"
#include "vkernel/report.h"
#include "syscalls/syscall_table.h"
#include "handlers/sys_common.h"
#include "handlers/sys_files.h"
#include "engine/cpu_emulate.h"
#include "handlers/sys_args.h"
#include "vkernel/memory_domain.h"
#include "engine/page_share.h"
#include "vkernel/random.h"

/* The handler of ALLOW and LOCAL rows. It runs only when one stops (a form naming another
 * process; any ALLOW row with processes in parallel): the stop is the event, and the call
 * then runs natively, as a SERIALIZE row's. */
void sys_none(struct task *t)
{
}

/* Implements sched_yield(2): the task's turn ends, the next task in order runs. */
void sys_sched_yield(struct task *t)
{
	syscall_emulate(t, 0);
	sched_end_turn();
}

/* Refused calls whose absence programs handle (the table gives each one's reason). */
void sys_enosys(struct task *t)
{
	syscall_emulate(t, -ENOSYS);
}

/* The first refusal of number `nr`? Every number is remembered, table or not (a program
 * may try unknown numbers in a loop: one line each, not one a call). */
static bool first_refusal(long nr)
{
	static uint64_t warned[1024 / 64];
	static long others[64];
	static int n_others;
	if (nr >= 0 && nr < 1024) {
		bool first = !(warned[nr / 64] & (1ULL << (nr % 64)));
		warned[nr / 64] |= 1ULL << (nr % 64);
		return first;
	}
	for (int i = 0; i < n_others; i++)
		if (others[i] == nr)
			return false;
	if (n_others == 64)
		return false;
	others[n_others++] = nr;
	return true;
}

/* UNSUPPORTED rows, and numbers without a row: ENOSYS, and the first time each is refused
 * a hazard that names it and gives the table's reason. A number the table does not know
 * is a call newer than detrun: run natively it could sleep in the kernel with the group's
 * only turn, or reveal what detrun hides (as gVisor, it fails instead). */
void sys_unsupported(struct task *t)
{
	long nr = t->syscall_nr;
	const struct syscall_entry *e = syscall_lookup(nr);
	/* A negative number is no call at all (syscall(-1) marks a point for rr's tests):
	 * the kernel says ENOSYS, and so does detrun, without a word. */
	if (nr >= 0 && first_refusal(nr)) {
		if (e)
			hazard(t, "%s is not supported (%s): returning ENOSYS", e->name, e->reason);
		else
			hazard(t,
			       "system call %ld is not in detrun's table (newer than detrun?): "
			       "returning ENOSYS",
			       nr);
	}
	syscall_emulate(t, -ENOSYS);
}

/* Implements syslog(2): SYSLOG_ACTION_READ sleeps until the kernel logs something, which
 * no task of the group can cause; it is refused (EPERM, as for an unprivileged caller). */
void sys_syslog(struct task *t)
{
	if (syscall_arg(t, 0) != 2 /* SYSLOG_ACTION_READ */)
		return;
	hazard(t, "syslog(SYSLOG_ACTION_READ) waits for kernel messages outside the group: "
		  "returning EPERM");
	syscall_emulate(t, -EPERM);
}

void sys_eperm(struct task *t)
{
	syscall_emulate(t, -EPERM);
}

/* Every page of the range resident. */
static void all_resident(struct task *t)
{
	if (syscall_result(t) != 0)
		return;
	uint64_t page = 4096, len = syscall_arg(t, 1), vec = syscall_arg(t, 2);
	uint64_t pages = (len + page - 1) / page;
	static uint8_t ones[4096];
	if (!ones[0])
		memset(ones, 1, sizeof(ones));
	for (uint64_t done = 0; done < pages; done += sizeof(ones)) {
		uint64_t n = pages - done < sizeof(ones) ? pages - done : sizeof(ones);
		if (remote_write(t, REMOTE(vec + done), ones, n)) {
			task_warn(t, "cannot write mincore's vector");
			return;
		}
	}
}

/* Implements mincore(2). Whether a file's page is in the page cache depends on the host's
 * other processes and its memory; whether an anonymous one is, on swapping and on when
 * the kernel fills it. The group sees every page of a mapped range resident, as on a
 * machine with memory to spare that has read every file it maps; the call still runs, so
 * a range not mapped fails as before. */
void sys_mincore(struct task *t)
{
	tracer_want_exit(t, all_resident);
}

/* Implements perf_event_open(2): ENOENT, "no such event", for every kind. Software events
 * (task-clock, page faults, context switches) measure the real run as much as hardware
 * counters do, and a program that uses counters already copes with machines, VMs and
 * containers that have none. */
void sys_perf_event_open(struct task *t)
{
	syscall_emulate(t, -ENOENT);
}

int64_t random_to_tracee(struct task *t, uint64_t addr, uint64_t len)
{
	unsigned char chunk[4096];
	uint64_t done = 0;
	while (done < len) {
		size_t n = len - done < sizeof(chunk) ? (size_t)(len - done) : sizeof(chunk);
		random_fill(chunk, n);
		if (remote_write(t, REMOTE(addr + done), chunk, n))
			break;
		done += n;
	}
	return done || !len ? (int64_t)done : -EFAULT;
}

/* Implements getrandom(2) from the seeded generator. */
void sys_getrandom(struct task *t)
{
	uint64_t len = syscall_arg(t, 1);
	syscall_emulate(t, random_to_tracee(t, syscall_arg(t, 0), len > 33554431 ? 33554431 : len));
}

/* Was the task's descriptor fd opened read-only? A shared mapping of it can then never be
 * written (the kernel clears VM_MAYWRITE). False when fdinfo cannot be read (the careful
 * side: a writable mapping shares with every other). */
static bool opened_read_only(struct task *t, int fd)
{
	unsigned int flags;
	return fdinfo_scan(t->tid, fd, "flags: %o", &flags) && (flags & O_ACCMODE) == O_RDONLY;
}

/* The object a successful mmap(MAP_SHARED) maps: a new anonymous region (MAP_ANONYMOUS, or
 * /dev/zero, which the kernel makes one), or the file, memfd or shm_open object of its
 * descriptor by device and inode. False when the descriptor cannot be looked at. */
static bool mapped_object(struct task *t, struct shared_object *o)
{
	*o = (struct shared_object){ SHARED_ANON, 0, 0, false };
	struct stat st;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", t->tid, (int)syscall_arg(t, 4));
	if (!(syscall_arg(t, 3) & MAP_ANONYMOUS)) {
		if (stat(path, &st) < 0)
			return false;
		if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 5))
			*o = (struct shared_object){ SHARED_FILE, st.st_dev, st.st_ino,
						     opened_read_only(t, (int)syscall_arg(t, 4)) };
	}
	if (o->kind == SHARED_ANON)
		o->a = memory_domain_new_anon();
	return true;
}

/* A file of a replay's view (engine/file_view.h) lives in a tmpfs, whatever the directory
 * below it: page ownership takes it only if the recording's file was in one too. */
static bool view_file_off_shmem(const struct shared_object *o)
{
	bool shmem;
	return o->kind == SHARED_FILE && files_view_device(o->a, &shmem) && !shmem;
}

/* With processes in parallel, at the exit of a call that may map shared memory: the
 * caller's memory domain joins those of the processes that map the same object. */
static void shared_mapped(struct task *t)
{
	struct shared_object o = { SHARED_SYSV, syscall_arg(t, 0), 0, false };
	int64_t r = syscall_result(t);
	if (r < 0 && r > -4096) /* failed: nothing mapped */
		return;
	if (t->syscall_nr == __NR_mmap) {
		if (!(syscall_arg(t, 3) & MAP_SHARED)) /* MAP_SHARED_VALIDATE has the bit too */
			return;
		if (!mapped_object(t, &o)) {
			task_warn(t, "cannot look at the descriptor a shared mapping maps: its "
				     "sharers are not known to run one at a time");
			return;
		}
	}
	/* Shmem between domains by page ownership; what the kernel will not register (SysV
	 * shm, files of other filesystems) merges the domains. */
	if (t->syscall_nr == __NR_mmap && page_share_on() && !view_file_off_shmem(&o) &&
	    page_share_map(t, &o, (uint64_t)r, syscall_arg(t, 1), syscall_arg(t, 5) / 4096,
			   (syscall_arg(t, 2) & PROT_WRITE) != 0) == 0) {
		trace_event(t, "  shared memory: pages owned, memory domain %d",
			    memory_domain_of(t->proc));
		return;
	}
	memory_domain_map(t->proc, o);
	trace_event(t, "  shared memory: memory domain %d", memory_domain_of(t->proc));
}

/* Does the call's mapping hold code? mmap and shmat stop without PROT_EXEC or SHM_EXEC
 * too, with processes in parallel (STOP_WHEN_SHARED); mprotect stops only for code. */
static bool maps_code(struct task *t)
{
	if (t->proc->read_implies_exec)
		return true;
	if (t->syscall_nr == __NR_mmap)
		return syscall_arg(t, 2) & PROT_EXEC;
	if (t->syscall_nr == __NR_shmat)
		return syscall_arg(t, 2) & SHM_EXEC;
	return true;
}

static void mapped(struct task *t)
{
	if (maps_code(t))
		code_mapped(t);
	if (tracer_opts->jobs > 1 && (t->syscall_nr == __NR_mmap || t->syscall_nr == __NR_shmat))
		shared_mapped(t);
}

/* Implements mmap(2), mprotect(2) and pkey_mprotect(2) with PROT_EXEC, and shmat(2) with
 * SHM_EXEC: the code is patched once mapped. With processes in parallel, mmap(MAP_SHARED)
 * and shmat: the memory domains of the processes that map the same object merge. */
void sys_map_code(struct task *t)
{
	tracer_want_exit(t, mapped);
}

static void remapped(struct task *t)
{
	int64_t at = syscall_result(t);
	if (at < 0 && at > -4096)
		return;
	page_share_remapped(t, syscall_arg(t, 0), syscall_arg(t, 1), (uint64_t)at,
			    t->exit.remap.len);
	const char *step;
	int err = t->exit.remap.code ? cpu_patch_range(t, (uint64_t)at,
						       (uint64_t)at + t->exit.remap.len, &step)
				     : 0;
	if (err)
		task_setup_failed(t, step, err);
}

/* Implements mremap(2): a moved or grown mapping of code may show code not scanned yet
 * (the part that grew); only the new range is looked at. Shared memory under page
 * ownership is registered again where it went (the kernel drops the registration of a
 * moved mapping). Other data mappings (realloc) run on. */
void sys_remap_code(struct task *t)
{
	uint64_t old = syscall_arg(t, 0), old_size = syscall_arg(t, 1);
	uint64_t end = old + (old_size ? old_size : 1);
	bool code = cpu_patch_is_code(t->proc->aspace, old, end);
	if (!code && !page_share_covers(t->proc, old, end - old))
		return;
	t->exit.remap.len = syscall_arg(t, 2);
	t->exit.remap.code = code;
	tracer_want_exit(t, remapped);
}

static void persona_set(struct task *t)
{
	if (syscall_result(t) < 0)
		return;
	syscall_set_result(t, t->exit.persona.previous); /* the program's previous setting */
	t->proc->persona = t->exit.persona.requested;
	t->proc->read_implies_exec |= (t->proc->persona & READ_IMPLIES_EXEC) != 0;
}

/* Implements personality(2): the program's own setting is kept and reported, while the
 * kernel's keeps ADDR_NO_RANDOMIZE (`setarch x86_64 PROG` would otherwise bring ASLR back
 * for PROG). 0xffffffff only asks. */
void sys_personality(struct task *t)
{
	unsigned persona = (unsigned)syscall_arg(t, 0);
	if (persona == 0xffffffffu) {
		syscall_emulate(t, t->proc->persona);
		return;
	}
	t->exit.persona.previous = t->proc->persona;
	t->exit.persona.requested = persona;
	syscall_set_arg(t, 0, persona | ADDR_NO_RANDOMIZE);
	tracer_want_exit(t, persona_set);
}

/* Implements arch_prctl(2) for ARCH_MAP_VDSO_* (the only codes that stop): refused unless
 * --keep-vdso, since a vDSO reads the real clock without a syscall. */
void sys_arch_prctl(struct task *t)
{
	if (tracer_opts->keep_vdso || (syscall_arg(t, 0) & ~0xfULL) != 0x2000)
		return;
	hazard(t, "arch_prctl(ARCH_MAP_VDSO) refused: the vDSO would read the real clock "
		  "(--keep-vdso allows it)");
	syscall_emulate(t, -EPERM);
}
