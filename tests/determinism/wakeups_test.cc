// Lost wake-ups and calls that sleep unseen. Each case is a
// guest that waits, blocking, for something another member of the group does: a signal
// through a signalfd (read, poll, select, epoll, nested epoll), a pidfd, an eventfd, a
// timerfd, inotify; splice/tee/vmsplice/sendfile on pipes; SysV messages and semaphores,
// POSIX message queues; a FIFO opened before its other end; writev, pwritev2 and sendmsg
// into a full pipe or socketpair. Before the fixes each of these hung the whole group (the
// hard timeout below fails the test). The guests check their own results and print one
// fixed line, the same natively and on every detrun run.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <ostream>
#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string kGuests = GUEST_DIR;

struct Case {
	const char *name;
	std::vector<std::string> argv;      // {dir} is a fresh directory
	const char *expected;               // the whole of stdout
	const char *under_detrun = nullptr; // when detrun refuses the call: its stdout
	const char *stderr_has = nullptr;   // and what it says about it
};

std::vector<Case> Cases()
{
	const std::string fd = kGuests + "/wake_fd_kinds";
	const std::string sl = kGuests + "/wake_sleepers";
	const std::string ch = kGuests + "/epoll_set_changes";
	return {
		{ "signalfd_read", { fd, "signalfd_read" }, "signalfd_read: signo 10, child 7\n" },
		{ "signalfd_poll", { fd, "signalfd_poll" }, "signalfd_poll: signo 10, child 7\n" },
		{ "signalfd_select",
		  { fd, "signalfd_select" },
		  "signalfd_select: signo 10, child 7\n" },
		{ "signalfd_epoll",
		  { fd, "signalfd_epoll" },
		  "signalfd_epoll: signo 10, child 7\n" },
		{ "signalfd_epoll_nested",
		  { fd, "signalfd_epoll_nested" },
		  "signalfd_epoll_nested: signo 10, child 7\n" },
		{ "signalfd_poll_epoll",
		  { fd, "signalfd_poll_epoll" },
		  "signalfd_poll_epoll: signo 10, child 7\n" },
		{ "signalfd_epoll_et",
		  { fd, "signalfd_epoll_et" },
		  "signalfd_epoll_et: first 7, then 42, signo 10, child 7\n" },
		{ "signalfd_thread", { fd, "signalfd_thread" }, "signalfd_thread: signo 12\n" },
		{ "signalfd_sigchld",
		  { fd, "signalfd_sigchld" },
		  "signalfd_sigchld: signo 17, child 7\n" },
		{ "pidfd_poll", { fd, "pidfd_poll" }, "pidfd_poll: child 7\n" },
		{ "pidfd_epoll", { fd, "pidfd_epoll" }, "pidfd_epoll: child 7\n" },
		{ "eventfd_read", { fd, "eventfd_read" }, "eventfd_read: value 5, child 7\n" },
		{ "eventfd_epoll", { fd, "eventfd_epoll" }, "eventfd_epoll: value 5, child 7\n" },
		{ "timerfd_read", { fd, "timerfd_read" }, "timerfd_read: expirations 1\n" },
		{ "timerfd_epoll", { fd, "timerfd_epoll" }, "timerfd_epoll: expirations 1\n" },
		{ "inotify_read",
		  { fd, "inotify_read", "{dir}" },
		  "inotify_read: wake_inotify_file, child 7\n" },
		// A waiter's epoll set (a signalfd and a pipe) changed by its sibling thread
		// with calls that do not stop: what detrun remembers of the set from one look
		// to the next must not outlive the change.
		{ "epoll_set_added", { ch, "added" }, "added: woken by item 3, signal 0\n" },
		{ "epoll_set_replaced",
		  { ch, "replaced" },
		  "replaced: woken by item 1, signal 12\n" },
		{ "epoll_set_remasked",
		  { ch, "remasked" },
		  "remasked: woken by item 1, signal 12\n" },
		{ "splice", { sl, "splice" }, "splice: hello through a pipe, child 7\n" },
		{ "tee", { sl, "tee" }, "tee: hello through a pipe, child 7\n" },
		{ "vmsplice",
		  { sl, "vmsplice" },
		  "vmsplice into a full pipe: 196608 bytes, child 7\n" },
		{ "sendfile",
		  { sl, "sendfile", "{dir}" },
		  "sendfile into a full pipe: 196608 bytes, child 7\n" },
		{ "preadv2", { sl, "preadv2" }, "preadv2: hello through preadv2, child 7\n" },
		{ "writev", { sl, "writev" }, "writev into a full pipe: 196608 bytes, child 7\n" },
		{ "pwritev2",
		  { sl, "pwritev2" },
		  "pwritev2 into a full pipe: 196608 bytes, child 7\n" },
		{ "sendmsg", { sl, "sendmsg" }, "sendmsg on a socketpair: 262144 bytes, child 7\n" },
		{ "recv_waitall",
		  { sl, "recv_waitall" },
		  "recv MSG_WAITALL: 262144 bytes, intact, child 7\n" },
		{ "recvmsg_waitall",
		  { sl, "recvmsg_waitall" },
		  "recvmsg MSG_WAITALL: 262144 bytes, intact, child 7\n" },
		{ "msgrcv", { sl, "msgrcv" }, "msgrcv: a message, child 7\n" },
		{ "msgsnd", { sl, "msgsnd" }, "msgsnd into a full queue: sent, child 7\n" },
		{ "semop", { sl, "semop" }, "semop: got it, value 0, child 7\n" },
		{ "semtimedop", { sl, "semtimedop" }, "semtimedop: got it, value 0, child 7\n" },
		{ "mq_receive", { sl, "mq_receive" }, "mq_receive: a queued message, child 7\n" },
		{ "mq_send", { sl, "mq_send" }, "mq_send into a full queue: sent, child 7\n" },
		{ "timeouts",
		  { sl, "timeouts" },
		  "timeouts: semtimedop -1 Resource temporarily unavailable, mq_timedreceive -1 "
		  "Connection timed out\n" },
		{ "connect_backlog",
		  { sl, "connect_backlog", "{dir}" },
		  "connect to a full backlog: 3 connections, child 7\n" },
		{ "fifo_read",
		  { sl, "fifo_read", "{dir}" },
		  "fifo opened for reading first: through a fifo, child 7\n" },
		{ "fifo_write",
		  { sl, "fifo_write", "{dir}" },
		  "fifo opened for writing first: written, child 7\n" },
		// Refused under detrun (its completions come outside the timeline): ENOSYS and a
		// hazard line instead of a hang.
		{ "aio_poll",
		  { sl, "aio_poll" },
		  "aio poll: events 0x41, child 7\n",
		  "aio poll: io_setup: Function not implemented\n",
		  "io_setup is not supported" },
	};
}

// ctest lists a case by its name, not by its bytes.
void PrintTo(const Case &c, std::ostream *os)
{
	*os << c.name;
}

class Wakeups : public ::testing::TestWithParam<Case>
{
};

std::string Expand(const std::string &arg, const std::string &dir)
{
	return arg == "{dir}" ? dir : arg;
}

// Natively once (the guest is right), then three times under detrun: same line each time.
TEST_P(Wakeups, CompletesUnderDetrun)
{
	const Case &c = GetParam();
	char tmpl[] = "/tmp/detrun-wake-XXXXXX";
	ASSERT_NE(mkdtemp(tmpl), nullptr);
	std::string dir = tmpl;
	std::vector<std::string> argv;
	for (const auto &a : c.argv)
		argv.push_back(Expand(a, dir));
	RunOptions opt;
	opt.timeout_s = 60;
	RunResult native = RunCommand(argv, opt);
	EXPECT_EQ(native.code, 0) << native.Describe();
	EXPECT_EQ(native.out, c.expected) << native.Describe();
	for (int run = 0; run < 3; run++) {
		RunResult r = RunCommand(UnderDetrun({}, argv), opt);
		EXPECT_FALSE(r.timed_out) << "run " << run << " hung: " << r.Describe();
		EXPECT_EQ(r.code, 0) << "run " << run << ": " << r.Describe();
		EXPECT_EQ(r.out, c.under_detrun ? c.under_detrun : c.expected)
			<< "run " << run << ": " << r.Describe();
		if (c.stderr_has) {
			EXPECT_NE(r.err.find(c.stderr_has), std::string::npos) << r.Describe();
		}
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		if (HasFailure())
			break;
	}
	RunCommand({ "rm", "-rf", dir });
}

// Four processes wait, as PostgreSQL's do between statements, on epoll sets holding a
// signalfd, while a fifth makes 400 calls that stop. The scheduler looks at every waiter
// before each pick; a look used to list the set anew, duplicating the set and each of its
// items from the waiter three times over (about 9,900 pidfd_getfd calls of detrun's here,
// some fifty calls in all per look: PostgreSQL served 2.5% of its native load). A look
// now checks what it remembers of the set, so detrun duplicates descriptors only when a
// waiter parks: fewer copies than the calls that stop. (strace follows detrun alone,
// not the group it traces.)
TEST(EpollLooks, IdleWaitersAreNotListedAgainAtEveryLook)
{
	TempDir dir("looks");
	std::string calls = dir / "calls";
	RunResult r = RunCommand({ "strace", "-qq", "-e", "trace=pidfd_getfd", "-o", calls,
				   DETRUN_PATH, "--", kGuests + "/epoll_set_changes", "idle",
				   "4" });
	ASSERT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "idle: 4 of 4 waiters woken\n") << r.Describe();
	std::string log = ReadFile(calls);
	size_t copies = 0;
	for (size_t at = log.find("pidfd_getfd("); at != std::string::npos;
	     at = log.find("pidfd_getfd(", at + 1))
		copies++;
	EXPECT_GT(copies, 0u) << "strace saw no pidfd_getfd at all: " << log.substr(0, 500);
	EXPECT_LT(copies, 400u) << "detrun duplicated descriptors " << copies
				<< " times for 400 events beside 4 idle epoll waiters";
}

// A signalfd the program inherited (made before detrun started) reaches its epoll set:
// detrun judges that set item by item, as for one the group made (it does not poll a set
// that may hold a signalfd), so the waiter gets its event as natively.
TEST(EpollLooks, InheritedSignalfdInAnEpollSetWakesItsWaiter)
{
	const std::string guest = kGuests + "/inherited_signalfd";
	RunResult native = RunCommand({ guest, "launch", "-" });
	ASSERT_EQ(native.code, 0) << native.Describe();
	EXPECT_EQ(native.out, "events 1\n") << native.Describe();
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand({ guest, "launch", DETRUN_PATH });
		ASSERT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, "events 1\n") << r.Describe();
	}
}

INSTANTIATE_TEST_SUITE_P(Table, Wakeups, ::testing::ValuesIn(Cases()),
			 [](const ::testing::TestParamInfo<Case> &i) { return i.param.name; });

} // namespace
