/* gdb's Ctrl-C while the group runs. gdb sends one byte, 0x03, and waits for a stop.
 *
 * The stop loop looks at the connection whenever it wakes up while a task runs (at least
 * every INTERRUPT_POLL_MS, debugger_hooks.h), so a task computing without syscalls is
 * stopped promptly: it is interrupted where it is (PTRACE_INTERRUPT, as the spin detector
 * does) and gdb sees it stopped with SIGINT. That point lies between two events and is
 * chosen by timing: it is not reachable again (no instruction counters), and reverse
 * execution from it counts from its last event, as `monitor when` says. Nothing of the
 * run changes: the task goes on from exactly where it stood, and a native call the
 * interrupt cut short is restarted by the kernel without becoming an event. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>

#include "engine/debugger_hooks.h"
#include "debugger/internal.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "engine/remote.h"
#include "vkernel/report.h"
#include "engine/spin.h"
#include "vkernel/task.h"
#include "engine/tracer.h"

static bool pending; /* taken, not reported yet: the next event reports it */

bool interrupt_take_pending(void)
{
	bool was = pending;
	pending = false;
	return was;
}

bool interrupt_poll(struct dbg_state *dbg, struct task *t, void (*handle)(int tid, int status))
{
	if (dbg->mode != MODE_LIVE || !dbg->connected || dbg->conn_fd < 0 ||
	    !gdb_interrupt_waiting())
		return false;
	struct task *shown = procs_shown(t);
	if (!shown || !spin_interrupt(t, handle)) {
		pending = true; /* t reached an event first: that event reports it */
		return true;
	}
	static bool said;
	if (!said)
		warn("interrupted between events: this point cannot be reached again; going back "
		     "from it counts from logical time %llu (README, Limits)",
		     (unsigned long long)sched_now());
	said = true;
	char reply[128];
	server_stop_reply(shown, SIGINT, "", reply, sizeof(reply));
	server_converse_resume(shown, reply);
	if (remote_load_regs(t) == 0)
		spin_note_interrupted_call(t);
	remote_store_regs(t);
	t->regs_valid = false;
	if (ptrace(tracer_resume_request(t), t->tid, 0, 0) < 0 && errno != ESRCH)
		task_warn(t, "cannot resume after gdb's interrupt: %s", strerror(errno));
	return true;
}

int interrupt_wait_fd(struct dbg_state *dbg)
{
	return dbg->mode == MODE_LIVE && dbg->connected ? dbg->conn_fd : -1;
}

/* Every task is stopped at an event or parked: the stop is at the last event, a position
 * `monitor goto` reaches again. */
void interrupt_idle_input(void)
{
	if (!gdb_interrupt_waiting())
		return;
	struct task *shown = procs_shown(NULL);
	if (!shown) {
		pending = true;
		return;
	}
	char reply[128];
	server_stop_reply(shown, SIGINT, "", reply, sizeof(reply));
	server_converse_resume(shown, reply);
}
