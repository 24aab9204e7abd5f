// Unit tests of the serial scheduler (scheduler/scheduler.c) and the futex wait queues
// (scheduler/futex_queue.c), linked from their C sources with fake supervisor services:
// the pick order, quanta, parking and waking, spinners, virtual-time jumps and timer ties,
// outside waits, deadlock reports; FIFO wakes, bitsets and requeues.
//
// The scheduler keeps its state in statics, as detrun has one of it: every test starts
// from a fresh turn (see Sched::SetUp) and removes its tasks at the end. Logical and
// virtual time only grow, so tests compare them with what they were at the start.
#include <gtest/gtest.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "scheduler/futex_queue.h"
#include "scheduler/scheduler.h"
#include "scheduler/vclock.h"
}

// The scheduler sees a task only through its scheduling part (scheduler/task.h): the
// supervisor's struct task begins with it, and so does the tests' own.
struct task {
	struct sched_task s;
};

namespace
{

// ---- the only code that builds tasks or touches their fields ---------------------------

pid_t next_tid = 50000;
std::vector<std::unique_ptr<struct task>> made; // sched_remove only unlinks: freed here

struct task *NewTask(enum task_state state = TASK_STOPPED)
{
	made.push_back(std::make_unique<struct task>());
	struct task *t = made.back().get();
	sched_of(t)->tid = next_tid++;
	sched_add(t);
	sched_of(t)->state = state;
	return t;
}
void SetState(struct task *t, enum task_state s)
{
	sched_of(t)->state = s;
}
void SetSpinning(struct task *t)
{
	sched_of(t)->spin_descheduled = true;
}
bool Spinning(const struct task *t)
{
	return sched_of_const(t)->spin_descheduled;
}
bool Parked(const struct task *t)
{
	return sched_of_const(t)->parked;
}
int Vtid(const struct task *t)
{
	return sched_of_const(t)->vtid;
}
pid_t Tid(const struct task *t)
{
	return sched_of_const(t)->tid;
}
std::string WaitWhat(const struct task *t)
{
	const char *what = sched_of_const(t)->wait.what;
	return what ? what : "(null)";
}
struct task *Next(const struct task *t)
{
	return sched_of_const(t)->next;
}

// ---- fake supervisor services --------------------------------------------------------------

struct Fake {
	std::map<const struct task *, bool> ready;       // what each wait's predicate says
	std::map<const struct task *, bool> signal_ends; // a deliverable signal ends its wait
	std::vector<std::string> log;                    // timeouts, interrupts, timers, waits
	int between_events = 0, deadlocks = 0, ready_calls = 0;
	int64_t timer = -1;             // armed timer deadline, -1 none
	std::function<void()> on_timer; // what the timer's firing does
	struct OutsideWait {
		std::vector<int> fds;
		int timeout_ms;
	};
	std::vector<OutsideWait> outside;
	std::function<int()> during_outside_wait = [] { return 0; };
	bool stops = false; // ops->stops_pending()
	std::map<const struct task *, std::string> names;
};
Fake fake;

std::string Name(const struct task *t)
{
	auto it = fake.names.find(t);
	return it != fake.names.end() ? it->second : "task" + std::to_string(Vtid(t));
}

enum wait_result FakeReady(struct task *t)
{
	fake.ready_calls++;
	return fake.ready[t] ? WAIT_READY : WAIT_NOT_READY;
}
void FakeTimeout(struct task *t)
{
	fake.log.push_back("timeout " + Name(t));
}
int FakeInterruptWait(struct task *t)
{
	fake.log.push_back("interrupt? " + Name(t));
	return fake.signal_ends[t] ? 1 : 0;
}
int FakeWaitOutside(struct pollfd *fds, int nfds, int timeout_ms)
{
	Fake::OutsideWait w;
	for (int i = 0; i < nfds; i++)
		w.fds.push_back(fds[i].fd);
	w.timeout_ms = timeout_ms;
	fake.outside.push_back(w);
	if (fake.outside.size() > 100) { // a scheduler that never stops waiting fails, never hangs
		ADD_FAILURE() << "sched_pick waited outside 100 times";
		fake.stops = true;
		return -1;
	}
	return fake.during_outside_wait();
}
void FakeReportDeadlock()
{
	fake.deadlocks++;
}
void FakeBetweenEvents()
{
	fake.between_events++;
}
void FakeFireTimers()
{
	if (fake.timer >= 0 && fake.timer <= vclock_now()) {
		fake.timer = -1;
		fake.log.push_back("timer fired");
		if (fake.on_timer)
			fake.on_timer();
	}
}
int64_t FakeNextTimer()
{
	return fake.timer;
}
bool FakeStopsPending()
{
	return fake.stops;
}

const struct sched_ops kOps = {
	FakeInterruptWait, FakeWaitOutside, FakeReportDeadlock, FakeBetweenEvents,
	FakeFireTimers,    FakeNextTimer,   FakeStopsPending,   nullptr,
};

// Parallel mode: each task's memory domain, from a map the test fills.
std::map<struct task *, int> domains;
int FakeDomainOf(struct task *t)
{
	return domains[t];
}
const struct sched_ops kParallelOps = {
	FakeInterruptWait, FakeWaitOutside, FakeReportDeadlock, FakeBetweenEvents,
	FakeFireTimers,    FakeNextTimer,   FakeStopsPending,   FakeDomainOf,
};

// A wait that the fake's `ready` map, a deadline or a signal ends.
struct wait Wait(const char *what, int64_t deadline_ns = -1)
{
	struct wait w = {};
	w.what = what;
	w.deadline_ns = deadline_ns;
	w.ready = FakeReady;
	w.on_timeout = FakeTimeout;
	return w;
}

void Park(struct task *t, struct wait w)
{
	sched_park(t, &w);
}

// Picks and "runs" the picked task to its next event, n times: the names in pick order.
std::vector<std::string> PickAndRun(int n)
{
	std::vector<std::string> order;
	for (int i = 0; i < n; i++) {
		struct task *t = sched_pick();
		if (!t) {
			order.push_back("none");
			break;
		}
		order.push_back(Name(t));
		sched_event(t);
	}
	return order;
}

using Names = std::vector<std::string>;

class Sched : public ::testing::Test
{
      protected:
	void SetUp() override
	{
		fake = Fake();
		sched_set_ops(&kOps);
		sched_init(1);
		sched_keep_turn(false);
		// One event of a task removed at once: a new turn, and no deadlock reported yet.
		struct task *t = NewTask();
		sched_event(t);
		sched_remove(t);
	}
	void TearDown() override
	{
		while (struct task *t = sched_first()) {
			futex_dequeue(t);
			sched_remove(t);
		}
	}
	struct task *Named(const std::string &name, enum task_state s = TASK_STOPPED)
	{
		struct task *t = NewTask(s);
		fake.names[t] = name;
		return t;
	}
};

// ---- the task list ---------------------------------------------------------------------------

TEST_F(Sched, TasksGetIncreasingVtidsAndStayInThatOrder)
{
	struct task *a = NewTask(), *b = NewTask(), *c = NewTask();
	EXPECT_EQ(Vtid(b), Vtid(a) + 1);
	EXPECT_EQ(Vtid(c), Vtid(b) + 1);
	EXPECT_EQ(sched_first(), a);
	EXPECT_EQ(Next(a), b);
	EXPECT_EQ(Next(b), c);
	EXPECT_EQ(Next(c), nullptr);
	EXPECT_EQ(sched_find(Tid(b)), b);
	EXPECT_EQ(sched_find(1), nullptr);
	EXPECT_EQ(sched_live_count(), 3);
	SetState(b, TASK_DEAD);
	EXPECT_EQ(sched_live_count(), 2) << "a dead task is listed but not live";
}

TEST_F(Sched, RemovingTheMiddleOrTheLastTaskKeepsTheListWhole)
{
	struct task *a = NewTask(), *b = NewTask(), *c = NewTask();
	int last_vtid = Vtid(c);
	sched_remove(b);
	EXPECT_EQ(Next(a), c);
	EXPECT_EQ(sched_find(next_tid - 2), nullptr) << "b's tid is gone";
	sched_remove(c); // the tail: the next task must be appended after a
	struct task *d = NewTask();
	EXPECT_EQ(Next(a), d);
	EXPECT_EQ(Next(d), nullptr);
	EXPECT_GT(Vtid(d), last_vtid) << "vtids are never reused";
	sched_remove(a);
	sched_remove(d);
	EXPECT_EQ(sched_first(), nullptr);
	EXPECT_EQ(sched_live_count(), 0);
	struct task *e = NewTask();
	EXPECT_EQ(sched_first(), e) << "a task added to an emptied list is its head";
	sched_remove(e);
	sched_remove(e); // not listed any more: nothing happens
	EXPECT_EQ(sched_first(), nullptr);
}

// ---- the timeline ----------------------------------------------------------------------------

TEST_F(Sched, EveryEventTakesTheNextLogicalTimeAndOneStepOfVirtualTime)
{
	struct task *a = NewTask(), *b = NewTask();
	uint64_t t0 = sched_now();
	int64_t v0 = vclock_now();
	sched_event(a);
	sched_event(b);
	sched_event(a);
	EXPECT_EQ(sched_now(), t0 + 3);
	EXPECT_EQ(vclock_now(), v0 + 3 * VCLOCK_STEP_NS);
}

TEST_F(Sched, EpochsOnlyGrow)
{
	uint64_t s = sched_signals_epoch(), c = sched_children_epoch();
	sched_signals_changed();
	EXPECT_EQ(sched_signals_epoch(), s + 1);
	EXPECT_EQ(sched_children_epoch(), c);
	sched_children_changed();
	sched_children_changed();
	EXPECT_EQ(sched_children_epoch(), c + 2);
}

// ---- the pick order --------------------------------------------------------------------------

TEST_F(Sched, NothingToPickWithoutTasks)
{
	EXPECT_EQ(sched_pick(), nullptr);
	EXPECT_EQ(fake.deadlocks, 0);
	EXPECT_GE(fake.between_events, 1) << "outside signals reach the group between events";
}

TEST_F(Sched, RoundRobinInVtidOrder)
{
	Named("a");
	Named("b");
	Named("c");
	EXPECT_EQ(PickAndRun(7), (Names{ "a", "b", "c", "a", "b", "c", "a" }));
}

TEST_F(Sched, QuantumKeepsTheCpuForThatManyEvents)
{
	sched_init(3);
	Named("a");
	Named("b");
	EXPECT_EQ(PickAndRun(8), (Names{ "a", "a", "a", "b", "b", "b", "a", "a" }));
	sched_init(0); // not a quantum: one event a turn
	EXPECT_EQ(PickAndRun(3), (Names{ "a", "b", "a" }));
}

TEST_F(Sched, EndingTheTurnPassesTheCpuToTheNextTask)
{
	sched_init(5);
	Named("a");
	Named("b");
	EXPECT_EQ(PickAndRun(2), (Names{ "a", "a" }));
	sched_end_turn();
	EXPECT_EQ(PickAndRun(1), (Names{ "b" }));
}

TEST_F(Sched, OnlyStoppedTasksArePicked)
{
	Named("new", TASK_NEW);
	Named("running", TASK_RUNNING);
	Named("exiting", TASK_EXITING);
	Named("dead", TASK_DEAD);
	EXPECT_EQ(sched_pick(), nullptr) << "nothing is stopped: nothing to resume";
	EXPECT_EQ(fake.deadlocks, 0) << "tasks that run are no deadlock";
	Named("stopped");
	EXPECT_EQ(PickAndRun(3), (Names{ "stopped", "stopped", "stopped" }));
}

TEST_F(Sched, RemovingTheCurrentTaskContinuesAfterIt)
{
	struct task *a = Named("a"), *b = Named("b");
	Named("c");
	(void)a;
	EXPECT_EQ(PickAndRun(2), (Names{ "a", "b" }));
	sched_remove(b); // b was the last to run
	EXPECT_EQ(PickAndRun(2), (Names{ "c", "a" }));
}

TEST_F(Sched, ContinuedTaskIsPickedNextOnce)
{
	struct task *a = Named("a");
	Named("b");
	struct task *c = Named("c");
	EXPECT_EQ(PickAndRun(1), (Names{ "a" }));
	sched_continue(a); // a's external call completes before anything else
	EXPECT_EQ(PickAndRun(2), (Names{ "a", "b" }));
	// A continued task that parked meanwhile is not resumed.
	Park(c, Wait("futex"));
	sched_continue(c);
	EXPECT_EQ(PickAndRun(1), (Names{ "a" }));
	// Nor one removed meanwhile.
	struct task *d = Named("d");
	sched_continue(d);
	sched_remove(d);
	EXPECT_EQ(PickAndRun(1), (Names{ "b" }));
}

// ---- parking and waking ----------------------------------------------------------------------

TEST_F(Sched, ParkedTaskIsSkippedUntilItsPredicateHolds)
{
	sched_init(5);
	struct task *a = Named("a");
	Named("b");
	EXPECT_EQ(PickAndRun(1), (Names{ "a" }));
	Park(a, Wait("read fd 3"));
	EXPECT_TRUE(Parked(a));
	EXPECT_EQ(PickAndRun(3), (Names{ "b", "b", "b" })) << "parking ended a's turn";
	fake.ready[a] = true;
	int calls = fake.ready_calls;
	EXPECT_EQ(PickAndRun(2), (Names{ "b", "b" })) << "b's quantum goes on";
	EXPECT_EQ(fake.ready_calls, calls)
		<< "predicates are evaluated only when a task could resume";
	sched_end_turn();
	EXPECT_EQ(PickAndRun(1), (Names{ "a" }));
	EXPECT_FALSE(Parked(a)) << "a woken task is unparked";
	EXPECT_EQ(fake.ready_calls, calls + 1);
}

// Woken by another task before the next pick (a futex wake), the parked task has still
// used up its turn: the CPU goes on to the next.
TEST_F(Sched, ParkingEndsTheTurnEvenIfTheWaitEndsAtOnce)
{
	sched_init(5);
	struct task *a = Named("a");
	Named("b");
	EXPECT_EQ(PickAndRun(1), (Names{ "a" }));
	Park(a, Wait("futex"));
	sched_unpark(a);
	EXPECT_EQ(PickAndRun(1), (Names{ "b" }));
}

// With sched_keep_turn (detrun's default since log format 7), a park whose wait is over
// at the next look goes on in the turn (a write to /dev/null under a lock: no convoy);
// one not over ends it, and the task is tried first, once, at each look of its turn.
TEST_F(Sched, WithKeepTurnAWaitOverAtOnceKeepsTheTurn)
{
	sched_init(5);
	sched_keep_turn(true);
	struct task *a = Named("a");
	Named("b");
	EXPECT_EQ(PickAndRun(1), (Names{ "a" }));
	fake.ready[a] = true;
	Park(a, Wait("write fd 2"));
	EXPECT_EQ(PickAndRun(1), (Names{ "a" })) << "over at once: a's turn goes on";
	EXPECT_FALSE(Parked(a));
	fake.ready[a] = false;
	Park(a, Wait("read fd 3"));
	int calls = fake.ready_calls;
	EXPECT_EQ(PickAndRun(1), (Names{ "b" })) << "not over: the turn ends";
	EXPECT_EQ(fake.ready_calls, calls + 1) << "a asked once in that look";
	EXPECT_EQ(PickAndRun(2), (Names{ "b", "b" })) << "b's own turn, a asked no more";
	EXPECT_EQ(fake.ready_calls, calls + 1);
}

// The quantum still ends the turn of a task whose waits are over at once: it is where a
// thread holding a lock can still be switched away from.
TEST_F(Sched, WithKeepTurnTheQuantumStillEndsTheTurn)
{
	sched_init(3);
	sched_keep_turn(true);
	struct task *a = Named("a");
	Named("b");
	fake.ready[a] = true;
	EXPECT_EQ(PickAndRun(2), (Names{ "a", "a" }));
	Park(a, Wait("write fd 2"));
	EXPECT_EQ(PickAndRun(1), (Names{ "a" })) << "its third event";
	Park(a, Wait("write fd 2"));
	EXPECT_EQ(PickAndRun(1), (Names{ "b" })) << "the quantum is over";
}

// A signal sent acts on its target at once natively (a SIGCONT continues a stopped
// process before the sender goes on): with sched_keep_turn it ends the sender's turn.
TEST_F(Sched, WithKeepTurnASignalSentEndsTheTurn)
{
	sched_init(5);
	sched_keep_turn(true);
	Named("a");
	Named("b");
	EXPECT_EQ(PickAndRun(2), (Names{ "a", "a" }));
	sched_signals_changed();
	EXPECT_EQ(PickAndRun(1), (Names{ "b" }));
}

// Spinners given the CPU in turn when nobody else can run (spinner_turn) do not keep it:
// descheduled again, each goes last, and the next spinner gets its turn.
TEST_F(Sched, WithKeepTurnSpinnersStillTakeTurns)
{
	sched_init(5);
	sched_keep_turn(true);
	struct task *a = Named("a"), *s1 = Named("s1"), *s2 = Named("s2");
	Park(a, Wait("futex"));
	SetSpinning(s1);
	SetSpinning(s2);
	EXPECT_EQ(PickAndRun(1), (Names{ "s1" }));
	SetSpinning(s1);
	EXPECT_EQ(PickAndRun(1), (Names{ "s2" }));
	SetSpinning(s2);
	EXPECT_EQ(PickAndRun(1), (Names{ "s1" }));
}

TEST_F(Sched, ParkKeepsItsOwnCopyOfTheDescription)
{
	struct task *a = Named("a"), *b = Named("b"), *c = Named("c"), *d = Named("d");
	char buf[64];
	strcpy(buf, "read fd 3");
	Park(a, Wait(buf));
	strcpy(buf, "read fd 4"); // the handler reuses its buffer for the next wait
	Park(b, Wait(buf));
	EXPECT_EQ(WaitWhat(a), "read fd 3");
	EXPECT_EQ(WaitWhat(b), "read fd 4");
	std::string longer(100, 'x');
	Park(c, Wait(longer.c_str()));
	EXPECT_EQ(WaitWhat(c), std::string(47, 'x')) << "cut to the buffer, terminated";
	Park(d, Wait(nullptr));
	EXPECT_EQ(WaitWhat(d), "");
}

bool FdOpen(int fd)
{
	return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

struct wait WaitOnFd(int fd, bool external, int64_t deadline_ns = -1)
{
	struct wait w = Wait("read", deadline_ns);
	w.fds = static_cast<struct pollfd *>(malloc(sizeof(struct pollfd)));
	w.fds[0] = { fd, POLLIN, 0 };
	w.nfds = 1;
	w.external = external;
	return w;
}

TEST_F(Sched, UnparkingOrRemovingClosesTheWaitsDescriptors)
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	struct task *a = Named("a"), *b = Named("b");
	int fa = dup(p[0]), fb = dup(p[0]);
	Park(a, WaitOnFd(fa, false));
	Park(b, WaitOnFd(fb, false));
	sched_unpark(a);
	EXPECT_FALSE(Parked(a));
	EXPECT_FALSE(FdOpen(fa)) << "unpark closes the wait's descriptor";
	sched_unpark(a); // not parked: nothing happens
	EXPECT_TRUE(FdOpen(fb));
	sched_remove(b);
	EXPECT_FALSE(FdOpen(fb)) << "removing a parked task closes its wait's descriptor";
	EXPECT_TRUE(FdOpen(p[0]));
	close(p[0]);
	close(p[1]);
}

TEST_F(Sched, InterruptIsAskedOncePerSignalEpoch)
{
	struct task *a = Named("a");
	Named("b");
	struct wait w = Wait("pause");
	w.interruptible = true;
	sched_park(a, &w);
	EXPECT_EQ(PickAndRun(3), (Names{ "b", "b", "b" }));
	EXPECT_EQ(fake.log, (Names{ "interrupt? a" })) << "asked once: no signal came since";
	sched_signals_changed();
	EXPECT_EQ(PickAndRun(1), (Names{ "b" }));
	EXPECT_EQ(fake.log, (Names{ "interrupt? a", "interrupt? a" }));
	fake.signal_ends[a] = true;
	sched_signals_changed();
	EXPECT_EQ(PickAndRun(1), (Names{ "a" })) << "a signal ends a's wait";
	EXPECT_FALSE(Parked(a));
}

TEST_F(Sched, UninterruptibleWaitIgnoresSignals)
{
	struct task *a = Named("a");
	Named("b");
	fake.signal_ends[a] = true;
	Park(a, Wait("futex"));
	sched_signals_changed();
	EXPECT_EQ(PickAndRun(2), (Names{ "b", "b" }));
	EXPECT_TRUE(fake.log.empty());
}

// ---- spinners --------------------------------------------------------------------------------

TEST_F(Sched, SpinnerRunsOnlyWhenNoOtherTaskCan)
{
	struct task *a = Named("a"), *s = Named("spinner");
	SetSpinning(s);
	EXPECT_EQ(PickAndRun(3), (Names{ "a", "a", "a" }));
	Park(a, Wait("futex"));
	EXPECT_EQ(PickAndRun(1), (Names{ "spinner" }));
	EXPECT_FALSE(Spinning(s)) << "picked: no longer descheduled";
	EXPECT_EQ(fake.deadlocks, 0);
}

TEST_F(Sched, SpinnerWaitsWhileTimeMovesForASleeper)
{
	struct task *a = Named("a"), *s = Named("spinner");
	SetSpinning(s);
	int64_t deadline = vclock_now() + 1000000;
	Park(a, Wait("nanosleep", deadline));
	EXPECT_EQ(PickAndRun(1), (Names{ "a" }))
		<< "the sleeper's deadline comes before the spinner";
	EXPECT_EQ(fake.log, (Names{ "timeout a" }));
	EXPECT_TRUE(Spinning(s));
	EXPECT_EQ(vclock_now(), deadline + VCLOCK_STEP_NS) << "the jump, then a's event";
}

// ---- virtual time and timers -----------------------------------------------------------------

TEST_F(Sched, WhenAllSleepTheClockJumpsToTheEarliestDeadline)
{
	int64_t now = vclock_now();
	struct task *a = Named("a"), *b = Named("b"), *c = Named("c");
	Park(a, Wait("sleep", now + 5000000));
	Park(b, Wait("sleep", now + 2000000));
	Park(c, Wait("sleep", now + 9000000));
	ASSERT_EQ(sched_pick(), b);
	EXPECT_EQ(vclock_now(), now + 2000000);
	EXPECT_EQ(fake.log, (Names{ "timeout b" })) << "the others still sleep";
	EXPECT_TRUE(Parked(a));
	SetState(b, TASK_DEAD);
	ASSERT_EQ(sched_pick(), a);
	EXPECT_EQ(vclock_now(), now + 5000000);
	SetState(a, TASK_DEAD);
	ASSERT_EQ(sched_pick(), c);
	EXPECT_EQ(vclock_now(), now + 9000000);
	EXPECT_EQ(fake.log, (Names{ "timeout b", "timeout a", "timeout c" }));
	EXPECT_EQ(fake.deadlocks, 0);
}

TEST_F(Sched, DeadlineAlreadyPastWakesAtOnceAndTimeNeverRunsBack)
{
	struct task *a = Named("a");
	int64_t now = vclock_now();
	Park(a, Wait("sleep", now - 5000));
	ASSERT_EQ(sched_pick(), a);
	EXPECT_EQ(vclock_now(), now);
	EXPECT_EQ(fake.log, (Names{ "timeout a" }));
}

// Tasks whose deadlines tie wake in round-robin order from the task after the last to run,
// all at the same virtual time.
TEST_F(Sched, DeadlineTiesWakeInRoundRobinOrder)
{
	struct task *a = Named("a"), *b = Named("b"), *c = Named("c");
	EXPECT_EQ(PickAndRun(2), (Names{ "a", "b" }));
	int64_t deadline = vclock_now() + 3000000;
	for (struct task *t : { a, b, c })
		Park(t, Wait("sleep", deadline));
	std::vector<std::string> order;
	for (int i = 0; i < 3; i++) {
		struct task *t = sched_pick();
		ASSERT_NE(t, nullptr);
		EXPECT_EQ(vclock_now(), deadline) << "the clock moves only when nobody can run";
		order.push_back(Name(t));
		SetState(t, TASK_RUNNING); // it runs on; no event yet
	}
	EXPECT_EQ(order, (Names{ "c", "a", "b" }));
	EXPECT_EQ(fake.log, (Names{ "timeout c", "timeout a", "timeout b" }));
}

TEST_F(Sched, TimerBeforeASleepersDeadlineFiresFirst)
{
	struct task *a = Named("a");
	int64_t now = vclock_now();
	Park(a, Wait("pause", now + 5000000));
	fake.timer = now + 1000000;
	fake.on_timer = [a] { fake.ready[a] = true; }; // its signal ends a's wait
	ASSERT_EQ(sched_pick(), a);
	EXPECT_EQ(vclock_now(), now + 1000000) << "the clock stops at the timer";
	EXPECT_EQ(fake.log, (Names{ "timer fired" }));
}

TEST_F(Sched, TimerThatWakesNobodyLetsTimeMoveOn)
{
	struct task *a = Named("a");
	int64_t now = vclock_now();
	Park(a, Wait("sleep", now + 5000000));
	fake.timer = now + 1000000;
	ASSERT_EQ(sched_pick(), a);
	EXPECT_EQ(vclock_now(), now + 5000000);
	EXPECT_EQ(fake.log, (Names{ "timer fired", "timeout a" }));
}

TEST_F(Sched, TimerTiedWithADeadlineFiresBeforeTheSleeperWakes)
{
	struct task *a = Named("a");
	int64_t when = vclock_now() + 2000000;
	Park(a, Wait("sleep", when));
	fake.timer = when;
	ASSERT_EQ(sched_pick(), a);
	EXPECT_EQ(vclock_now(), when);
	EXPECT_EQ(fake.log, (Names{ "timer fired", "timeout a" }));
}

TEST_F(Sched, TimerAloneMovesTheClockForASpinner)
{
	struct task *s = Named("spinner");
	SetSpinning(s);
	int64_t when = vclock_now() + 4000000;
	fake.timer = when;
	fake.on_timer = [s] { /* its signal: the spinner is interrupted */ (void)s; };
	ASSERT_EQ(sched_pick(), s);
	EXPECT_EQ(vclock_now(), when) << "the spinner waits for the timer, which time must reach";
	EXPECT_EQ(fake.log, (Names{ "timer fired" }));
}

// ---- outside input ---------------------------------------------------------------------------

TEST_F(Sched, OutsideWaitGetsOnlyExternalDescriptorsAndTheNextDeadline)
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	struct task *a = Named("a"), *b = Named("b");
	int fa = dup(p[0]), fb = dup(p[0]);
	int64_t deadline = vclock_now() + 2500000; // 2.5 ms: waited 3 ms, rounded up
	Park(a, WaitOnFd(fa, true, deadline));
	Park(b, WaitOnFd(fb, false));
	ASSERT_EQ(sched_pick(), a) << "the outside wait timed out: a's deadline came";
	ASSERT_EQ(fake.outside.size(), 1u);
	EXPECT_EQ(fake.outside[0].fds, std::vector<int>{ fa }) << "b's pipe is inside the group";
	EXPECT_EQ(fake.outside[0].timeout_ms, 3);
	EXPECT_EQ(vclock_now(), deadline);
	EXPECT_EQ(fake.log, (Names{ "timeout a" }));
	close(p[0]);
	close(p[1]);
}

TEST_F(Sched, OutsideInputWakesTheReaderWithoutMovingTheClock)
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	struct task *a = Named("a");
	int64_t now = vclock_now();
	Park(a, WaitOnFd(dup(p[0]), true));
	fake.during_outside_wait = [a] {
		fake.ready[a] = true;
		return 1;
	};
	ASSERT_EQ(sched_pick(), a);
	ASSERT_EQ(fake.outside.size(), 1u);
	EXPECT_EQ(fake.outside[0].timeout_ms, -1) << "no deadline: wait for ever";
	EXPECT_EQ(vclock_now(), now);
	EXPECT_EQ(fake.deadlocks, 0) << "waiting for outside input is no deadlock";
	close(p[0]);
	close(p[1]);
}

TEST_F(Sched, InputBeforeTheDeadlineLeavesTheClockWhereItWas)
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	struct task *a = Named("a");
	int64_t now = vclock_now();
	Park(a, WaitOnFd(dup(p[0]), true, now + 5000000));
	fake.during_outside_wait = [a] {
		fake.ready[a] = true; // the input came first
		return 1;
	};
	ASSERT_EQ(sched_pick(), a);
	ASSERT_EQ(fake.outside.size(), 1u);
	EXPECT_EQ(fake.outside[0].timeout_ms, 5);
	EXPECT_EQ(vclock_now(), now) << "the deadline was not reached";
	EXPECT_TRUE(fake.log.empty()) << "no timeout";
	close(p[0]);
	close(p[1]);
}

TEST_F(Sched, ChangedTaskDuringAnOutsideWaitEndsThePick)
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	struct task *a = Named("a");
	Park(a, WaitOnFd(dup(p[0]), true));
	fake.during_outside_wait = [] {
		fake.stops = true; // a SIGCHLD: the supervisor handles it first
		return -1;
	};
	EXPECT_EQ(sched_pick(), nullptr);
	close(p[0]);
	close(p[1]);
}

// ---- deadlocks -------------------------------------------------------------------------------

TEST_F(Sched, DeadlockIsReportedOnceThenASignalFromOutsideIsAwaited)
{
	struct task *a = Named("a"), *b = Named("b");
	struct wait w = Wait("futex");
	w.interruptible = true;
	sched_park(a, &w);
	sched_park(b, &w);
	int waits = 0;
	fake.during_outside_wait = [&waits, b] {
		if (++waits == 3)
			fake.signal_ends[b] = true; // the third wait brings a signal for b
		return -1;
	};
	ASSERT_EQ(sched_pick(), b);
	EXPECT_EQ(fake.deadlocks, 1) << "reported once, however long the group waits";
	ASSERT_EQ(fake.outside.size(), 3u);
	for (const Fake::OutsideWait &o : fake.outside) {
		EXPECT_TRUE(o.fds.empty());
		EXPECT_EQ(o.timeout_ms, -1);
	}
	sched_event(b); // b runs, then parks again: a new deadlock is reported anew
	sched_park(b, &w);
	fake.signal_ends[b] = false;
	fake.during_outside_wait = [] {
		fake.stops = true;
		return -1;
	};
	EXPECT_EQ(sched_pick(), nullptr);
	EXPECT_EQ(fake.deadlocks, 2);
}

// ---- futex wait queues -----------------------------------------------------------------------

std::vector<std::string> woken_names;
void Woken(struct task *t)
{
	woken_names.push_back(Name(t));
}

struct futex_key Key(uint64_t space, uint64_t off, uint64_t ino = 0)
{
	return futex_key{ space, ino, off };
}

class Futex : public Sched
{
      protected:
	void SetUp() override
	{
		Sched::SetUp();
		woken_names.clear();
	}
	// Wakes up to n on key: the names woken, in order.
	Names Wake(struct futex_key key, int n, uint32_t bitset = ~0u, int *count = nullptr)
	{
		woken_names.clear();
		int r = futex_wake(key, n, bitset, Woken);
		if (count)
			*count = r;
		EXPECT_EQ(r, (int)woken_names.size()) << "the count is of those woken";
		return woken_names;
	}
};

TEST_F(Futex, WakesOldestFirstAndOnlyAsManyAsAsked)
{
	struct futex_key k = Key(1, 0x1000);
	struct task *a = Named("a"), *b = Named("b"), *c = Named("c");
	futex_enqueue(b, k, ~0u);
	futex_enqueue(a, k, ~0u);
	futex_enqueue(c, k, ~0u);
	EXPECT_EQ(futex_waiter_count(k), 3);
	EXPECT_EQ(futex_first_waiter(k), b);
	EXPECT_EQ(Wake(k, 2), (Names{ "b", "a" })) << "enqueue order, not vtid order";
	EXPECT_FALSE(futex_queued(b));
	EXPECT_TRUE(futex_queued(c));
	EXPECT_EQ(futex_first_waiter(k), c);
	EXPECT_EQ(futex_waiter_count(k), 1);
}

// futex_waitv: one task on several keys. A wake on any of them takes it off every one and
// says which key it was; a timeout (futex_dequeue) takes it off all of them too.
TEST_F(Futex, AWaiterOnSeveralKeysIsWokenOnceByTheFirstWake)
{
	struct futex_key k0 = Key(1, 0x1000), k1 = Key(1, 0x2000);
	struct task *a = Named("a"), *b = Named("b");
	futex_enqueue_at(a, k0, ~0u, 0);
	futex_enqueue_at(a, k1, ~0u, 1);
	futex_enqueue(b, k0, ~0u);
	EXPECT_EQ(Wake(k1, 1), (Names{ "a" }));
	EXPECT_EQ(sched_of(a)->futex_index, 1);
	EXPECT_FALSE(futex_queued(a));
	EXPECT_EQ(futex_waiter_count(k0), 1) << "a left k0's queue as well";
	EXPECT_EQ(Wake(k0, 10), (Names{ "b" }));
	EXPECT_EQ(sched_of(b)->futex_index, 0);
	futex_enqueue_at(a, k0, ~0u, 0);
	futex_enqueue_at(a, k1, ~0u, 1);
	futex_dequeue(a);
	EXPECT_EQ(futex_waiter_count(k0) + futex_waiter_count(k1), 0);
}

TEST_F(Futex, WakingMoreThanAreWaitingWakesThoseThere)
{
	struct futex_key k = Key(1, 0x1000);
	struct task *a = Named("a"), *b = Named("b");
	futex_enqueue(a, k, ~0u);
	futex_enqueue(b, k, ~0u);
	int n = -1;
	EXPECT_EQ(Wake(k, 10, ~0u, &n), (Names{ "a", "b" }));
	EXPECT_EQ(n, 2);
	EXPECT_EQ(Wake(k, 10, ~0u, &n), Names{}) << "an empty queue wakes nobody";
	EXPECT_EQ(n, 0);
	EXPECT_EQ(futex_first_waiter(k), nullptr);
	EXPECT_EQ(futex_waiter_count(k), 0);
	// the queue is whole again after it was emptied
	futex_enqueue(b, k, ~0u);
	futex_enqueue(a, k, ~0u);
	EXPECT_EQ(Wake(k, 10), (Names{ "b", "a" }));
}

TEST_F(Futex, WakeOfNoneWakesNone)
{
	struct futex_key k = Key(1, 0x1000);
	struct task *a = Named("a");
	futex_enqueue(a, k, ~0u);
	EXPECT_EQ(Wake(k, 0), Names{});
	EXPECT_EQ(Wake(k, -1), Names{});
	EXPECT_TRUE(futex_queued(a));
}

TEST_F(Futex, KeysAreAddressSpaceAddressOrBackingObject)
{
	struct futex_key k1 = Key(1, 0x1000), k2 = Key(2, 0x1000), k3 = Key(1, 0x1004),
			 shared = Key(0x803, 0x40, 1234),
			 shared_other_file = Key(0x803, 0x40, 1235);
	struct task *a = Named("a"), *b = Named("b"), *c = Named("c"), *d = Named("d"),
		    *e = Named("e"), *f = Named("f");
	futex_enqueue(a, k1, ~0u);
	futex_enqueue(b, k2, ~0u);
	futex_enqueue(c, k3, ~0u);
	futex_enqueue(d, shared, ~0u);
	futex_enqueue(e, k1, ~0u);
	futex_enqueue(f, shared_other_file, ~0u);
	EXPECT_EQ(Wake(k1, 10), (Names{ "a", "e" }));
	EXPECT_EQ(Wake(shared, 10), (Names{ "d" }));
	EXPECT_EQ(futex_waiter_count(k2), 1);
	EXPECT_EQ(futex_waiter_count(k3), 1);
	EXPECT_EQ(futex_waiter_count(shared_other_file), 1);
}

TEST_F(Futex, BitsetsChooseWhomToWakeAndOnlyThoseCount)
{
	struct futex_key k = Key(1, 0x2000);
	struct task *a = Named("a"), *b = Named("b"), *c = Named("c"), *d = Named("d");
	futex_enqueue(a, k, 0x1);
	futex_enqueue(b, k, 0x2);
	futex_enqueue(c, k, 0x3);
	futex_enqueue(d, k, 0x4);
	EXPECT_EQ(Wake(k, 1, 0x2), (Names{ "b" })) << "a does not match and is not counted";
	EXPECT_EQ(Wake(k, 10, 0x8), Names{}) << "no waiter has bit 3";
	EXPECT_EQ(Wake(k, 10, 0x5), (Names{ "a", "c", "d" }));
}

TEST_F(Futex, DequeueLeavesTheOthersInOrder)
{
	struct futex_key k = Key(1, 0x3000);
	struct task *a = Named("a"), *b = Named("b"), *c = Named("c"), *d = Named("d");
	futex_enqueue(a, k, ~0u);
	futex_enqueue(b, k, ~0u);
	futex_enqueue(c, k, ~0u);
	futex_dequeue(b); // a timeout or a signal
	futex_dequeue(b); // not queued: nothing happens
	futex_dequeue(c); // the newest: the next enqueue still goes last
	futex_enqueue(d, k, ~0u);
	EXPECT_FALSE(futex_queued(b));
	EXPECT_EQ(Wake(k, 10), (Names{ "a", "d" }));
}

TEST_F(Futex, RequeueWakesThenMovesTheOldestOnes)
{
	struct futex_key from = Key(1, 0x100), to = Key(1, 0x200);
	struct task *a = Named("a"), *b = Named("b"), *c = Named("c"), *d = Named("d");
	for (struct task *t : { a, b, c, d })
		futex_enqueue(t, from, ~0u);
	woken_names.clear();
	EXPECT_EQ(futex_requeue(from, to, 1, 2, Woken), 3) << "woken + requeued";
	EXPECT_EQ(woken_names, (Names{ "a" }));
	EXPECT_EQ(futex_waiter_count(from), 1);
	EXPECT_EQ(futex_first_waiter(from), d);
	EXPECT_EQ(Wake(to, 10), (Names{ "b", "c" }));
}

TEST_F(Futex, RequeueOfMoreThanAreWaitingCountsThoseThere)
{
	struct futex_key from = Key(1, 0x100), to = Key(1, 0x200);
	struct task *a = Named("a"), *b = Named("b");
	futex_enqueue(a, from, ~0u);
	futex_enqueue(b, from, ~0u);
	woken_names.clear();
	EXPECT_EQ(futex_requeue(from, to, 1, 10, Woken), 2);
	EXPECT_EQ(woken_names, (Names{ "a" }));
	EXPECT_EQ(futex_waiter_count(to), 1);
	woken_names.clear();
	EXPECT_EQ(futex_requeue(from, to, 5, 5, Woken), 0) << "nobody left on from";
	EXPECT_TRUE(woken_names.empty());
}

TEST_F(Futex, RequeueWakesAnyBitsetAndMovedWaitersKeepTheirs)
{
	struct futex_key from = Key(1, 0x100), to = Key(1, 0x200);
	struct task *a = Named("a"), *b = Named("b");
	futex_enqueue(a, from, 0x4);
	futex_enqueue(b, from, 0x2);
	woken_names.clear();
	EXPECT_EQ(futex_requeue(from, to, 1, 1, Woken), 2);
	EXPECT_EQ(woken_names, (Names{ "a" })) << "a requeue's wake matches every bitset";
	EXPECT_EQ(Wake(to, 10, 0x1), Names{}) << "b still waits for bit 1 only";
	EXPECT_EQ(Wake(to, 10, 0x2), (Names{ "b" }));
}

// All waiters are in one FIFO (like the waiters of one of the kernel's hash buckets): a
// requeued waiter keeps its place, ahead of one that came to the target later.
TEST_F(Futex, RequeuedWaitersKeepTheirPlaceInTheOneFifo)
{
	struct futex_key from = Key(1, 0x100), to = Key(1, 0x200);
	struct task *a = Named("a"), *x = Named("x"), *b = Named("b");
	futex_enqueue(a, from, ~0u);
	futex_enqueue(x, to, ~0u);
	futex_enqueue(b, from, ~0u);
	woken_names.clear();
	EXPECT_EQ(futex_requeue(from, to, 0, 2, Woken), 2);
	EXPECT_TRUE(woken_names.empty());
	EXPECT_EQ(Wake(to, 10), (Names{ "a", "x", "b" }));
	// onto its own key: nothing moves
	futex_enqueue(a, from, ~0u);
	futex_enqueue(b, from, ~0u);
	woken_names.clear();
	EXPECT_EQ(futex_requeue(from, from, 0, 1, Woken), 1);
	EXPECT_EQ(Wake(from, 10), (Names{ "a", "b" }));
}

// ---- parallel mode: domains ----------------------------------------------------------

// The scheduler's domain records outlive a test: every test takes domain ids of its own.
int next_domain = 1000;

class Domains : public Sched
{
      protected:
	void SetUp() override
	{
		Sched::SetUp();
		sched_set_ops(&kParallelOps);
	}
	void TearDown() override
	{
		Sched::TearDown();
		sched_set_ops(&kOps);
	}
	struct task *In(int domain, const std::string &name)
	{
		struct task *t = Named(name);
		domains[t] = domain;
		return t;
	}
	std::string PickIn(int domain)
	{
		struct task *t = sched_pick_in(domain);
		return t ? Name(t) : "none";
	}
};

TEST_F(Domains, RoundRobinStaysInsideADomain)
{
	int one = next_domain++, two = next_domain++;
	struct task *a1 = In(one, "a1");
	In(two, "b1");
	struct task *a2 = In(one, "a2");
	EXPECT_EQ(PickIn(one), "a1");
	sched_event(a1);
	EXPECT_EQ(PickIn(one), "a2"); // quantum 1: a1's turn is over, b1 is not of this domain
	sched_event(a2);
	EXPECT_EQ(PickIn(one), "a1");
	EXPECT_EQ(PickIn(two), "b1");
}

TEST_F(Domains, EachDomainCountsItsOwnEvents)
{
	int one = next_domain++, two = next_domain++;
	struct task *a = In(one, "a");
	struct task *b = In(two, "b");
	uint64_t a0 = sched_domain_clock(one), b0 = sched_domain_clock(two);
	sched_event(a);
	sched_event(a);
	sched_event(b);
	EXPECT_EQ(sched_domain_clock(one), a0 + 2);
	EXPECT_EQ(sched_domain_clock(two), b0 + 1);
	EXPECT_EQ(sched_front(), b0 + 1); // the clock of the latest event's domain
	sched_domain_raise(two, a0 + 10);
	EXPECT_EQ(sched_domain_clock(two), a0 + 10);
	sched_domain_raise(two, 0); // a clock never goes back
	EXPECT_EQ(sched_domain_clock(two), a0 + 10);
}

TEST_F(Domains, ANewDomainStartsAtTheClockOfTheEventThatMadeIt)
{
	int one = next_domain++, born = next_domain++;
	struct task *a = In(one, "a");
	for (int i = 0; i < 5; i++)
		sched_event(a);
	EXPECT_EQ(sched_domain_clock(born), sched_domain_clock(one));
}

TEST_F(Domains, ATickMovesItsDomainsClockButNotTheFrontNorTheTimeline)
{
	int one = next_domain++, two = next_domain++;
	struct task *a = In(one, "a");
	In(two, "b");
	sched_event(a);
	uint64_t clock = sched_domain_clock(one), now = sched_now();
	sched_domain_tick(one, 40);
	EXPECT_EQ(sched_domain_clock(one), clock + 40);
	// The front is the clock of the latest event as it stood then: a domain woken now
	// must not depend on when the tick came.
	EXPECT_EQ(sched_front(), clock);
	EXPECT_EQ(sched_now(), now);
	int born = next_domain++;
	EXPECT_EQ(sched_domain_clock(born), clock); // born at an event: that event's clock
	sched_event(a);
	EXPECT_EQ(sched_front(), clock + 41);
}

TEST_F(Domains, AParkedTaskWakesWhenItsDomainIsLookedAt)
{
	int one = next_domain++;
	struct task *a = In(one, "a");
	Park(a, Wait("read"));
	EXPECT_EQ(PickIn(one), "none");
	fake.ready[a] = true;
	EXPECT_EQ(PickIn(one), "a");
	EXPECT_FALSE(Parked(a));
}

} // namespace
