/* Where the group is, and going elsewhere: `monitor when`, `monitor goto T`, and
 * reverse-continue, by executing detrun again from the start.
 *
 * A re-execution is the same command line (same log, same options) with the gdb
 * connection inherited and one more argument, --gdb-resume=, that says where to stop and
 * which breakpoints and watchpoints gdb has set. The replay is deterministic, so the new
 * run passes the same positions in the same order. Reverse-continue from position P takes
 * two: the first counts every hit before P and remembers the last, the second stops
 * there. Both cost the run from the start to P: going back is as expensive as the
 * distance from the start, not from P (README, Debugging a recording), or from the latest
 * checkpoint before (checkpoints.c: a run parked there goes on instead of a new one). Positions between
 * two events, for reverse-stepi and reverse watchpoints, are stepback.c's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/user.h>
#include <unistd.h>

#include "engine/debugger_hooks.h"
#include "debugger/internal.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "vkernel/task.h"
#include "vkernel/report.h"

static char **saved_argv; /* detrun's command line, our own arguments taken out */
static char **saved_env;
static char saved_cwd[PATH_MAX];
/* The signal mask and ignored signals detrun was started with: a program inherits both
 * through fork and exec, and detrun blocks SIGCHLD and ignores SIGPIPE for itself. */
static sigset_t saved_mask;
static uint64_t saved_ignored;

static void save_signals(void)
{
	sigprocmask(SIG_SETMASK, NULL, &saved_mask);
	for (int sig = 1; sig < 64; sig++) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			saved_ignored |= 1ull << sig;
	}
}

/* The next run starts as this one did: else its program would start with SIGCHLD
 * blocked (a shell then never takes the SIGCHLD the recording delivered: diverged). The
 * alarm goes first: armed across exec, it would end the new detrun before its handler. */
static void restore_signals(void)
{
	struct itimerval off = { 0 };
	setitimer(ITIMER_REAL, &off, NULL);
	for (int sig = 1; sig < 64; sig++) {
		struct sigaction sa;
		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN && !(saved_ignored & (1ull << sig)))
			signal(sig, SIG_DFL);
	}
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

static void leave_group_namespace(void)
{
	int ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (ns < 0 || setns(ns, CLONE_NEWPID) < 0)
		die("cannot leave the group's PID namespace: %s", strerror(errno));
	close(ns);
}

static __attribute__((noreturn)) void reexecute(struct dbg_state *dbg, enum dbg_mode mode,
						struct position goal, bool event, bool begin,
						const char *job);

/* ---- gdb's checkpoints ---------------------------------------------------------------- */

/* A checkpoint is a position gdb can go back to with `restart N`, and the copies parked at
 * its event (checkpoints.c) that make going back near it cheap. The list goes from run to
 * run on the command line, like gdb's points. */
enum {
	MAX_CHECKPOINTS = 16
};
static struct checkpoint {
	uint64_t time, hits; /* the position (time 0: deleted) */
	uint64_t base;       /* its event, where the copies park */
	long long steps;     /* instructions after `base`, when counted (-1: by hits) */
	int vtid;
	uint64_t points; /* points_signature() then: the hits name the position with these */
	struct user_regs_struct regs; /* else it is found by the registers of its task */
} checkpoints[MAX_CHECKPOINTS];
static int n_checkpoints;
static int restart_asked; /* `restart N`: N, for the next resume */
static bool restarting;   /* going there: its arrival is a plain stop (/q) */

/* What this run was asked (--gdb-resume=, --gdb-step=), and the time it started from. */
static char origin_spec[32768], origin_job[1024];
static uint64_t origin_start;

static void describe_checkpoints(char *spec, size_t size)
{
	size_t n = strlen(spec);
	for (int i = 0; i < n_checkpoints && n < size - 600; i++) {
		const struct checkpoint *c = &checkpoints[i];
		n += (size_t)snprintf(spec + n, size - n, "/k%llu.%llu.%llu.%lld.%d.%llx.",
				      (unsigned long long)c->time, (unsigned long long)c->hits,
				      (unsigned long long)c->base, c->steps, c->vtid,
				      (unsigned long long)c->points);
		hex_encode(spec + n, &c->regs, sizeof(c->regs));
		n += strlen(spec + n);
	}
}

void travel_restore_checkpoint(const char *item)
{
	unsigned long long time, hits, base, points;
	struct checkpoint c;
	int used = 0;
	if (n_checkpoints < MAX_CHECKPOINTS &&
	    sscanf(item, "%llu.%llu.%llu.%lld.%d.%llx.%n", &time, &hits, &base, &c.steps, &c.vtid,
		   &points, &used) == 6 &&
	    hex_decode(&c.regs, item + used, sizeof(c.regs)) == sizeof(c.regs)) {
		c.time = time, c.hits = hits, c.base = base, c.points = points;
		checkpoints[n_checkpoints++] = c;
	}
}

void travel_set_origin(const char *spec, const char *job, uint64_t start)
{
	snprintf(origin_spec, sizeof(origin_spec), "%s", spec);
	snprintf(origin_job, sizeof(origin_job), "%s", job);
	origin_start = start;
}

static void checkpoint_here(struct dbg_state *dbg, char *out, size_t size)
{
	if (n_checkpoints == MAX_CHECKPOINTS) {
		snprintf(out, size, "no more checkpoints: %d are kept\n", MAX_CHECKPOINTS);
		return;
	}
	struct checkpoint c = { dbg->now.time,      dbg->now.hits, stepback_base(), -1, 0,
				points_signature(), { 0 } };
	uint64_t steps;
	if (stepback_position(&c.vtid, &steps, &c.regs))
		c.steps = (long long)steps;
	/* A parked run follows the first process from the start: with others followed, no
	 * run could use one (start_bound). */
	bool served = procs_count() == 1 && procs_history_start() == 0;
	int made = served ? checkpoints_make(c.base) : 0;
	checkpoints[n_checkpoints++] = c;
	snprintf(out, size, "Checkpoint %d at logical time %llu, %llu breakpoint hits after it%s\n",
		 n_checkpoints, (unsigned long long)c.time, (unsigned long long)c.hits,
		 made     ? ""
		 : served ? " (no run could be parked there: going back runs from the start)"
			  : " (gdb follows a process other than the first, or not from its start: "
			    "going back runs from the start)");
}

static int checkpoint_number(const char *arg)
{
	char *end;
	long n = strtol(arg, &end, 10);
	if (end == arg || *end || n < 1 || n > n_checkpoints || !checkpoints[n - 1].time)
		return 0;
	return (int)n;
}

static void list_checkpoints(char *out, size_t size)
{
	size_t at = 0;
	for (int i = 0; i < n_checkpoints && at < size; i++)
		if (checkpoints[i].time)
			at += (size_t)
				snprintf(out + at, size - at,
					 "%d logical time %llu, %llu breakpoint hits after it\n",
					 i + 1, (unsigned long long)checkpoints[i].time,
					 (unsigned long long)checkpoints[i].hits);
	if (at == 0)
		at = (size_t)snprintf(out, size, "No checkpoints.\n");
	if (at < size)
		checkpoints_describe_origin(out + at, size - at);
}

void travel_go_if_asked(struct dbg_state *dbg)
{
	if (!restart_asked)
		return;
	const struct checkpoint *c = &checkpoints[restart_asked - 1];
	restart_asked = 0;
	restarting = true;
	if (c->steps >= 0)
		stepback_goto(dbg, c->base, c->vtid, (uint64_t)c->steps, NULL);
	/* A stop reached by continuing is named by its hits, counted with the points of
	 * then: with others set since, it is found by its registers (as reverse-continue
	 * does, stepback.c). */
	if (c->hits > 0 && points_signature() != c->points)
		stepback_goto(dbg, c->base, c->vtid, 0, &c->regs);
	reexecute(dbg, MODE_SEEK, (struct position){ c->time, c->hits }, c->hits == 0, false, NULL);
}

static char mode_letter(const struct dbg_state *dbg, enum dbg_mode mode, bool event, bool begin)
{
	if (mode == MODE_SCAN)
		return 'S';
	if (begin && dbg->run_begin)
		return 'R';
	return begin ? 'B' : event ? 'E' : 'H';
}

/* detrun's command line with `spec` (and `job`) in front of its own arguments. */
static char **run_argv(const char *spec, const char *job)
{
	int n = 0;
	while (saved_argv[n])
		n++;
	char **argv = calloc((size_t)n + 3, sizeof(char *));
	if (!argv)
		die("out of memory");
	int k = 0;
	argv[k++] = saved_argv[0];
	argv[k++] = (char *)spec;
	if (job && *job)
		argv[k++] = (char *)job;
	memcpy(argv + k, saved_argv + 1, (size_t)n * sizeof(char *));
	return argv;
}

/* Where the next run may start from: a copy at or before this time (0: the start). A copy
 * has followed the first process from the start, gdb's default: with other processes
 * followed, the run starts from the start. */
static uint64_t start_bound(struct position goal, bool begin)
{
	if (begin || procs_count() != 1 || procs_history_start() != 0)
		return 0;
	return goal.time;
}

static __attribute__((noreturn)) void reexecute(struct dbg_state *dbg, enum dbg_mode mode,
						struct position goal, bool event, bool begin,
						const char *job)
{
	static char spec[32768];
	snprintf(spec, sizeof(spec), "--gdb-resume=%d/%c/%llu/%llu/%d/%u/%d", dbg->conn_fd,
		 mode_letter(dbg, mode, event, begin), (unsigned long long)goal.time,
		 (unsigned long long)goal.hits, packet_acks_off(), report_warnings_said(),
		 listen_refusing_fd());
	points_describe(spec, sizeof(spec));
	if (!(begin && dbg->run_begin)) /* gdb's `run` starts with the first process again */
		procs_describe(spec, sizeof(spec));
	describe_checkpoints(spec, sizeof(spec));
	if (restarting)
		strncat(spec, "/q", sizeof(spec) - strlen(spec) - 1);
	if (checkpoints_active())
		checkpoints_travel(spec, job, start_bound(goal, begin), dbg->conn_fd,
				   listen_refusing_fd());
	char **argv = run_argv(spec, job);
	report_run_cleanup(); /* the group goes first: nothing of it may outlive this run */
	/* Children of this run went into a PID namespace whose init is now gone, where no
	 * process can be created any more: the next run starts from detrun's own. */
	leave_group_namespace();
	fcntl(dbg->conn_fd, F_SETFD, 0);
	if (listen_refusing_fd() >= 0)
		fcntl(listen_refusing_fd(), F_SETFD, 0);
	if (chdir(saved_cwd) < 0)
		die("cannot go back to %s: %s", saved_cwd, strerror(errno));
	restore_signals();
	execve("/proc/self/exe", argv, saved_env);
	die("cannot execute detrun again: %s", strerror(errno));
}

pid_t travel_spawn(const char *spec, const char *job, int keep, int conn, int refusing)
{
	char **argv = run_argv(spec, job);
	leave_group_namespace();
	pid_t pid = fork();
	if (pid == 0) {
		int fds[] = { keep, conn, refusing };
		for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				fcntl(fds[i], F_SETFD, 0);
		/* A server killed outright takes its runs with it (their groups: EXITKILL). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (chdir(saved_cwd) < 0)
			_exit(125);
		restore_signals();
		execve("/proc/self/exe", argv, saved_env);
		_exit(125);
	}
	free(argv);
	return pid;
}

void travel_save_invocation(int argc, char **argv, char **env)
{
	saved_argv = calloc((size_t)argc + 1, sizeof(char *));
	int n = 0;
	while (env[n])
		n++;
	saved_env = calloc((size_t)n + 1, sizeof(char *));
	if (!saved_argv || !saved_env || !getcwd(saved_cwd, sizeof(saved_cwd)))
		die("cannot keep detrun's command line for re-execution");
	for (int i = 0; i < argc; i++)
		saved_argv[i] = strdup(argv[i]);
	for (int i = 0; i < n; i++)
		saved_env[i] = strdup(env[i]);
	save_signals();
}

void travel_kill(struct dbg_state *dbg)
{
	if (dbg->killed)
		return;
	fprintf(stderr, "detrun: gdb killed the program: the group is ended\n");
	report_run_cleanup();
	dbg->killed = true;
}

/* After gdb's `kill` the group is gone: its state can be neither read nor resumed. */
const char *travel_killed_refusal(const struct dbg_state *dbg, const char *cmd)
{
	bool served = !strncmp(cmd, "qSupported", 10) || !strcmp(cmd, "qAttached") ||
		      !strncmp(cmd, "qSymbol", 7) || cmd[0] == 'Q' || cmd[0] == '!' ||
		      cmd[0] == 'k' || !strncmp(cmd, "vKill", 5) || !strncmp(cmd, "vRun", 4) ||
		      !strcmp(cmd, "vCont?") || !strncmp(cmd, "vFile:", 6);
	if (!dbg->killed || served)
		return NULL;
	return cmd[0] == '?' ? "W00" : "E01";
}

__attribute__((noreturn)) void travel_restart(struct dbg_state *dbg)
{
	dbg->run_begin = true;
	reexecute(dbg, MODE_SEEK, (struct position){ 0, 0 }, true, true, NULL);
}

void travel_reexecute(struct dbg_state *dbg, enum dbg_mode mode, struct position goal)
{
	if (mode == MODE_SCAN) {
		stepback_scan(dbg); /* a position that knows its instruction count */
		goal.hits += stepback_past_hit();
	}
	reexecute(dbg, mode, goal, mode == MODE_SEEK, false, NULL);
}

void travel_reexecute_job(struct dbg_state *dbg, enum dbg_mode mode, uint64_t time, const char *job)
{
	reexecute(dbg, mode, (struct position){ time, 0 }, true, false, job);
}

void travel_scan_done(struct dbg_state *dbg)
{
	/* Started from a copy, with no hit after its time: the scan starts earlier. */
	if (dbg->last_hit.time == 0 && origin_start > 0)
		checkpoints_travel(origin_spec, origin_job, origin_start - 1, dbg->conn_fd,
				   listen_refusing_fd());
	if (dbg->last_hit.time == 0)
		reexecute(dbg, MODE_SEEK, (struct position){ 0, 0 }, true, true, NULL);
	stepback_scan_done(dbg); /* a watchpoint's: to just before the write */
	reexecute(dbg, MODE_SEEK, dbg->last_hit, false, false, NULL);
}

bool travel_monitor(struct dbg_state *dbg, struct task *t, const char *cmd, char *out, size_t size)
{
	if (!strcmp(cmd, "when")) {
		snprintf(out, size,
			 "logical time %llu, %llu breakpoint hits after it; task %d "
			 "(tid %d)\n",
			 (unsigned long long)dbg->now.time, (unsigned long long)dbg->now.hits,
			 t->vtid, t->ns_tid);
		return true;
	}
	if (!strncmp(cmd, "goto ", 5)) {
		char *end;
		unsigned long long time = strtoull(cmd + 5, &end, 0);
		if (end == cmd + 5 || *end || time == 0) {
			snprintf(out, size, "goto takes a logical time (a number > 0)\n");
			return false;
		}
		/* gdb learns of a stop only as the answer to a resume: the next one goes there. */
		dbg->goto_time = time;
		snprintf(out, size,
			 "the next continue (or reverse-continue) stops at logical time "
			 "%llu%s\n",
			 time,
			 time <= dbg->now.time ? ", running again from the start (or a checkpoint)"
					       : "");
		return true;
	}
	if (!strcmp(cmd, "checkpoint")) {
		checkpoint_here(dbg, out, size);
		return true;
	}
	if (!strcmp(cmd, "checkpoints")) {
		list_checkpoints(out, size);
		return true;
	}
	if (!strncmp(cmd, "restart ", 8) || !strncmp(cmd, "delete-checkpoint ", 18)) {
		bool restart = cmd[0] == 'r';
		int n = checkpoint_number(cmd + (restart ? 8 : 18));
		if (!n)
			snprintf(out, size, "Checkpoint %s not found.\n", cmd + (restart ? 8 : 18));
		else if (restart)
			restart_asked = n, out[0] = 0;
		else
			checkpoints[n - 1].time = 0, out[0] = 0;
		return n != 0;
	}
	snprintf(out, size,
		 "detrun monitor commands:\n  when    logical time and task of "
		 "this stop\n  goto T  run again to logical time T and stop\n"
		 "  checkpoint, checkpoints, restart N, delete-checkpoint N  gdb's checkpoints\n");
	return true;
}
