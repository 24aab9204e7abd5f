/* reverse-stepi (gdb's `bs`), and reverse watchpoints that stop before the write, by
 * counting instructions.
 *
 * Between two events one task runs, and the replay is deterministic: a position is named by
 * the latest event the debugger saw (its logical time, `base`) and the number of
 * instructions the running task has executed since (`steps`). Single-stepping that task
 * from the event counts them. A stop reached by single steps from an event knows its
 * count; one reached by continuing (a breakpoint or watchpoint hit) does not, and is found
 * again by its registers: a re-execution single-steps the interval from its event until the
 * task's registers are those of the stop. One instruction back is then one more
 * re-execution that stops after steps - 1 instructions; from the event itself, after every
 * instruction of the interval before it (counted by a re-execution too). Every arrival
 * knows its count, so a run of `bs` costs one re-execution each.
 *
 * A re-execution carries its job in --gdb-step= (after --gdb-resume=, which says to which
 * event to go and which points gdb has set).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/user.h>

#include "debugger/internal.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "engine/remote.h"
#include "vkernel/report.h"

enum job {
	JOB_NONE,
	JOB_STEP_TO,   /* stop after `goal_steps` instructions of the interval of `goal_base` */
	JOB_FIND_REGS, /* count that interval up to the registers `regs`, then go one back */
	JOB_COUNT_ALL, /* count the whole interval: then go to its last instruction */
	JOB_SCAN,      /* reverse-continue from (goal_base, goal_steps): the last hit before */
	JOB_SCAN_REGS, /* the same from the registers `regs` in the interval of `goal_base` */
	JOB_REACH_REGS /* stop where the task's registers are `regs` (a checkpoint's stop) */
};

enum {
	MAX_STEPS = 20000000 /* single steps in one interval: about 12 minutes here */
};

static struct {
	/* Where this run is, in every mode. */
	uint64_t base;             /* the latest event the debugger saw */
	uint64_t prev_base;        /* the event the run of its task that ended there came after */
	bool base_exec, prev_exec; /* was it an execve (it resets the trap flag: not counted) */
	int base_vtid;             /* the task of the latest event (it ran the interval before) */
	uint64_t last_exec;        /* the latest execve event, and its task */
	int last_exec_vtid;
	/* The latest interval a task of a process gdb follows ran (valid: one is known): where
	 * one instruction back from an event goes, past the intervals of other processes. */
	struct {
		bool valid;
		uint64_t base;
		int vtid;
	} followed;
	uint64_t steps;     /* instructions of the interval's task since base ... */
	bool known;         /* ... when every one of them was single-stepped */
	uint64_t since_hit; /* instructions since the latest hit (0: at it) */
	bool at_write;      /* stopped just after a watched write */
	int stop_vtid;      /* the latest trap stop */
	struct user_regs_struct stop_regs;
	/* SCAN without a job: the latest hit before the goal, for a watchpoint's. */
	uint64_t hit_base, hit_watch;
	int hit_vtid;
	struct user_regs_struct hit_regs;
	/* The job of this re-execution. */
	enum job job;
	uint64_t goal_base, goal_steps, watch; /* watch: report the stop as a write there */
	int vtid;                              /* the task running the interval */
	struct user_regs_struct regs;
	bool counting;                   /* at or past the goal event */
	uint64_t cand_steps, cand_watch; /* JOB_SCAN: the latest hit in the interval */
	bool cand;
	bool awaiting_child;   /* the job's task is a child the fork at goal_base makes */
	uint64_t event_points; /* points_signature() at the latest event */
} sb;

static __attribute__((noreturn)) void job_reexecute(struct dbg_state *dbg, enum job job,
						    uint64_t base, int vtid, uint64_t steps,
						    uint64_t watch,
						    const struct user_regs_struct *regs)
{
	static char arg[128 + 2 * sizeof(struct user_regs_struct)];
	struct user_regs_struct none = { 0 };
	int n = snprintf(arg, sizeof(arg), "--gdb-step=%d/%llu/%d/%llu/%llx/", (int)job,
			 (unsigned long long)base, vtid, (unsigned long long)steps,
			 (unsigned long long)watch);
	hex_encode(arg + n, regs ? regs : &none, sizeof(none));
	bool scan = job == JOB_SCAN || job == JOB_SCAN_REGS;
	travel_reexecute_job(dbg, scan ? MODE_SCAN : MODE_SEEK, base, arg);
}

void stepback_take_job(const char *arg)
{
	int job, used = 0;
	unsigned long long base, steps, watch;
	if (sscanf(arg + 11, "%d/%llu/%d/%llu/%llx/%n", &job, &base, &sb.vtid, &steps, &watch,
		   &used) != 5 ||
	    job <= JOB_NONE || job > JOB_REACH_REGS ||
	    hex_decode(&sb.regs, arg + 11 + used, sizeof(sb.regs)) != sizeof(sb.regs)) {
		fprintf(stderr, "detrun: bad --gdb-step\n");
		exit(125);
	}
	sb.job = (enum job)job;
	sb.goal_base = base, sb.goal_steps = steps, sb.watch = watch;
}

void stepback_take_arg(int *argc, char **argv)
{
	if (*argc < 2 || strncmp(argv[1], "--gdb-step=", 11))
		return;
	stepback_take_job(argv[1]);
	for (int i = 1; i < *argc; i++)
		argv[i] = argv[i + 1];
	(*argc)--;
}

uint64_t stepback_base(void)
{
	return sb.base;
}

bool stepback_position(int *vtid, uint64_t *steps, struct user_regs_struct *regs)
{
	*vtid = sb.stop_vtid;
	*steps = sb.steps;
	*regs = sb.stop_regs;
	return sb.known && sb.steps > 0;
}

void stepback_goto(struct dbg_state *dbg, uint64_t base, int vtid, uint64_t steps,
		   const struct user_regs_struct *regs)
{
	job_reexecute(dbg, regs ? JOB_REACH_REGS : JOB_STEP_TO, base, vtid, steps, 0, regs);
}

/* ---- at a stop ------------------------------------------------------------------------- */

/* The stop a job arrived at, for gdb: a step, or the write of a watched address. */
static void arrival_reply(struct dbg_state *dbg, struct task *t, char *reply, size_t size)
{
	char why[64] = "";
	if (sb.watch)
		snprintf(why, sizeof(why), "watch:%llx;", (unsigned long long)sb.watch);
	server_stop_reply(t, dbg->quiet ? 0 : SIGTRAP, why, reply, size);
	sb.job = JOB_NONE;
	sb.counting = false;
	dbg->mode = MODE_LIVE;
}

/* JOB_SCAN reached its goal: the last hit of the interval, or one before it. */
static void scan_found(struct dbg_state *dbg)
{
	if (sb.cand)
		job_reexecute(dbg, JOB_STEP_TO, sb.goal_base, sb.vtid,
			      sb.cand_steps - (sb.cand_watch ? 1 : 0), sb.cand_watch, NULL);
	sb.job = JOB_NONE;
	travel_scan_done(dbg);
}

static void note_candidate(struct task *t, enum trap_kind kind, uint64_t addr)
{
	if (kind == TRAP_STEP && !points_break_at(task_ip(t)))
		return;
	sb.cand = true;
	sb.cand_steps = sb.steps;
	sb.cand_watch = kind == TRAP_WATCH ? addr : 0;
}

/* A trap of the task a job single-steps. True: handled (stepped on, or arrived: reply). */
static bool job_trap(struct dbg_state *dbg, struct task *t, enum trap_kind kind, uint64_t addr,
		     char *reply, size_t size)
{
	switch (sb.job) {
	case JOB_STEP_TO:
		if (sb.steps >= sb.goal_steps) {
			arrival_reply(dbg, t, reply, size);
			return true;
		}
		break;
	case JOB_REACH_REGS: {
		struct user_regs_struct now;
		task_gprs(t, &now);
		if (regs_same_position(&now, &sb.regs)) {
			arrival_reply(dbg, t, reply, size);
			return true;
		}
		break;
	}
	case JOB_FIND_REGS: {
		struct user_regs_struct now;
		task_gprs(t, &now);
		if (regs_same_position(&now, &sb.regs)) {
			/* One back: for a write, before it (the next step does it). From the
			 * interval's first position, the event itself. */
			job_reexecute(dbg, JOB_STEP_TO, sb.goal_base, t->vtid,
				      sb.steps ? sb.steps - 1 : 0, sb.steps ? sb.watch : 0, NULL);
		}
		break;
	}
	case JOB_SCAN:
	case JOB_SCAN_REGS: {
		bool at_goal = sb.steps >= sb.goal_steps;
		if (sb.job == JOB_SCAN_REGS) {
			struct user_regs_struct now;
			task_gprs(t, &now);
			at_goal = regs_same_position(&now, &sb.regs);
		}
		/* A write that ends at the goal came before it (it is reported before it ran). */
		if (!at_goal || kind == TRAP_WATCH)
			note_candidate(t, kind, addr);
		if (at_goal)
			scan_found(dbg);
		break;
	}
	default:
		break;
	}
	points_step_over(t); /* the next instruction, with an int3 under the pc taken out */
	return true;
}

bool stepback_on_trap(struct dbg_state *dbg, struct task *t, enum trap_kind kind, uint64_t addr,
		      char *reply, size_t size)
{
	bool stepped = dbg->stepping_vtid == t->vtid;
	bool executed = stepped && kind != TRAP_BREAK; /* an int3 hit runs nothing */
	sb.known = sb.known && stepped;
	if (stepped && kind == TRAP_STEP && points_break_at(task_ip(t)))
		dbg->now.hits++; /* a run continuing here would count the breakpoint's hit */
	sb.steps += executed;
	sb.since_hit = kind != TRAP_STEP ? 0 : sb.since_hit + executed;
	sb.at_write = kind == TRAP_WATCH;
	sb.stop_vtid = t->vtid;
	task_gprs(t, &sb.stop_regs);
	if (dbg->mode == MODE_SCAN && !sb.counting && kind != TRAP_STEP &&
	    position_cmp(dbg->now, dbg->goal) < 0) {
		sb.hit_base = sb.base, sb.hit_vtid = t->vtid;
		task_gprs(t, &sb.hit_regs);
		sb.hit_watch = kind == TRAP_WATCH ? addr : 0;
	}
	if (!sb.counting || t->vtid != sb.vtid)
		return false;
	if (sb.steps > MAX_STEPS) { /* a spin-wait, say: the spin detector keeps off steps */
		task_warn(t, "more than %d instructions since the event: stopping here", MAX_STEPS);
		arrival_reply(dbg, t, reply, size);
		return true;
	}
	return job_trap(dbg, t, kind, addr, reply, size);
}

/* ---- at an event --------------------------------------------------------------------- */

/* The interval a job single-stepped ended before the job did. */
static void interval_ended(struct dbg_state *dbg, struct task *t)
{
	switch (sb.job) {
	case JOB_COUNT_ALL:
		/* A signal's stop (a fault) is the state before the instruction that raised it:
		 * the position before that is one instruction earlier. */
		job_reexecute(dbg, JOB_STEP_TO, sb.goal_base, sb.vtid,
			      sb.steps - (sb.steps > 0 && t->syscall_nr == -1 && t->inject_signal),
			      0, NULL);
	case JOB_SCAN_REGS:
		task_warn(t,
			  "the position was not found again: going back from the event after it");
		/* fallthrough */
	case JOB_SCAN:
		scan_found(dbg);
		return;
	case JOB_REACH_REGS:
		task_warn(t,
			  "the checkpoint's position was not found again: stopping at this event");
		sb.job = JOB_NONE, sb.counting = false, dbg->mode = MODE_LIVE;
		dbg->goto_time = sched_now(); /* live_event stops here */
		return;
	case JOB_FIND_REGS:
		task_warn(t, "the position was not found again: going back to the event before it");
		job_reexecute(dbg, JOB_STEP_TO, sb.goal_base, sb.vtid, 0, 0, NULL);
	default:
		task_warn(t, "the position is past a signal's delivery: stopping at this event");
		sb.job = JOB_NONE, sb.counting = false, dbg->mode = MODE_LIVE;
		dbg->goto_time = sched_now(); /* live_event stops here */
		return;
	}
}

static void set_trap_flag(struct task *t)
{
	if (remote_load_regs(t))
		return;
	task_set_trap_flag(t, true);
	remote_store_regs(t);
}

/* The goal event of a job: arrive (0 instructions), or single-step the interval's task. */
static bool start_job(struct dbg_state *dbg, struct task *t)
{
	struct task *runner = server_find_vtid(sb.vtid);
	if (!runner && sched_now() == sb.goal_base && t->syscall_nr != -1) {
		sb.awaiting_child = true; /* made by this event's call: stepback_on_fork */
		return true;
	}
	if (sb.job == JOB_STEP_TO && sb.goal_steps == 0) {
		/* Before the interval's first instruction, in the task that runs it. */
		char reply[128];
		arrival_reply(dbg, runner ? runner : t, reply, sizeof(reply));
		converse_at_event(runner ? runner : t, reply);
		return true;
	}
	if (!runner) {
		task_warn(t, "task %d is gone: stopping at this event", sb.vtid);
		sb.job = JOB_NONE;
		return false;
	}
	sb.counting = true;
	dbg->stepping_vtid = sb.vtid;
	set_trap_flag(runner); /* it stops one instruction after it next runs */
	return true;
}

void stepback_on_fork(struct dbg_state *dbg, struct task *child)
{
	if (sb.awaiting_child && child->vtid == sb.vtid) {
		sb.awaiting_child = false;
		start_job(dbg, child);
	}
}

bool stepback_on_event(struct dbg_state *dbg, struct task *t)
{
	if (sb.counting)
		interval_ended(dbg, t);
	if (sb.awaiting_child) {
		task_warn(t, "task %d was not made: stopping at this event", sb.vtid);
		sb.job = JOB_NONE, sb.awaiting_child = false;
		dbg->goto_time = sched_now(); /* live_event stops here */
		dbg->mode = MODE_LIVE;
	}
	/* In serial mode the event before this one; in parallel mode other processes' events
	 * may have come between the task's resume and its stop. */
	sb.prev_base = t->resumed_after;
	sb.prev_exec = t->resumed_after == sb.last_exec && t->vtid == sb.last_exec_vtid;
	sb.base = sched_now(), sb.base_exec = t->syscall_nr == SYS_execve;
	if (sb.base_exec)
		sb.last_exec = sb.base, sb.last_exec_vtid = t->vtid;
	sb.base_vtid = t->vtid;
	/* t ran the interval before this event: gdb's, if it follows t's program since. */
	if (!sb.prev_exec && sb.prev_base && procs_since(t) <= sb.prev_base)
		sb.followed.valid = true, sb.followed.base = sb.prev_base,
		sb.followed.vtid = t->vtid;
	sb.steps = 0, sb.known = true, sb.since_hit = 0, sb.at_write = false;
	sb.event_points = points_signature();
	if (sb.job == JOB_NONE || sb.counting || sb.base < sb.goal_base || listen_waiting())
		return false;
	return start_job(dbg, t);
}

/* ---- gdb's requests -------------------------------------------------------------------- */

/* bs: one instruction back. Returns only when there is nothing before (the start). */
void stepback_begin(struct dbg_state *dbg)
{
	if (!sb.known)
		job_reexecute(dbg, JOB_FIND_REGS, sb.base, sb.stop_vtid, 0, 0, &sb.stop_regs);
	if (sb.steps > 0)
		job_reexecute(dbg, JOB_STEP_TO, sb.base, sb.stop_vtid, sb.steps - 1, 0, NULL);
	/* At the event: the last instruction of the latest interval that a task of a process
	 * gdb follows ran (the event's task's, or one before other processes ran). None since
	 * gdb follows it: the start of its history. */
	struct task *runner = sb.followed.valid ? server_find_vtid(sb.followed.vtid) : NULL;
	if (!runner || sb.followed.base < procs_history_start())
		return;
	job_reexecute(dbg, JOB_COUNT_ALL, sb.followed.base, sb.followed.vtid, 0, 0, NULL);
}

/* bc from a position that knows its count: the interval up to it is single-stepped, so a
 * hit in it is found by its count. Returns when the plain scan applies. */
void stepback_scan(struct dbg_state *dbg)
{
	if (sb.known && sb.steps > 0)
		job_reexecute(dbg, JOB_SCAN, sb.base, sb.stop_vtid, sb.steps, 0, NULL);
	/* A stop reached by continuing is named by the hits since its event, counted with the
	 * points then: with others set since, the count names another position. It is found
	 * again by its registers, the interval single-stepped with the points of now. */
	if (!sb.known && sb.stop_vtid && points_signature() != sb.event_points)
		job_reexecute(dbg, JOB_SCAN_REGS, sb.base, sb.stop_vtid, 0, 0, &sb.stop_regs);
}

/* bc from a position not counted, some steps past a hit, or just after a watched write:
 * that hit is before it (a write is reported before it ran). */
bool stepback_past_hit(void)
{
	return !sb.known && (sb.since_hit > 0 || sb.at_write);
}

/* A scan found its last hit: a watchpoint's is reported before the write, found again by
 * its registers. Returns when the hit is a breakpoint's (re-execute to it). */
void stepback_scan_done(struct dbg_state *dbg)
{
	if (dbg->last_hit.time != 0 && sb.hit_watch)
		job_reexecute(dbg, JOB_FIND_REGS, sb.hit_base, sb.hit_vtid, 0, sb.hit_watch,
			      &sb.hit_regs);
}
