/*
 * ptrace(2) inside the group: a member tracing a member, emulated on detrun's own stops.
 *
 * detrun stays the only real tracer of every task. In serial mode every task but the one
 * running sits in a stop of detrun's, so a tracee its tracer stops (PTRACE_ATTACH's
 * SIGSTOP, PTRACE_INTERRUPT) is simply held there: the scheduler does not resume it, nor
 * look at its wait, until the tracer lets it go (CONT, DETACH, KILL, the tracer's death).
 * Every attach, stop, report and resume therefore falls at an event of the tracer: the
 * same point of the logical timeline on every run, whatever the timing. The tracer's
 * wait4 or waitid sees the stop from the tracee's record (ptrace_wait.c; sys_process.c
 * asks there first).
 *
 * What the tracer sees is the program's state as it would be natively: virtual tids, and
 * the registers without detrun's bookkeeping (a call parked by detrun looks interrupted,
 * rax -ERESTARTSYS past its syscall instruction; a call detrun emulated looks done). The
 * other register sets (FPU, XSTATE, debug registers) are the task's own, read and written
 * through the real ptrace on the stopped task (ptrace_regs.c).
 *
 * A traced task's signals stop it for its tracer (signal-delivery stops, at the signal's
 * event); CONT or DETACH says which signal goes in. TRACEME makes the parent the tracer,
 * and an exec then stops the task with SIGTRAP.
 *
 * SINGLESTEP sets the trap flag, whose SIGTRAP is such a signal stop. Each stop sends the
 * tracer SIGCHLD, whose siginfo is made CLD_TRAPPED's at its delivery.
 *
 * PTRACE_SYSCALL makes the engine resume the tracee with the real PTRACE_SYSCALL: it
 * stops at its entry trap (before detrun handles the call) and at the exit of the call
 * as the program sees it, once per call (syscall_stop_due). The clone, fork, vfork, exec
 * and exit event stops are made where detrun meets them; a new child is traced too.
 *
 * A group stop of a tracee (jobctl.h) is reported to its tracer (PTRACE_EVENT_STOP if
 * seized, as is the stop a seized task is already in); CONT lets the tracee run while its
 * process stays stopped, and LISTEN leaves it stopped until a SIGCONT, which stops it for
 * its tracer once more. A detached tracee rejoins a stop still in force.
 *
 * SYSEMU and SYSEMU_SINGLESTEP stop at a call's entry as PTRACE_SYSCALL does; the call is
 * then skipped, as is one whose number the tracer set to -1 at its entry stop.
 *
 * In parallel mode (--jobs above 1) a tracer and its tracee become one memory domain at
 * the attach, TRACEME or followed fork (join_domains), so the above holds there too.
 *
 * Not emulated yet (EIO, said once): the requests not named here; a process outside the
 * group stays out of reach (EPERM).
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#include "handlers/sys_common.h"
#include "handlers/ptrace_regs.h"
#include "handlers/ptrace_wait.h"
#include "handlers/sys_ptrace.h"
#include "handlers/sys_reach.h"
#include "engine/jobctl.h"
#include "engine/trap_signals.h"
#include "vkernel/memory_domain.h"
#include "vkernel/report.h"

static uint64_t attach_count;

uint64_t ptrace_next_seq(void)
{
	return ++attach_count;
}

static bool alive(const struct task *u)
{
	return u->state != TASK_DEAD && u->state != TASK_EXITING;
}

/* The live member the group knows as ns_tid; NULL for none. */
static struct task *member(pid_t ns_tid)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u->ns_tid == ns_tid && alive(u))
			return u;
	return NULL;
}

static void said_once(struct task *t, long request)
{
	static uint64_t said[2];
	unsigned bit = (unsigned)request & 127;
	if (said[bit / 64] & (1ULL << (bit % 64)))
		return;
	said[bit / 64] |= 1ULL << (bit % 64);
	hazard(t, "ptrace request 0x%lx is not emulated inside the group: EIO", request);
}

/* The tracee stops in its tracer's hands: held, with a stop its tracer's wait reports. */
static void traced_stop(struct task *u, int sig, int event)
{
	u->traced.stop_sig = sig;
	u->traced.stop_event = event;
	u->traced.report = 0x7f | sig << 8 | event << 16;
	u->traced.listening = false;
	sched_of(u)->traced_stop = true;
	sched_children_changed(); /* a waiting tracer looks again */
	/* The kernel tells the tracer with SIGCHLD (gdb waits for it in poll). Sent now, at
	 * this event; from detrun, so its siginfo is made CLD_TRAPPED's at its delivery
	 * (ptrace_sigchld_siginfo). */
	struct task *tracer = u->traced.tracer;
	if (tracer->state != TASK_DEAD) {
		tracer->proc->trapped_ns_tid = u->ns_tid;
		tracer->proc->trapped_sig = sig;
		kill(tracer->proc->tgid, SIGCHLD);
	}
	sched_signals_changed();
}

static void let_go(struct task *u)
{
	u->traced.stop_sig = u->traced.stop_event = u->traced.report = 0;
	u->traced.syscall_stop = 0;
	u->traced.delivery = u->traced.exec_trap = false;
	sched_of(u)->traced_stop = false;
}

/* A signal sent now, at the tracer's event: it reaches the tracee through detrun's usual
 * path once it runs. */
static void send_signal(struct task *u, int sig)
{
	if (sig <= 0 || sig > 64)
		return;
	syscall(SYS_tgkill, u->proc->tgid, u->tid, sig);
	sched_signals_changed();
}

static void untrace(struct task *u)
{
	bool rejoin = u->traced.left_group_stop && u->proc->stopped_by;
	let_go(u);
	memset(&u->traced, 0, sizeof(u->traced));
	sched_children_changed();
	/* As the kernel re-traps a detached tracee into the group stop still in force: the
	 * kernel's own stop let it go with detrun's resume, so a SIGSTOP brings it back. */
	if (rejoin)
		send_signal(u, SIGSTOP);
}

/* Is u's process a child of t's (whose wait4 then reports u's death itself)? */
static bool child_of(const struct task *u, const struct task *t)
{
	char status[2048];
	if (proc_status_read(u->proc->tgid, status, sizeof(status)) < 0)
		return false;
	return (pid_t)proc_status_field(status, "PPid:", 10, 0) == t->proc->tgid;
}

/* In parallel mode tracer and tracee run as one memory domain from now on
 * (vkernel/memory_domain.h): the tracee's stops are held for its tracer, and its
 * registers and memory read and written, at the tracer's events, so they may not run at
 * once. The engine stopped the tracee's domain for this call, at a point of the timeline
 * (a barrier), and it merges the clocks. */
static void join_domains(struct task *tracer, struct task *tracee)
{
	if (tracer_opts->jobs <= 1)
		return;
	bool apart = !memory_domain_same(tracer->proc, tracee->proc);
	memory_domain_trace(tracer->proc, tracee->proc);
	if (apart)
		trace_event(tracer, "  ptrace: task %d joins memory domain %d", tracee->vtid,
			    memory_domain_of(tracer->proc));
}

static int attach(struct task *t, struct task *u, bool seize, uint64_t options)
{
	if (!u)
		return -ESRCH;
	if (u->proc == t->proc || u->traced.tracer)
		return -EPERM;
	if (tracer_opts->jobs > 1 && u->state != TASK_STOPPED && !u->held) {
		/* The engine's barrier stops u's domain before this call (tracer_parallel.c):
		 * a task that runs still is one on its way out. */
		hazard(t, "ptrace of task %d: it runs, in parallel mode: EPERM", u->vtid);
		return -EPERM;
	}
	join_domains(t, u);
	u->traced = (struct emulated_trace){ .tracer = t,
					     .seq = ptrace_next_seq(),
					     .seized = seize,
					     .not_child = !child_of(u, t),
					     .options = seize ? options : 0 };
	if (!seize)
		traced_stop(u, SIGSTOP, 0);
	else if (jobctl_in_group_stop(u)) /* the kernel reports the stop it is in */
		traced_stop(u, u->proc->stopped_by, PTRACE_EVENT_STOP);
	trace_event(t, "  ptrace: task %d traced%s", u->vtid, seize ? " (seized)" : ", stopped");
	return 0;
}

/* PTRACE_TRACEME: t's parent becomes its tracer: the thread that made it, as the kernel's
 * real_parent, or, once that thread is gone, another thread of its process (the kernel
 * hands the children of an exiting thread to one). */
static int trace_me(struct task *t)
{
	char status[2048];
	if (t->traced.tracer)
		return -EPERM;
	if (proc_status_read(t->tid, status, sizeof(status)) < 0)
		return -ESRCH;
	pid_t parent = (pid_t)proc_status_field(status, "PPid:", 10, 0);
	struct task *tracer = NULL;
	for (struct task *u = sched_first(); u && !tracer; u = u->next)
		if (u->proc->tgid == parent && u->tid == t->creator_tid && alive(u))
			tracer = u;
	for (struct task *u = sched_first(); u && !tracer; u = u->next)
		if (u->proc->tgid == parent && alive(u))
			tracer = u;
	if (!tracer)
		return -EPERM; /* a parent outside the group (detrun's init) */
	join_domains(tracer, t);
	t->traced = (struct emulated_trace){ .tracer = tracer, .seq = ptrace_next_seq() };
	trace_event(t, "  ptrace: traced by task %d", tracer->vtid);
	return 0;
}

static int peek_poke(struct task *t, struct task *u, uint64_t addr, uint64_t data, bool poke)
{
	uint64_t word;
	if (poke)
		return remote_patch_code(u, REMOTE(addr), &data, 8) ? -EIO : 0;
	if (remote_read(u, REMOTE(addr), &word, 8))
		return -EIO;
	return remote_write(t, REMOTE(data), &word, 8) ? -EFAULT : 0;
}

/* The siginfo of the stop u is in: the attach's SIGSTOP comes from the kernel, an event
 * stop is a SIGTRAP that names its event. */
static int siginfo_of(struct task *t, struct task *u, uint64_t data)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = u->traced.stop_sig;
	si.si_code = u->traced.stop_event ? SIGTRAP | u->traced.stop_event << 8 : SI_KERNEL;
	if (u->traced.syscall_stop) { /* SIGTRAP, or SIGTRAP | 0x80 with TRACESYSGOOD */
		si.si_signo = SIGTRAP;
		si.si_code = u->traced.stop_sig;
	}
	/* A real signal's own siginfo: the kernel gave its sender's pid in the tracee's PID
	 * namespace, the group's. */
	if (u->traced.delivery && ptrace(PTRACE_GETSIGINFO, u->tid, 0, &si) < 0)
		return -errno;
	if (u->traced.delivery && u->traced.exec_trap) { /* the kernel's own, not detrun's */
		si.si_code = SI_USER;
		si.si_pid = u->proc->ns_tgid;
	}
	return remote_write(t, REMOTE(data), &si, sizeof(si)) ? -EFAULT : 0;
}

/* At a signal-delivery stop the siginfo of the signal that goes in (the kernel's stop,
 * which detrun holds); elsewhere it changes nothing the tracee sees. */
static int set_siginfo(struct task *t, struct task *u, uint64_t data)
{
	siginfo_t si;
	if (remote_read(t, REMOTE(data), &si, sizeof(si)))
		return -EFAULT;
	if (u->traced.delivery && ptrace(PTRACE_SETSIGINFO, u->tid, 0, &si) < 0)
		return -errno;
	return 0;
}

static bool stopped_request(long request)
{
	return request != PTRACE_KILL && request != PTRACE_INTERRUPT;
}

/* A request that reads or writes the state of stopped tracee u. */
static int state_request(struct task *t, struct task *u, long request, uint64_t addr, uint64_t data)
{
	switch (request) {
	case PTRACE_GETREGS: {
		struct user_regs_struct r;
		int err = ptrace_native_regs(u, &r);
		return err ? err : remote_write(t, REMOTE(data), &r, sizeof(r)) ? -EFAULT : 0;
	}
	case PTRACE_SETREGS: {
		struct user_regs_struct r;
		if (remote_read(t, REMOTE(data), &r, sizeof(r)))
			return -EFAULT;
		return ptrace_set_native_regs(u, &r);
	}
	case PTRACE_GETFPREGS:
	case PTRACE_SETFPREGS:
		return ptrace_fpregs(t, u, data, request == PTRACE_SETFPREGS);
	case PTRACE_GETREGSET:
	case PTRACE_SETREGSET:
		return ptrace_regset(t, u, addr, data, request == PTRACE_SETREGSET);
	case PTRACE_PEEKTEXT:
	case PTRACE_PEEKDATA:
	case PTRACE_POKETEXT:
	case PTRACE_POKEDATA:
		return peek_poke(t, u, addr, data,
				 request == PTRACE_POKETEXT || request == PTRACE_POKEDATA);
	case PTRACE_PEEKUSER:
	case PTRACE_POKEUSER:
		return ptrace_user_area(t, u, addr, data, request == PTRACE_POKEUSER);
	case PTRACE_ARCH_PRCTL:
		return ptrace_arch_prctl(t, u, addr, data);
	case PTRACE_GETSIGINFO:
		return siginfo_of(t, u, data);
	case PTRACE_SETSIGINFO:
		return set_siginfo(t, u, data);
	case PTRACE_GETEVENTMSG:
		return remote_write(t, REMOTE(data), &u->traced.event_msg, 8) ? -EFAULT : 0;
	case PTRACE_SETOPTIONS:
		if (data & ~(uint64_t)PTRACE_O_MASK)
			return -EINVAL;
		u->traced.options = data;
		return 0;
	case PTRACE_GET_SYSCALL_INFO:
		return ptrace_syscall_info(t, u, addr, data);
	case PTRACE_SECCOMP_GET_FILTER:
		/* The kernel's answer to a tracer that is itself in seccomp mode, as every
		 * member is (detrun's filters are no business of the program's). */
		return -EACCES;
	default:
		said_once(t, request);
		return -EIO;
	}
}

/* PTRACE_SINGLESTEP sets the trap flag, as detrun's own debugger does: the step ends in
 * a SIGTRAP (a signal stop of the tracee's), and the flag goes at the next stop. */
static void step_done(struct task *u)
{
	if (u->traced.stepping && remote_load_regs(u) == 0)
		task_set_trap_flag(u, false);
	u->traced.stepping = false;
}

/* CONT or DETACH with signal `sig` (0: none): at a signal-delivery stop it is the signal
 * delivered (the stopped one, another, or none); at another stop it is sent now. */
static void resume_with(struct task *u, uint64_t sig)
{
	bool delivery = u->traced.delivery;
	step_done(u);
	let_go(u);
	jobctl_tracer_resumed(u);
	if (sig > 64)
		return;
	/* detrun's traps stand in for the program's SIGSEGV and SIGILL actions: delivering
	 * one takes their preparation (trap_signals.h), as detrun's own delivery does. */
	if (delivery && (sig == SIGSEGV || sig == SIGILL) && !trap_signals_deliver(u, (int)sig))
		sig = 0;
	if (delivery)
		u->inject_signal = (int)sig;
	else
		send_signal(u, (int)sig);
}

static bool resumes(long request)
{
	return request == PTRACE_CONT || request == PTRACE_SYSCALL || request == PTRACE_DETACH ||
	       request == PTRACE_SINGLESTEP || request == PTRACE_SYSEMU ||
	       request == PTRACE_SYSEMU_SINGLESTEP;
}

/* Resumed from a syscall-entry stop: the call that runs is the one orig_rax names now (the
 * kernel's seccomp stop, detrun's, comes after the entry stop and sees the tracer's
 * change). SYSEMU's call, or one the tracer set to -1, is skipped (ptrace_skipped), rax
 * left as the tracer made it; its exit stop comes only if PTRACE_SYSCALL resumes it. */
static void leave_entry_stop(struct task *u, long request)
{
	if (u->traced.syscall_stop != PTRACE_SYSCALL_INFO_ENTRY || remote_load_regs(u))
		return;
	u->traced.sysemu_nr = u->traced.sysemu ? syscall_number(u) : -1;
	if (u->traced.sysemu)
		syscall_set_number(u, -1);
	u->traced.skipped = syscall_number(u) == -1;
	if (u->traced.skipped && request != PTRACE_SYSCALL)
		u->traced.in_syscall = false; /* no exit stop */
}

/* What the resume request asks for the calls to come: stops at their entries (and exits),
 * skipping them (SYSEMU), or neither. */
static void set_syscall_mode(struct task *u, long request)
{
	u->traced.sysemu = request == PTRACE_SYSEMU || request == PTRACE_SYSEMU_SINGLESTEP;
	u->traced.syscall_mode = u->traced.sysemu || request == PTRACE_SYSCALL;
	if (!u->traced.syscall_mode)
		u->traced.in_syscall = u->traced.exit_due = false;
}

/* PTRACE_INTERRUPT's stop: PTRACE_EVENT_STOP, with its stop signal in a stopped process. */
static void interrupt_stop(struct task *u)
{
	traced_stop(u, u->proc->stopped_by ? u->proc->stopped_by : SIGTRAP, PTRACE_EVENT_STOP);
}

/* An INTERRUPT of a tracee that was stopped already: as the kernel keeps it, the tracee
 * stops again as it is resumed, before it runs. True if so. */
static bool interrupt_kept(struct task *u)
{
	if (!u->traced.interrupt_due)
		return false;
	u->traced.interrupt_due = false;
	interrupt_stop(u);
	return true;
}

/* A request on a tracee of t: those that stop or resume it, then the others. */
static int on_tracee(struct task *t, struct task *u, long request, uint64_t addr, uint64_t data)
{
	if (resumes(request) && data > 64)
		return -EIO; /* no such signal: the kernel refuses before anything */
	switch (request) {
	case PTRACE_CONT:
	case PTRACE_SYSCALL:
	case PTRACE_SYSEMU:
		leave_entry_stop(u, request);
		resume_with(u, data);
		set_syscall_mode(u, request);
		interrupt_kept(u);
		return 0;
	case PTRACE_DETACH:
		leave_entry_stop(u, request);
		resume_with(u, data);
		untrace(u);
		trace_event(t, "  ptrace: task %d let go", u->vtid);
		return 0;
	case PTRACE_SINGLESTEP:
	case PTRACE_SYSEMU_SINGLESTEP:
		leave_entry_stop(u, request);
		resume_with(u, data);
		set_syscall_mode(u, request);
		if (!interrupt_kept(u) && remote_load_regs(u) == 0) {
			task_set_trap_flag(u, true);
			u->traced.stepping = true;
		}
		return 0;
	case PTRACE_LISTEN: /* it stays in its group stop; its end stops it again */
		if (!u->traced.seized || u->traced.stop_event != PTRACE_EVENT_STOP ||
		    !jobctl_in_group_stop(u))
			return -EIO;
		let_go(u);
		u->traced.listening = true;
		return 0;
	case PTRACE_KILL:
		let_go(u);
		send_signal(u, SIGKILL);
		return 0;
	case PTRACE_INTERRUPT:
		if (!u->traced.seized)
			return -EIO;
		if (sched_of(u)->traced_stop)
			u->traced.interrupt_due = true; /* for its next resume */
		else
			interrupt_stop(u);
		return 0;
	default:
		return state_request(t, u, request, addr, data);
	}
}

static int ptrace_request(struct task *t)
{
	long request = (long)syscall_arg(t, 0);
	pid_t pid = (pid_t)syscall_arg(t, 1);
	uint64_t addr = syscall_arg(t, 2), data = syscall_arg(t, 3);
	if (request == PTRACE_TRACEME)
		return trace_me(t);
	struct task *u = member(pid);
	if (!u && !reach_is_member(pid))
		return -EPERM; /* outside the group: out of reach, as before */
	if (request == PTRACE_ATTACH || request == PTRACE_SEIZE)
		return attach(t, u, request == PTRACE_SEIZE, data);
	if (!u || u->traced.tracer != t)
		return -ESRCH;
	if (stopped_request(request) && !sched_of(u)->traced_stop)
		return -ESRCH;
	return on_tracee(t, u, request, addr, data);
}

bool ptrace_skipped(struct task *t)
{
	bool skipped = t->traced.skipped && t->syscall_nr == -1;
	t->traced.skipped = false;
	if (skipped)
		trace_event(t, "  skipped by its tracer, task %d", t->traced.tracer->vtid);
	return skipped;
}

/* Implements ptrace(2) for a member on a member (see the top of this file). */
void sys_ptrace(struct task *t)
{
	syscall_emulate(t, ptrace_request(t));
}

/* Is this a stop the tracer sees? One entry and one exit stop per call, however often
 * detrun rewinds it or parks it (it stops again only once complete). */
static bool syscall_stop_due(struct task *t, bool entry)
{
	bool rewound = t->traced.rewound;
	t->traced.rewound = false;
	t->traced.exit_due = false;
	if (entry) {
		if (t->traced.in_syscall)
			return false; /* the same call again, after a rewind */
		t->traced.in_syscall = true;
		return true;
	}
	if (rewound || t->parked || !t->traced.in_syscall)
		return false;
	t->traced.in_syscall = false;
	return true;
}

bool ptrace_syscall_stop(struct task *t, bool entry)
{
	if (!t->traced.tracer || !t->traced.syscall_mode || !syscall_stop_due(t, entry))
		return false;
	step_done(t);
	bool good = t->traced.options & PTRACE_O_TRACESYSGOOD;
	traced_stop(t, SIGTRAP | (good ? 0x80 : 0), 0);
	t->traced.syscall_stop = entry ? PTRACE_SYSCALL_INFO_ENTRY : PTRACE_SYSCALL_INFO_EXIT;
	trace_event(t, "  ptrace: syscall-%s stop, held for task %d", entry ? "entry" : "exit",
		    t->traced.tracer->vtid);
	return true;
}

bool ptrace_signal_stop(struct task *t, int sig)
{
	if (!t->traced.tracer || sig == SIGKILL)
		return false;
	step_done(t);
	traced_stop(t, sig, 0);
	t->inject_signal = 0; /* it goes in only if the tracer passes it on */
	t->traced.delivery = true;
	t->traced.exec_trap = t->traced.exec_trap && sig == SIGTRAP;
	trace_event(t, "  ptrace: held for task %d", t->traced.tracer->vtid);
	return true;
}

void ptrace_group_stop(struct task *t, int sig)
{
	if (!t->traced.tracer)
		return;
	traced_stop(t, sig, t->traced.seized ? PTRACE_EVENT_STOP : 0);
	trace_event(t, "  ptrace: group stop, held for task %d", t->traced.tracer->vtid);
}

bool ptrace_continued(struct task *t)
{
	if (!t->traced.tracer || !t->traced.listening)
		return false;
	traced_stop(t, SIGTRAP, PTRACE_EVENT_STOP);
	trace_event(t, "  ptrace: continued while listened to: held for task %d",
		    t->traced.tracer->vtid);
	return true;
}

static bool follows(const struct task *t, int event)
{
	uint64_t option = event == PTRACE_EVENT_CLONE  ? PTRACE_O_TRACECLONE
			  : event == PTRACE_EVENT_FORK ? PTRACE_O_TRACEFORK
						       : PTRACE_O_TRACEVFORK;
	return t->traced.tracer && (t->traced.options & option);
}

void ptrace_cloned(struct task *parent, struct task *child, int event)
{
	if (event == PTRACE_EVENT_VFORK)
		parent->traced.vfork_child = child->ns_tid;
	if (!follows(parent, event))
		return;
	struct emulated_trace *pt = &parent->traced;
	join_domains(pt->tracer, child); /* a new process: it has not run yet */
	child->traced = (struct emulated_trace){ .tracer = pt->tracer,
						 .seq = ptrace_next_seq(),
						 .seized = pt->seized,
						 .not_child = true, /* parent's, not the tracer's */
						 .options = pt->options };
	if (pt->seized)
		traced_stop(child, SIGTRAP, PTRACE_EVENT_STOP);
	else
		traced_stop(child, SIGSTOP, 0);
	pt->event_msg = (uint64_t)child->ns_tid;
	traced_stop(parent, SIGTRAP, event);
	trace_event(parent, "  ptrace: task %d traced by task %d too; event stop %d, held",
		    child->vtid, pt->tracer->vtid, event);
}

bool ptrace_vfork_done(struct task *t)
{
	if (!t->traced.tracer || !(t->traced.options & PTRACE_O_TRACEVFORKDONE))
		return false;
	t->traced.event_msg = (uint64_t)t->traced.vfork_child;
	traced_stop(t, SIGTRAP, PTRACE_EVENT_VFORK_DONE);
	trace_event(t, "  ptrace: vfork-done event stop, held for task %d", t->traced.tracer->vtid);
	return true;
}

void ptrace_exiting(struct task *t)
{
	if (!t->traced.tracer || !(t->traced.options & PTRACE_O_TRACEEXIT))
		return;
	t->traced.event_msg = (syscall_arg(t, 0) & 0xff) << 8;
	traced_stop(t, SIGTRAP, PTRACE_EVENT_EXIT);
	trace_event(t, "  ptrace: exit event stop, held for task %d", t->traced.tracer->vtid);
}

/* As the kernel: PTRACE_O_TRACEEXEC's event stop (then, traced with PTRACE_SYSCALL, the
 * execve's exit stop, owed: it comes as the tracer lets it go), else a SIGTRAP unless
 * seized. */
void ptrace_exec_done(struct task *t)
{
	if (!t->traced.tracer)
		return;
	t->traced.exit_due = t->traced.syscall_mode && t->traced.in_syscall;
	if (t->traced.exit_due && remote_load_regs(t) == 0)
		syscall_set_result(t, 0); /* as execve returns: its exit stop shows it */
	if (t->traced.options & PTRACE_O_TRACEEXEC) {
		t->traced.event_msg = (uint64_t)t->ns_tid; /* the former tid: the leader's now */
		traced_stop(t, SIGTRAP, PTRACE_EVENT_EXEC);
		trace_event(t, "  ptrace: exec event stop, held for task %d",
			    t->traced.tracer->vtid);
		return;
	}
	if (t->traced.seized)
		return;
	/* Its SIGTRAP comes once execve has returned: the tracer sees rax 0 (detrun's set-up
	 * calls left the value of the event stop, -ENOSYS). */
	if (remote_load_regs(t) == 0)
		syscall_set_result(t, 0);
	t->traced.exec_trap = true;
	send_signal(t, SIGTRAP);
}

void ptrace_task_gone(struct task *t)
{
	for (struct task *u = sched_first(); u; u = u->next) {
		if (u->traced.tracer != t)
			continue;
		bool kill = u->traced.options & PTRACE_O_EXITKILL;
		untrace(u);
		if (kill)
			send_signal(u, SIGKILL);
	}
	ptrace_wait_task_gone(t);
	if (t->traced.tracer)
		untrace(t);
}
