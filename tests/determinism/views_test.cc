// Determinism gaps in what the group sees of the machine: /proc views, kernel ids, timer
// semantics, detrun's own reports, what the kernel picks for sockets and notifications.
//
// Each case is a guest (tests/guests/view_*.c) run natively and under detrun. Two-sided:
// where the value is nondeterministic natively, native runs must be shown to differ and
// detrun runs must all be identical; where the kernel's semantics are the point (timers),
// the detrun output must equal the native one.
#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace
{

enum Native {
	kMustVary,     // native runs produce at least two different outputs
	kSameAsNative, // the detrun output equals the native one
	kExitOnly,     // only the native exit code is checked (detrun's own output is the point)
};

struct Case {
	std::string name;
	std::vector<std::string> argv; // argv[0] is a guest name
	Native native = kExitOnly;
	bool compare_stderr = false; // detrun's own stderr must be identical too
	int exit_code = 0;
	std::string skip_if_native; // the machine lacks the feature: native output has this
	std::vector<std::string> must_contain; // verdicts the guest prints, natively and under detrun
	bool differs_from_native = false;      // the detrun output is virtual, not the host's
};

void PrintTo(const Case &c, std::ostream *os)
{
	*os << c.name;
}

std::vector<std::string> GuestArgv(const Case &c)
{
	std::vector<std::string> v = c.argv;
	v[0] = std::string(GUEST_DIR) + "/" + v[0];
	return v;
}

const int kDetrunRuns = 4;
const int kNativeTries = 10;

class Views : public ::testing::TestWithParam<Case>
{
};

TEST_P(Views, DeterministicUnderDetrun)
{
	const Case &c = GetParam();
	std::vector<std::string> argv = GuestArgv(c);
	RunResult native = RunCommand(argv);
	ASSERT_EQ(native.code, c.exit_code) << native.Describe();
	if (!c.skip_if_native.empty() && native.out.find(c.skip_if_native) != std::string::npos)
		GTEST_SKIP() << "not on this machine: " << native.out;
	for (const auto &verdict : c.must_contain)
		ASSERT_NE(native.out.find(verdict), std::string::npos) << native.Describe();
	if (c.native == kMustVary) {
		bool varied = false;
		for (int i = 1; i < kNativeTries && !varied; i++) {
			RunResult again = RunCommand(argv);
			ASSERT_EQ(again.code, c.exit_code) << again.Describe();
			varied = again.out != native.out;
		}
		ASSERT_TRUE(varied) << "the guest never varied natively; output:\n"
				    << Head(native.out);
	}
	std::string out, err;
	for (int i = 0; i < kDetrunRuns; i++) {
		RunResult r = RunCommand(UnderDetrun({}, argv));
		ASSERT_EQ(r.code, c.exit_code) << r.Describe();
		ASSERT_TRUE(r.leftovers.empty()) << r.Describe();
		if (i == 0) {
			out = r.out, err = r.err;
			if (c.native == kSameAsNative) {
				ASSERT_EQ(r.out, native.out)
					<< FirstDifference("native", native.out, "detrun", r.out);
			}
			for (const auto &verdict : c.must_contain)
				ASSERT_NE(r.out.find(verdict), std::string::npos) << r.Describe();
			if (c.differs_from_native) {
				ASSERT_NE(r.out, native.out) << "detrun shows the host's value";
			}
			continue;
		}
		ASSERT_EQ(r.out, out) << FirstDifference("detrun run 0", out,
							 "detrun run " + std::to_string(i), r.out);
		if (c.compare_stderr) {
			ASSERT_EQ(r.err, err)
				<< FirstDifference("detrun run 0 stderr", err,
						   "detrun run " + std::to_string(i) + " stderr",
						   r.err);
		}
	}
}

Case Make(const std::string &name, const std::vector<std::string> &argv, Native native)
{
	Case c;
	c.name = name;
	c.argv = argv;
	c.native = native;
	return c;
}

// The machine may lack the feature: a native output containing `absent` skips the case.
Case Unless(Case c, const std::string &absent)
{
	c.skip_if_native = absent;
	return c;
}

std::vector<Case> Cases()
{
	Case crash = Make("crash_report", { "view_crash", "segv" }, kExitOnly);
	crash.compare_stderr = true;
	crash.exit_code = 128 + SIGSEGV;
	Case boot_id = Make("boot_id", { "view_ids", "boot_id" }, kExitOnly);
	boot_id.differs_from_native = true;
	Case mount_ids = Make("statx_mount_ids", { "view_ids", "mount_ids" }, kExitOnly);
	mount_ids.must_contain = { "is mountinfo's: yes" };
	Case maxrss = Make("maxrss", { "view_ids", "maxrss" }, kExitOnly);
	maxrss.must_contain = { "maxrss plausible: yes\nmaxrss ",
				"children's maxrss plausible: yes" };
	Case page_cache = Unless(Make("page_cache", { "view_holes", "pagecache" }, kExitOnly),
				 "mincore 1111");
	page_cache.differs_from_native = true;
	Case mmsg = Make("mmsg_ports", { "view_mmsg" }, kMustVary);
	mmsg.must_contain = { "every sender as its getsockname shows it: yes",
			      "msg_len of every message sent: right",
			      "every datagram from sender 0: yes",
			      "every reply reached its sender" };
	return {
		// point 12: timerfd_gettime on a disarmed timer keeps the interval
		Make("timerfd_disarmed_keeps_interval", { "view_timers", "timerfd" },
		     kSameAsNative),
		// point 12: a POSIX timer's signal is queued once; the rest are overruns
		Make("posix_timer_overrun_handler", { "view_timers", "handler" }, kSameAsNative),
		Make("posix_timer_overrun_sigtimedwait", { "view_timers", "wait" }, kSameAsNative),
		Make("itimer_signal_sigtimedwait", { "view_timers", "alarm" }, kSameAsNative),
		// point 12: the crash report names tasks by ids that do not change between runs
		crash,
		// point 12: mountinfo showed detrun's random temporary names and mount ids
		Make("mountinfo", { "view_ids", "mountinfo" }, kExitOnly),
		mount_ids,
		// point 12: random views
		Make("random_uuid", { "view_ids", "uuid" }, kMustVary),
		boot_id,
		Unless(Make("hwrng", { "view_ids", "hwrng" }, kMustVary), "absent"),
		// point 12: pipe, socket and namespace inode numbers in links and fdinfo
		Make("fd_links", { "view_ids", "links" }, kMustVary),
		Make("fdinfo", { "view_ids", "fdinfo" }, kMustVary),
		// point 12: socket cookies (getsockopt runs freely in plain runs)
		Make("so_cookie", { "view_ids", "cookie" }, kMustVary),
		// point 12: software perf events count the real run
		Make("perf_task_clock", { "view_ids", "perf" }, kMustVary),
		// point 21: the inode generation (ioctl runs freely in plain runs)
		Unless(Make("inode_generation", { "view_ids", "generation" }, kMustVary),
		       "Inappropriate ioctl"),
		// point 23: getrusage's maxrss was 0
		maxrss,
		// issue 17 point 6: inotify rename cookies count the host's renames
		Make("inotify_cookies", { "view_holes", "cookies" }, kMustVary),
		// issue 17 point 6: ports and autobind names the kernel picks, on sockets the
		// group uses among itself
		Make("ephemeral_ports", { "view_holes", "ports" }, kMustVary),
		Make("unix_autobind_names", { "view_holes", "autobind" }, kMustVary),
		// ... and on every message of a recvmmsg (past the 8th too), in the
		// destinations of a sendmmsg
		mmsg,
		// issue 17 point 6: receive timestamps, TCP_INFO timings, SO_INCOMING_CPU
		Make("socket_timestamps", { "view_holes", "stamps" }, kMustVary),
		Make("tcp_info_timings", { "view_holes", "tcpinfo" }, kMustVary),
		// issue 17 point 6: key serials and keyring ids are random
		Make("key_serials", { "view_holes", "keys" }, kMustVary),
		// issue 17 point 6: page-cache residency (mincore, RWF_NOWAIT) is the host's;
		// natively the guest's file is not cached (skipped where it cannot be dropped)
		page_cache,
	};
}

INSTANTIATE_TEST_SUITE_P(Table, Views, ::testing::ValuesIn(Cases()),
			 [](const ::testing::TestParamInfo<Case> &i) { return i.param.name; });

// point 12: a deadlock warning names the parked tasks by ids that do not change between
// runs. The group waits for a signal from outside after the warning: SIGINT ends it.
TEST(ViewsReports, DeadlockWarningIsTheSameOnEveryRun)
{
	std::vector<std::string> argv = UnderDetrun({}, { std::string(GUEST_DIR) + "/view_crash",
							  "deadlock" });
	std::string first;
	for (int i = 0; i < 3; i++) {
		Child c(argv);
		ASSERT_TRUE(c.WaitForOutput("waiting for a signal from outside", 60, true))
			<< "no deadlock warning; stderr:\n"
			<< c.Err();
		c.Signal(SIGINT);
		RunResult r = c.Finish();
		ASSERT_EQ(r.code, 128 + SIGINT) << r.Describe();
		ASSERT_TRUE(r.leftovers.empty()) << r.Describe();
		ASSERT_NE(r.err.find("deadlock"), std::string::npos) << r.Describe();
		if (i == 0) {
			first = r.err;
		} else {
			ASSERT_EQ(r.err, first)
				<< FirstDifference("run 0 stderr", first,
						   "run " + std::to_string(i) + " stderr", r.err);
		}
	}
}

// issue 17 point 6: SigQ in /proc/self/status counted every signal queued for the user on
// the host. A process of the test holds a different number of queued signals before each
// run: natively the guest's SigQ follows it, under detrun it shows the group's own.
TEST(ViewsSigQ, SignalsQueuedOnTheHostDoNotShow)
{
	std::string guest = std::string(GUEST_DIR) + "/view_holes";
	Child holding({ guest, "hold" }); /* blocks SIGRTMIN: what is sent stays queued */
	ASSERT_TRUE(holding.WaitForOutput("holding\n", 60)) << holding.Out();
	pid_t holder = atoi(holding.Out().c_str() + holding.Out().find(' '));
	std::vector<std::string> argv = { guest, "sigq" };
	// Many at a time: host processes queue and take signals meanwhile too.
	auto queue_some = [&] {
		for (int i = 0; i < 16; i++)
			ASSERT_EQ(sigqueue(holder, SIGRTMIN, sigval{ 0 }), 0) << strerror(errno);
	};
	RunResult a = RunCommand(argv);
	queue_some();
	RunResult b = RunCommand(argv);
	EXPECT_NE(a.out, b.out) << "SigQ did not follow the host natively: " << a.out;
	std::string first;
	for (int i = 0; i < 3; i++) {
		queue_some();
		RunResult r = RunCommand(UnderDetrun({}, argv));
		EXPECT_EQ(r.code, 0) << r.Describe();
		if (i == 0)
			first = r.out;
		else
			EXPECT_EQ(r.out, first)
				<< FirstDifference("run 0", first, "run " + std::to_string(i),
						   r.out);
	}
	holding.Signal(SIGKILL);
	holding.Finish();
}

// issue 17 point 6: a host process reading a file the program watches made inotify events
// (open, access, close) the group cannot be given again. Each run, the test reads the
// watched file from outside or not while the guest waits on its stdin; the guest then
// appends to the file itself: natively the outside read shows, under detrun only the
// group's own write does, the same whether or not the host read.
TEST(ViewsInotify, HostReadsOfAWatchedFileDoNotShow)
{
	std::string file = "/tmp/detrun-views-watch-" + std::to_string(getpid());
	std::string guest = std::string(GUEST_DIR) + "/view_holes";
	auto run = [&](bool detrun, bool host_reads) {
		WriteFile(file, "data\n");
		int go[2];
		EXPECT_EQ(pipe(go), 0);
		RunOptions opt;
		opt.stdin_fd = go[0];
		std::vector<std::string> argv = { guest, "watch", file };
		Child c(detrun ? UnderDetrun({}, argv) : argv, opt);
		close(go[0]);
		EXPECT_TRUE(c.WaitForOutput("watching\n", 60)) << c.Out() << c.Err();
		if (host_reads) {
			EXPECT_EQ(ReadFile(file).substr(0, 4), "data");
		}
		EXPECT_EQ(write(go[1], "go\n", 3), 3);
		close(go[1]);
		RunResult r = c.Finish();
		EXPECT_EQ(r.code, 0) << r.Describe();
		return r.out;
	};
	std::string quiet = run(false, false), read = run(false, true);
	EXPECT_NE(quiet, read) << "the host's read did not show natively";
	std::string first = run(true, false);
	EXPECT_NE(first.find("event 0x2\n"), std::string::npos) << first; /* IN_MODIFY */
	for (int i = 0; i < 2; i++) {
		std::string again = run(true, true);
		EXPECT_EQ(again, first) << FirstDifference("no host read", first,
							   "host read " + std::to_string(i), again);
	}
	unlink(file.c_str());
}

// POSIX shared memory names are picked the same on every run (a seeded random name, as
// PostgreSQL's dynamic shared memory has): the group has a /dev/shm of its own, so a
// segment left by an earlier run (a killed server's) or a host process cannot change what
// the next run sees, and the group shares no memory with processes outside it.
TEST(ViewsShm, GroupHasItsOwnDevShm)
{
	std::string host_file = "/dev/shm/detrun-views-" + std::to_string(getpid());
	ASSERT_EQ(RunCommand({ "sh", "-c", "echo host > " + host_file }).code, 0);
	std::string script = "ls -A /dev/shm; [ -e /dev/shm/left ] && echo leftover; "
			     "echo group > /dev/shm/left && cat /dev/shm/left";
	for (int run = 0; run < 2; run++) {
		RunResult r = RunCommand(UnderDetrun({}, { "sh", "-c", script }));
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, "group\n") << "run " << run << ": " << r.Describe();
	}
	EXPECT_EQ(ReadFile(host_file), "host\n");
	EXPECT_NE(access("/dev/shm/left", F_OK), 0)
		<< "the group's file reached the host's /dev/shm";
	unlink(host_file.c_str());
}

// An inode number the kernel frees may come back for the next new file, or not, as other
// activity on the machine decides (ext4 gives it back at once, tmpfs never): under detrun
// each new file has a number no earlier file had, on every run. Before, the virtual
// number followed the real one and came back with it.
TEST(ViewsInodes, NewFileAfterARemovalHasANewNumber)
{
	std::string guest = std::string(GUEST_DIR) + "/view_inode_reuse";
	RunResult native = RunCommand({ guest });
	ASSERT_EQ(native.code, 0) << native.Describe();
	std::string first;
	for (int run = 0; run < 3; run++) {
		RunResult r = RunCommand(UnderDetrun({}, { guest }));
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_NE(r.out.find("new inode number for every new file: yes"), std::string::npos)
			<< r.Describe() << "natively: " << native.out;
		if (run == 0)
			first = r.out;
		EXPECT_EQ(r.out, first) << "run " << run;
	}
}

// A descriptor open on a removed file keeps the inode, so its number cannot go to another
// file: fstat through it shows the number it had, natively and under detrun, and only a
// file made once it is closed gets a new one.
TEST(ViewsInodes, DescriptorOnARemovedFileKeepsItsNumber)
{
	std::string guest = std::string(GUEST_DIR) + "/view_inode_open_removed";
	RunResult native = RunCommand({ guest });
	ASSERT_EQ(native.code, 0) << native.Describe();
	ASSERT_NE(native.out.find("open removed inodes keep their numbers: yes"), std::string::npos)
		<< native.Describe();
	RunResult r = RunCommand(UnderDetrun({}, { guest }));
	ASSERT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "open removed inodes keep their numbers: yes\nnew file, new number: yes\n")
		<< r.Describe();
}

// The resident set follows the page cache: the kernel's fault-around maps a file's
// neighbouring pages only if they are cached. The same program on the same file shows other
// figures natively when the file's pages were evicted before the run; under detrun the
// stat, statm and status views must not (they show the mapped size). Before, they were the
// real figures, and an e2e case (inv_proc) differed between runs on a busy machine.
TEST(ViewsRss, ResidentSetDoesNotFollowThePageCache)
{
	std::string data = "/tmp/detrun-views-rss-" + std::to_string(getpid());
	ASSERT_EQ(RunCommand({ "sh", "-c", "head -c 4194304 /dev/urandom > " + data }).code, 0);
	auto warm = [&] { return RunCommand({ "cat", data }).code == 0; };
	auto cold = [&] {
		int fd = open(data.c_str(), O_RDONLY);
		bool ok = fd >= 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
		if (fd >= 0)
			close(fd);
		return ok;
	};
	std::string guest = std::string(GUEST_DIR) + "/view_rss";
	std::set<std::string> native, detrun;
	for (int i = 0; i < 4; i++) {
		ASSERT_TRUE(i % 2 ? cold() : warm());
		RunResult n = RunCommand({ guest, data });
		ASSERT_EQ(n.code, 0) << n.Describe();
		native.insert(n.out);
		ASSERT_TRUE(i % 2 ? cold() : warm());
		RunResult d = RunCommand(UnderDetrun({}, { guest, data }));
		ASSERT_EQ(d.code, 0) << d.Describe();
		detrun.insert(d.out);
	}
	unlink(data.c_str());
	EXPECT_GT(native.size(), 1u) << "natively the figures never varied: " << *native.begin();
	EXPECT_EQ(detrun.size(), 1u) << "under detrun they varied; one: " << *detrun.begin();
}

// Issue 17 point 7: no host figures in /proc and /sys. inv_procwalk walks both trees (this
// process's own /proc/PID, /sys bounded) and prints every entry with a digest of what it
// could read. Natively the global files (stat, meminfo, interrupts ...) change from run to
// run; under detrun every readable file is either virtual or the group's own, and the rest
// is absent, so every run prints the same lines. Before, /proc/stat, meminfo, vmstat,
// /proc/PID/io, sched, smaps and all of /sys showed the host's figures.
TEST(ViewsProcWalk, EveryReadableFileIsTheSameOnEveryRun)
{
	std::vector<std::string> argv = { std::string(GUEST_DIR) + "/inv_procwalk" };
	RunResult native = RunCommand(argv);
	ASSERT_EQ(native.code, 0) << native.Describe();
	auto global_lines = [](const std::string &out) {
		std::string kept;
		for (const auto &line : SplitLines(out))
			if (line.rfind("/proc/stat:", 0) == 0 ||
			    line.rfind("/proc/meminfo:", 0) == 0 ||
			    line.rfind("/proc/interrupts:", 0) == 0)
				kept += line + "\n";
		return kept;
	};
	bool varied = false;
	for (int i = 1; i < kNativeTries && !varied; i++) {
		RunResult again = RunCommand(argv);
		ASSERT_EQ(again.code, 0) << again.Describe();
		varied = global_lines(again.out) != global_lines(native.out);
	}
	ASSERT_TRUE(varied) << "/proc/stat, meminfo and interrupts never varied natively:\n"
			    << global_lines(native.out);
	std::string first;
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({}, argv));
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_TRUE(r.leftovers.empty()) << r.Describe();
		if (i == 0) {
			first = r.out;
			continue;
		}
		ASSERT_EQ(r.out, first)
			<< FirstDifference("detrun run 0", first, "detrun run " + std::to_string(i),
					   r.out);
	}
}

// Lists the /proc that process pid and its children see (under detrun, the namespace init
// among them sees the group's): a host process reading the group's /proc.
static void ListProcOfGroup(pid_t pid)
{
	std::vector<std::string> pids = { std::to_string(pid) };
	std::istringstream children(
		ReadFile("/proc/" + pids[0] + "/task/" + pids[0] + "/children"));
	for (std::string c; children >> c;)
		pids.push_back(c);
	for (const auto &p : pids) {
		DIR *d = opendir(("/proc/" + p + "/root/proc").c_str());
		if (!d)
			continue;
		while (readdir(d))
			;
		closedir(d);
	}
}

// A procfs inode is made when its name is looked up and made anew, with a new number, after
// the kernel drops its unused dentry (memory pressure, other processes' work): virtual
// numbers were handed out in the order the real ones were first met, so a drop between two
// looks gave the file a second number and every file met later another one (the walk above
// differed at an fdinfo with other tests beside it). The test drops the kernel's unused
// dentries and inodes (drop_caches 2, which frees only caches) while the guest waits, or
// not, after a host process looked at the group's /proc (as other processes' /proc reading
// does; without that the drop changed nothing under detrun): natively the file's number
// changes, under detrun nothing does, and fstat and fdinfo show the same number.
TEST(ViewsProcIno, ProcfsNumbersDoNotDependOnTheHostsDentryCache)
{
	if (access("/proc/sys/vm/drop_caches", W_OK) != 0)
		GTEST_SKIP() << "cannot drop the kernel's caches here (not root)";
	std::vector<std::string> argv = { std::string(GUEST_DIR) + "/view_procino" };
	auto run = [&](bool detrun, bool drop) {
		int go[2];
		EXPECT_EQ(pipe2(go, O_CLOEXEC), 0);
		RunOptions opt;
		opt.stdin_fd = go[0];
		Child c(detrun ? UnderDetrun({}, argv) : argv, opt);
		close(go[0]);
		EXPECT_TRUE(c.WaitForOutput("ready\n", 60)) << c.Out() << c.Err();
		if (drop) {
			ListProcOfGroup(c.Pid());
			int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
			EXPECT_EQ(fd >= 0 ? write(fd, "2\n", 2) : -1, 2) << strerror(errno);
			if (fd >= 0)
				close(fd);
		}
		close(go[1]);
		RunResult r = c.Finish();
		EXPECT_EQ(r.code, 0) << r.Describe();
		return r.out;
	};
	// before, after, fstat, fdinfo, next
	auto numbers = [](const std::string &out) {
		std::vector<unsigned long long> n(5);
		size_t at = out.find("before ");
		EXPECT_TRUE(at != std::string::npos &&
			    sscanf(out.c_str() + at,
				   "before %llu after %llu fstat %llu fdinfo %llu next %llu", &n[0],
				   &n[1], &n[2], &n[3], &n[4]) == 5)
			<< out;
		return n;
	};
	// A reader of the file elsewhere at the drop keeps its dentry: natively, tries until
	// one drop makes a new inode.
	std::vector<unsigned long long> native;
	for (int i = 0; i < kNativeTries && (native.empty() || native[0] == native[1]); i++)
		native = numbers(run(false, true));
	ASSERT_NE(native[0], native[1]) << "dropping the caches never made a new procfs inode";
	EXPECT_EQ(native[2], native[3]) << "fstat and fdinfo differ natively";
	std::string quiet = run(true, false);
	std::vector<unsigned long long> n = numbers(quiet);
	EXPECT_EQ(n[0], n[1]) << quiet;
	EXPECT_EQ(n[1], n[2]) << quiet;
	EXPECT_EQ(n[2], n[3]) << "fstat and fdinfo differ: " << quiet;
	for (int i = 0; i < 2; i++) {
		std::string dropped = run(true, true);
		EXPECT_EQ(dropped, quiet) << "with the host's caches dropped (run " << i << ")";
	}
}

// Named network namespaces (ip netns add) are mounts under /run/netns that other processes
// make and remove at any time (the replicate tests' clusters): the group's mount table, a
// copy of the host's, listed those there at its start, so the walk above differed at
// mountinfo beside those tests. The test adds one between two runs.
TEST(ViewsMounts, HostsNamedNetworkNamespacesDoNotShowInTheMountTable)
{
	if (RunCommand({ "ip", "netns", "list" }).code != 0)
		GTEST_SKIP() << "no ip netns here";
	std::vector<std::string> argv = UnderDetrun({}, { "cat", "/proc/self/mountinfo" });
	RunResult before = RunCommand(argv);
	ASSERT_EQ(before.code, 0) << before.Describe();
	std::string name = "detrun-views-" + std::to_string(getpid());
	RunResult added = RunCommand({ "ip", "netns", "add", name });
	ASSERT_EQ(added.code, 0) << added.Describe();
	RunResult after = RunCommand(argv);
	RunCommand({ "ip", "netns", "del", name });
	ASSERT_EQ(after.code, 0) << after.Describe();
	EXPECT_EQ(after.out, before.out)
		<< FirstDifference("before ip netns add", before.out, "after", after.out);
}

// Issue 17 point 7: a rewritten /proc view (stat, status, maps, fdinfo) gives the same bytes
// to every read form: pread64 and preadv run without stopping, and before they read the
// kernel's text (real times, switches, inode and mount numbers), so view_procread's
// pread and read differed and its runs did too. Natively the texts vary (times, inode
// numbers); under detrun every run prints the same lines, each form agrees with read(2),
// and readlink and fstat of the descriptor show the procfs file.
TEST(ViewsProcRead, EveryReadFormGetsTheRewrittenText)
{
	std::vector<std::string> argv = { std::string(GUEST_DIR) + "/view_procread" };
	RunResult native = RunCommand(argv);
	ASSERT_EQ(native.code, 0) << native.Describe();
	std::string first;
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({}, argv));
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_TRUE(r.leftovers.empty()) << r.Describe();
		if (i == 0) {
			first = r.out;
			EXPECT_EQ(r.out.find("differs"), std::string::npos) << r.out;
			EXPECT_EQ(r.out.find("cannot open"), std::string::npos) << r.out;
			for (const char *view : { "stat", "status", "maps" }) {
				std::string name = std::string("/proc/self/") + view;
				EXPECT_NE(r.out.find(name + ": pread in a child same"),
					  std::string::npos)
					<< r.out;
				EXPECT_NE(r.out.find(name + ": link /proc/2/" + view +
						     ", size 0, mode 100444, flags 100000"),
					  std::string::npos)
					<< r.out;
			}
			EXPECT_NE(r.out.find("stat's pid is getpid(): yes"), std::string::npos)
				<< r.out;
			continue;
		}
		ASSERT_EQ(r.out, first)
			<< FirstDifference("detrun run 0", first, "detrun run " + std::to_string(i),
					   r.out);
	}
}

// Issue 17 point 7: names under /proc agree with what an open of them gets. view_procnames
// lists /proc/self, its task directory and /proc, stats and accesses every listed name,
// and asks after files a restricted container leaves out (io, smaps, sched, vmstat ...).
// Natively they are all there; under detrun each is absent to the listing, stat, lstat,
// access and open alike. Before, only the open failed: they were listed and stat and
// access found them.
TEST(ViewsProcNames, AbsentFilesAreAbsentToListingsStatAndAccess)
{
	std::vector<std::string> argv = { std::string(GUEST_DIR) + "/view_procnames" };
	RunResult native = RunCommand(argv);
	ASSERT_EQ(native.code, 0) << native.Describe();
	ASSERT_NE(native.out.find("/proc/self/io: listed yes, stat ok"), std::string::npos)
		<< native.Describe();
	std::string first;
	for (int i = 0; i < 2; i++) {
		RunResult r = RunCommand(UnderDetrun({}, argv));
		ASSERT_EQ(r.code, 0) << r.Describe();
		if (i == 0) {
			first = r.out;
			EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
			EXPECT_EQ(r.out.find("no names"), std::string::npos) << r.out;
			int absent = 0;
			for (const auto &line : SplitLines(r.out)) {
				if (line.find(": listed ") == std::string::npos)
					continue;
				absent++;
				EXPECT_NE(line.find(": listed no, stat ENOENT, lstat ENOENT, "
						    "access ENOENT, open ENOENT"),
					  std::string::npos)
					<< line;
			}
			EXPECT_EQ(absent, 18) << r.out;
			continue;
		}
		ASSERT_EQ(r.out, first)
			<< FirstDifference("detrun run 0", first, "detrun run 1", r.out);
	}
}

// Issue 17 point 7: a kernel view the program mounts itself is judged where its files land,
// and a file handle (open_by_handle_at, which has no path) is judged like a path. Before,
// both opened a cgroup2 file (host figures) under detrun.
TEST(ViewsProcWalk, KernelViewTheProgramMountsIsAbsentByPathAndByHandle)
{
	std::vector<std::string> argv = { std::string(GUEST_DIR) + "/view_kernfs" };
	RunResult native = RunCommand(argv);
	ASSERT_EQ(native.code, 0) << native.Describe();
	if (native.out.find("no cgroup2") != std::string::npos)
		GTEST_SKIP() << "this machine cannot mount cgroup2";
	ASSERT_EQ(native.out, "path: opened\nhandle: opened\n") << native.Describe();
	RunResult r = RunCommand(UnderDetrun({}, argv));
	ASSERT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "path: refused (ENOENT)\nhandle: refused (ENOENT)\n") << r.Describe();
}

} // namespace
