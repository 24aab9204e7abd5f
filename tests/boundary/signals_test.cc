// Signals at the group's boundary, job control, and the end of a run: the group is a
// process group of its own, signals from outside reach it only through detrun at a logged
// logical time, a run always ends with its log closed, and stops and continues behave as
// the kernel makes them for a shell.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string kDetrun = DETRUN_PATH;

std::string Guest(const std::string &name)
{
	return std::string(GUEST_DIR) + "/" + name;
}

struct TempDir {
	std::string path;
	TempDir()
	{
		char tmpl[] = "/tmp/detrun-signals-XXXXXX";
		path = mkdtemp(tmpl);
	}
	~TempDir()
	{
		RunCommand({ "rm", "-rf", path });
	}
	std::string operator/(const std::string &name) const
	{
		return path + "/" + name;
	}
};

// A pseudo-terminal whose slave becomes the run's controlling terminal and stdin.
struct Pty {
	int master = -1, slave = -1;
	Pty()
	{
		master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0)
			slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	}
	~Pty()
	{
		close(slave);
		close(master);
	}
	RunOptions options(int timeout_s = 60) const
	{
		RunOptions opt;
		opt.stdin_fd = slave;
		opt.controlling_tty = true;
		opt.timeout_s = timeout_s;
		return opt;
	}
};

RunOptions Limited(int timeout_s = 60)
{
	RunOptions opt;
	opt.timeout_s = timeout_s;
	return opt;
}

RunResult Replay(const std::string &log)
{
	return RunCommand({ "unshare", "-n", kDetrun, "replay", log }, Limited());
}

// ---- point 17: the group's own process group ------------------------------------------

// kill(0, sig) reaches the program's process group. Natively the program handles all eight
// signals; under detrun they used to reach detrun too, which died of the first (SIGABRT).
TEST(Signals, KillZeroReachesTheGroupOnly)
{
	RunResult native = RunCommand({ Guest("sig_kill0") }, Limited());
	ASSERT_EQ(native.code, 0) << native.Describe();
	ASSERT_EQ(native.out, "sig_kill0: 8 handled\n");
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { Guest("sig_kill0") }), Limited());
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, native.out) << r.Describe();
	}
}

// GNU timeout signals detrun and then its whole process group. The program must get the
// signal once, through detrun, at a logged time: the replay prints the same count. It used
// to get its own copy straight from outside (unlogged), and detrun took the second copy for
// "asked again" and killed the group with no end record.
TEST(Signals, ProcessGroupSignalFromOutsideIsLogged)
{
	TempDir dir;
	RunResult rec = RunCommand({ "timeout", "-s", "TERM", "1", kDetrun, "record", "-o",
				     dir / "term.dlog", "--", Guest("sig_pgrp_term") },
				   Limited());
	ASSERT_EQ(rec.code, 124) << rec.Describe(); // timeout's own code: it sent the signal
	ASSERT_NE(rec.out.find("ready\ncount "), std::string::npos) << rec.Describe();
	RunResult listed = RunCommand({ kDetrun, "log", dir / "term.dlog" });
	EXPECT_NE(listed.out.find(" 15 (Terminated)"), std::string::npos) << listed.out;
	EXPECT_NE(listed.out.find("end      exit code 0"), std::string::npos) << listed.out;
	RunResult rep = Replay(dir / "term.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out) << FirstDifference("recording", rec.out, "replay", rep.out);
}

// Asked twice to end (SIGTERM, which the program handles and ignores, then SIGINT), detrun
// kills the group; the kill is an outside signal like any other, so the recording closes
// with its end record and replays to the same end. The second signal used to exit detrun
// on the spot, leaving a log cut short. `opts` go to detrun record.
void RecordTwoEndingSignalsAndReplay(const std::vector<std::string> &opts)
{
	TempDir dir;
	std::vector<std::string> argv = { kDetrun, "record", "-o", dir / "again.dlog" };
	argv.insert(argv.end(), opts.begin(), opts.end());
	argv.insert(argv.end(), { "--", Guest("sig_pgrp_term"), "keep" });
	Child rec(argv, Limited());
	ASSERT_TRUE(rec.WaitForOutput("ready\n", 30)) << rec.Finish().Describe();
	rec.Signal(SIGTERM);
	ASSERT_TRUE(rec.WaitForOutput("got SIGTERM, going on\n", 30)) << rec.Finish().Describe();
	rec.Signal(SIGINT);
	RunResult recorded = rec.Finish();
	ASSERT_EQ(recorded.code, 128 + SIGKILL) << recorded.Describe();
	EXPECT_NE(recorded.err.find("detrun: Interrupt again: killing the group"), std::string::npos)
		<< recorded.Describe();
	RunResult listed = RunCommand({ kDetrun, "log", dir / "again.dlog" });
	EXPECT_NE(listed.out.find(" 9 (Killed)"), std::string::npos) << listed.out;
	EXPECT_NE(listed.out.find("end      exit code 137"), std::string::npos) << listed.out;
	RunResult rep = Replay(dir / "again.dlog");
	EXPECT_EQ(rep.code, 128 + SIGKILL) << rep.Describe();
	EXPECT_EQ(rep.out, recorded.out)
		<< FirstDifference("recording", recorded.out, "replay", rep.out);
}

TEST(Signals, SecondSignalClosesTheRecording)
{
	RecordTwoEndingSignalsAndReplay({});
}

// The same with processes in parallel, where the kill comes at a barrier while the task's
// next stop waits for its turn: that stop was handled as an event or not, as the kernel had
// taken the killed task out of it by then or not, and the replay ended an event earlier
// or later than the recording (about 1 run in 4).
TEST(Signals, SecondSignalClosesAParallelRecording)
{
	for (int i = 0; i < 6 && !HasFailure(); i++)
		RecordTwoEndingSignalsAndReplay({ "--jobs", "2" });
}

// SIGTERM from outside in parallel mode while a child computes between a write that raised
// SIGPIPE (ignored: a stop of its own under ptrace, but no event) and its next write. The
// barrier that passes the signal on came at that stop or at the next write, as detrun read
// the signal before or after the stop had been handled; the replay, which has the signal at
// that time from the start, always passed it at the SIGPIPE stop: the handler saw a write
// fewer, and the replay diverged (almost every run).
TEST(Signals, OutsideSignalInParallelModeLandsWhereTheRecordingHadIt)
{
	for (int i = 0; i < 4 && !HasFailure(); i++) {
		TempDir dir;
		Child run({ kDetrun, "record", "-o", dir / "epipe.dlog", "--jobs", "2", "--",
			    Guest("sig_epipe_term") },
			  Limited());
		// Once the child computes: sent by a fixed timer (timeout 0.3), the signal came
		// before the program had started on a loaded machine.
		ASSERT_TRUE(run.WaitForOutput("computing\n", 60)) << run.Finish().Describe();
		run.Signal(SIGTERM);
		RunResult rec = run.Finish();
		ASSERT_EQ(rec.code, 0) << rec.Describe(); // the program's own: it took the signal
		ASSERT_NE(rec.out.find("SIGTERM after "), std::string::npos) << rec.Describe();
		RunResult rep = Replay(dir / "epipe.dlog");
		EXPECT_EQ(rep.code, 0) << rep.Describe();
		EXPECT_EQ(rep.out, rec.out)
			<< FirstDifference("recording", rec.out, "replay", rep.out);
	}
}

// SIGTERM to detrun while one thread loops on sched_yield and the main thread waits to join
// it: the signal waited in detrun's signal pipe, unread, as long as events kept detrun busy
// (it read the pipe only when a wait was interrupted). Ten runs: it hung in some.
TEST(Signals, TermEndsARunThatYieldsBesideAParkedTask)
{
	for (int i = 0; i < 10; i++) {
		Child run(UnderDetrun({}, { Guest("sig_yield_term") }), Limited(30));
		ASSERT_TRUE(run.WaitForOutput("ready\n", 20)) << run.Finish().Describe();
		run.Signal(SIGTERM);
		RunResult r = run.Finish();
		ASSERT_FALSE(r.timed_out) << r.Describe();
		ASSERT_EQ(r.code, 128 + SIGTERM) << r.Describe();
	}
}

// From the terminal's foreground, the program is in the foreground (its own process group
// holds the terminal), and when detrun ends the shell's process group has it back: the
// program run natively afterwards by the same shell is in the foreground too.
TEST(Signals, TerminalForegroundGoesToTheGroupAndBack)
{
	Pty pty;
	ASSERT_GE(pty.slave, 0);
	std::string script = "'" + kDetrun + "' -- '" + Guest("sig_tty_fg") + "'; '" +
			     Guest("sig_tty_fg") + "'";
	RunResult r = RunCommand({ "sh", "-c", script }, pty.options());
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "foreground: yes\nforeground: yes\n") << r.Describe();
}

// ---- point 23: job control ---------------------------------------------------------------

// A parent stops its child (SIGSTOP, then SIGTSTP), sees the stop with waitpid(WUNTRACED),
// checks the child does not run while stopped, continues it and sees that with
// waitpid(WCONTINUED). The child was parked in a read, where a stop signal never reached
// it: the parent's waitpid hung (and a stopped child that ran on was resumed at once).
TEST(Signals, JobControlStopAndContinue)
{
	RunResult native = RunCommand({ Guest("sig_jobctl") }, Limited());
	ASSERT_EQ(native.code, 0) << native.Describe();
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { Guest("sig_jobctl") }), Limited(30));
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, native.out)
			<< FirstDifference("native", native.out, "detrun", r.out);
	}
}

// The same with a process of three threads, parked in reads and a join: each takes part
// in the stop (its call interrupted, restarted after SIGCONT), so the parent sees the stop.
TEST(Signals, JobControlStopsEveryThread)
{
	RunResult native = RunCommand({ Guest("sig_jobctl_threads") }, Limited());
	ASSERT_EQ(native.code, 0) << native.Describe();
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { Guest("sig_jobctl_threads") }),
					 Limited(30));
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, native.out)
			<< FirstDifference("native", native.out, "detrun", r.out);
	}
}

// bash with job control: a stopped job stays stopped while the shell sleeps, `jobs` says
// so, and after SIGCONT it finishes its own sleep. The stopped job used to run on and be
// gone by the time the shell looked ("no such job").
TEST(Signals, ShellJobStaysStopped)
{
	const std::string script = "set -m; sleep 1 & kill -STOP %1; wait %1; echo \"wait: $?\"; "
				   "sleep 2; jobs; kill -CONT %1; wait %1; echo \"end: $?\"";
	const std::string expected = "wait: 147\n[1]+  Stopped                 sleep 1\nend: 0\n";
	RunResult native = RunCommand({ "bash", "-c", script }, Limited());
	ASSERT_EQ(native.out, expected) << native.Describe();
	for (int i = 0; i < 2; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { "bash", "-c", script }), Limited(30));
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, expected) << r.Describe();
	}
}

// When every task of the group stops, detrun stops too, so the shell running it sees its
// job stopped; continued, detrun passes the SIGCONT on and the program goes on. detrun
// used to report a deadlock and wait, never stopped: the shell's `wait` hung.
TEST(Signals, DetrunStopsWithItsGroup)
{
	const std::string script = "set -m; PROG sh -c 'kill -STOP $$; echo continued' & wait %1; "
				   "echo \"stopped: $?\"; kill -CONT %1; wait %1; echo \"end: $?\"";
	const std::string expected = "stopped: 147\ncontinued\nend: 0\n";
	RunResult native = RunCommand({ "bash", "-c", Replace(script, "PROG ", "") }, Limited());
	ASSERT_EQ(native.out, expected) << native.Describe();
	for (int i = 0; i < 2; i++) {
		RunResult r = RunCommand({ "bash", "-c",
					   Replace(script, "PROG", "'" + kDetrun + "' --") },
					 Limited(30));
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, expected) << r.Describe();
	}
}

// A job started in the background that reads its terminal stops on SIGTTIN (detrun with
// it); `fg` gives it the terminal and it reads the line typed ahead. (Sharing detrun's
// process group, the group used to get this right by accident; in a process group of its
// own it must be given the terminal when detrun is brought to the foreground.)
TEST(Signals, BackgroundJobBroughtToTheForeground)
{
	// bash gives its terminal away through the terminal on its standard error
	const std::string script = "exec 2>/dev/tty; set -m; PROG & wait %1; fg %1 >/dev/null; "
				   "echo \"fg: $?\"";
	const std::string expected = "read 'hello' in the foreground\nfg: 0\n";
	for (const std::string &prog :
	     { Guest("sig_tty_read"), "'" + kDetrun + "' -- " + Guest("sig_tty_read"),
	       "'" + kDetrun + "' -- " + Guest("sig_tty_read") }) {
		Pty pty;
		ASSERT_GE(pty.slave, 0);
		ASSERT_EQ(write(pty.master, "hello\n", 6), 6);
		RunResult r = RunCommand({ "bash", "-c", Replace(script, "PROG", prog) },
					 pty.options(30));
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, expected) << r.Describe();
	}
}

// Ctrl-Z at the terminal while a recorded program waits for a line: the group stops (the
// sentinel reports the terminal's SIGTSTP, logged), detrun stops with it, the shell sees
// the job stopped; `fg` continues it (the SIGCONT logged) and it reads the line typed
// then. The replay prints the same.
TEST(Signals, CtrlZStopsARecordedJobAndFgContinuesIt)
{
	TempDir dir;
	Pty pty;
	ASSERT_GE(pty.slave, 0);
	const std::string script =
		"exec 2>/dev/tty; set -m; SIG_TTY_READ_SAY=1 '" + kDetrun + "' record -o '" +
		(dir / "z.dlog") + "' -- " + Guest("sig_tty_read") +
		"; [ $? -gt 128 ] && echo stopped; fg >/dev/null; echo \"fg: $?\"";
	Child rec({ "bash", "-c", script }, pty.options(60));
	ASSERT_TRUE(rec.WaitForOutput("reading\n", 30)) << rec.Finish().Describe();
	ASSERT_EQ(write(pty.master, "\x1a", 1), 1); // the terminal's suspend character
	ASSERT_TRUE(rec.WaitForOutput("stopped\n", 30)) << rec.Finish().Describe();
	ASSERT_EQ(write(pty.master, "hello\n", 6), 6);
	RunResult recorded = rec.Finish();
	ASSERT_EQ(recorded.out, "reading\nstopped\nread 'hello' in the foreground\nfg: 0\n")
		<< recorded.Describe();
	RunResult listed = RunCommand({ kDetrun, "log", dir / "z.dlog" });
	EXPECT_NE(listed.out.find(" 20 (Stopped)"), std::string::npos) << listed.out;
	EXPECT_NE(listed.out.find(" 18 (Continued)"), std::string::npos) << listed.out;
	RunResult rep = Replay(dir / "z.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, "reading\nread 'hello' in the foreground\n") << rep.Describe();
}

// Ctrl-C at the terminal while a recorded program computes: the kernel's copy of SIGINT
// reaches the program wherever it is and is dropped, detrun passes its own on at a logged
// point, and the replay prints the same count. With processes in parallel the copy's stop
// used to wait for its turn and count as the delivery when the signal was passed on: the
// recording had the program stop earlier than its own next call, where no replay stops
// (about 1 run in 3 diverged).
TEST(Signals, CtrlCWhileComputingReplaysInParallel)
{
	for (int i = 0; i < 6 && !HasFailure(); i++) {
		TempDir dir;
		Pty pty;
		ASSERT_GE(pty.slave, 0);
		Child rec({ kDetrun, "record", "--jobs", "2", "-o", dir / "c.dlog", "--",
			    Guest("sig_tty_count") },
			  pty.options(60));
		ASSERT_TRUE(rec.WaitForOutput("ready\n", 30)) << rec.Finish().Describe();
		ASSERT_EQ(write(pty.master, "\x03", 1), 1); // the terminal's interrupt character
		RunResult recorded = rec.Finish();
		ASSERT_EQ(recorded.code, 0) << recorded.Describe();
		ASSERT_NE(recorded.out.find("count "), std::string::npos) << recorded.Describe();
		RunResult rep = Replay(dir / "c.dlog");
		EXPECT_EQ(rep.code, 0) << rep.Describe();
		EXPECT_EQ(rep.out, recorded.out)
			<< FirstDifference("recording", recorded.out, "replay", rep.out);
	}
}

// ---- point 22: stops and deaths the kernel decides -------------------------------------------

// A background job writing to its terminal with TOSTOP stops on SIGTTOU and stays stopped;
// its parent sees the stop and kills it. The stop used to be undone at once, the write
// retried, and the SIGTTOU came again, for ever.
TEST(Signals, TostopStopsABackgroundWriter)
{
	const std::string expected = "child stopped by signal 22\nchild killed by signal 9\n"
				     "sig_tostop: ok\n";
	{
		Pty pty;
		ASSERT_GE(pty.slave, 0);
		RunResult native = RunCommand({ Guest("sig_tostop") }, pty.options());
		ASSERT_EQ(native.out, expected) << native.Describe();
	}
	for (int i = 0; i < 2; i++) {
		Pty pty;
		ASSERT_GE(pty.slave, 0);
		RunResult r = RunCommand(UnderDetrun({}, { Guest("sig_tostop") }), pty.options(30));
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, expected) << r.Describe();
	}
}

// The init of a nested PID namespace dies of a segfault, as natively (the kernel forces a
// fault's signal through init's protection). Traced, it used to take the signal, drop it,
// and fault again for ever, a stack dump each time.
TEST(Signals, NestedInitDiesOfItsFault)
{
	RunResult native = RunCommand({ Guest("sig_nested_init") }, Limited());
	ASSERT_EQ(native.out, "sig_nested_init: init killed by signal 11\n") << native.Describe();
	for (const std::vector<std::string> &opts :
	     { std::vector<std::string>{}, std::vector<std::string>{ "--no-namespaces" } }) {
		RunResult r = RunCommand(UnderDetrun(opts, { Guest("sig_nested_init") }),
					 Limited(30));
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, native.out) << r.Describe();
		EXPECT_LT(r.err.size(), 2000u) << "one report, not a loop\n" << r.Describe();
	}
}

// A CLONE_VM child in its own thread group, killed: the kernel clears its
// CLONE_CHILD_CLEARTID word and wakes the parent waiting on it. The wake used to be given
// only while the dead task's own process had threads left, so the parent waited for ever.
TEST(Signals, ClearTidWakesWhenAMemorySharingChildIsKilled)
{
	RunResult native = RunCommand({ Guest("sig_cleartid") }, Limited());
	ASSERT_EQ(native.out, "sig_cleartid: woken, child killed by signal 9\n")
		<< native.Describe();
	RunResult r = RunCommand(UnderDetrun({}, { Guest("sig_cleartid") }), Limited(30));
	ASSERT_FALSE(r.timed_out) << r.Describe();
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, native.out) << r.Describe();
}

// The program exits and leaves a child blocked for ever. Natively the shell is back at
// once; detrun ends the run with the program's status, saying which tasks it ended,
// instead of waiting after a deadlock warning for a signal that never comes.
TEST(Signals, OrphansBlockedForEverEndTheRun)
{
	for (int i = 0; i < 2; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { Guest("sig_orphan") }), Limited(30));
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, "parent done\n") << r.Describe();
		EXPECT_NE(r.err.find("the tasks it left behind wait for ever: ending them\n"
				     "detrun:   task 2: read fd "),
			  std::string::npos)
			<< r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	}
}

} // namespace
