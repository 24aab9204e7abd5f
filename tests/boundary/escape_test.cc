// Escapes from the group: no process
// outside the group is reachable, no child runs untraced, a seccomp listener cannot hang
// the group, foreign system call ABIs are refused by name, and prctl reports the
// program's own settings. Guests: tests/guests/esc_*.c.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string kGuests = GUEST_DIR;

std::string Guest(const std::string &name)
{
	return kGuests + "/" + name;
}

bool Contains(const std::string &s, const std::string &what)
{
	return s.find(what) != std::string::npos;
}

// Every route the guest tried must say "refused"; the routes named must all be there.
void ExpectEveryRouteRefused(const RunResult &r, const std::vector<std::string> &routes)
{
	EXPECT_EQ(r.code, 0) << r.Describe() << "\n" << r.out;
	EXPECT_TRUE(Contains(r.out, "ALL ROUTES REFUSED")) << r.out;
	for (const std::string &line : SplitLines(r.out)) {
		if (line.rfind("route ", 0) == 0) {
			EXPECT_TRUE(Contains(line, ": refused (") ||
				    Contains(line, ": own namespace"))
				<< line;
		}
	}
	for (const std::string &route : routes)
		EXPECT_TRUE(Contains(r.out, "route " + route + ": refused (")) << route << "\n"
									       << r.out;
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
}

const std::vector<std::string> kProcessRoutes = {
	"open mem for reading",
	"open mem for writing",
	"open fd/0",
	"open ns/mnt (for setns)",
	"open root/",
	"open exe",
	"open maps",
	"open environ",
	"process_vm_readv",
	"process_vm_writev",
	"pidfd_open",
	"kill",
	"tkill",
	"tgkill",
	"rt_sigqueueinfo",
	"pidfd_send_signal(/proc/PID)",
	"fcntl(F_SETOWN)",
	"fcntl(F_SETOWN_EX)",
	"ioctl(FIOSETOWN)",
	"ioctl(SIOCSPGRP)",
	"ptrace",
};

TEST(Escape, ReaperIsOutOfReach)
{
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_routes"), "reaper" }));
	std::vector<std::string> routes = kProcessRoutes;
	routes.push_back("umount /proc");
	ExpectEveryRouteRefused(r, routes);
	EXPECT_TRUE(Contains(r.out, "route mount proc: own namespace (self is us)")) << r.out;
}

TEST(Escape, DetrunIsOutOfReachWithoutNamespaces)
{
	RunResult r = RunCommand(
		UnderDetrun({ "--no-namespaces" }, { Guest("esc_routes"), "parent" }));
	ExpectEveryRouteRefused(r, kProcessRoutes);
}

volatile sig_atomic_t g_urgent;
void OnUrgent(int)
{
	g_urgent = g_urgent + 1;
}

// Without a PID namespace, kill(-1) reaches the other members only: this test process
// (outside the group, SIGURG caught) must not get it.
TEST(Escape, KillAllReachesOnlyMembersWithoutNamespaces)
{
	struct sigaction sa = {}, old;
	sa.sa_handler = OnUrgent;
	sigaction(SIGURG, &sa, &old);
	g_urgent = 0;
	RunResult r = RunCommand(UnderDetrun({ "--no-namespaces" }, { Guest("esc_killall") }));
	int got = g_urgent;
	sigaction(SIGURG, &old, nullptr);
	EXPECT_EQ(r.code, 0) << r.Describe();
	std::vector<std::string> lines = SplitLines(r.out); // the child may print first
	std::multiset<std::string> got_lines(lines.begin(), lines.end());
	std::multiset<std::string> want = { "kill(-1, SIGURG): 0", "child got SIGURG",
					    "child exit 0" };
	EXPECT_EQ(got_lines, want) << r.Describe() << "\n" << r.out;
	EXPECT_EQ(got, 0) << "kill(-1) from the group reached the test process";
}

TEST(Escape, Clone3UntracedWithReadOnlySharedArgumentsIsTraced)
{
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_clone3"), "ro" }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out,
		  "arguments unchanged, argument register kept\nchild: its calls were answered\n")
		<< r.Describe();
}

TEST(Escape, Clone3UntracedInASharedFileMappingLeavesTheFileAlone)
{
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_clone3"), "rw" }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out,
		  "arguments unchanged, argument register kept\nchild: its calls were answered\n")
		<< r.Describe();
}

// The kernel refuses the copy as it would the original, and the register comes back.
TEST(Escape, Clone3UntracedThatFailsLeavesTheArgumentRegister)
{
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_clone3"), "fail" }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "clone3: refused (EINVAL), argument register kept\n") << r.Describe();
}

TEST(Escape, Clone3UntracedWithoutScratchMemoryIsRefused)
{
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_clone3"), "badstack" }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "clone3: refused (ENOSYS), argument register kept\n") << r.Describe();
	EXPECT_TRUE(Contains(r.err, "clone3 with CLONE_UNTRACED")) << r.err;
	EXPECT_EQ(SplitLines(r.err).size(), 1u) << r.err;
}

// A process of the run still alive and not about to die: not exiting (PF_EXITING in the
// flags of /proc/PID/stat: a SIGKILL already taken), no SIGKILL pending, not a zombie.
// Between taking a SIGKILL and PF_EXITING a dying process shows neither, and on a busy
// machine it can be left there a while: so a process only survives if it is still alive,
// and not dying, once it has had `grace` seconds to exit (its pidfd readable).
bool Survives(pid_t pid, int grace)
{
	if (ExitsWithin(pid, grace))
		return false;
	std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
	std::string stat((std::istreambuf_iterator<char>(st)), std::istreambuf_iterator<char>());
	size_t close = stat.rfind(')');
	if (close == std::string::npos)
		return false; /* gone */
	char state = 0;
	unsigned long flags = 0;
	if (sscanf(stat.c_str() + close + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return false;
	const unsigned long kExiting = 0x4; // PF_EXITING
	if (state == 'Z' || state == 'X' || (flags & kExiting))
		return false;
	std::ifstream f("/proc/" + std::to_string(pid) + "/status");
	std::string line;
	while (std::getline(f, line))
		if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) {
			unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
			if ((mask >> (SIGKILL - 1)) & 1)
				return false;
		}
	return true;
}

// Starts `argv` in its own session with stdout on a pipe and waits (60 s at most) for
// `text` on it. The harness's Child is not used: it kills what a run leaves behind as soon
// as its main process is reaped, and here the survivors are the point.
pid_t StartAndAwait(const std::vector<std::string> &argv, const std::string &text, int *out)
{
	EnsureSubreaper();
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		dup2(p[1], 1);
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		std::vector<char *> args;
		for (const std::string &a : argv)
			args.push_back(const_cast<char *>(a.c_str()));
		args.push_back(nullptr);
		execv(args[0], args.data());
		_exit(127);
	}
	close(p[1]);
	*out = p[0];
	std::string got;
	double deadline = MonoNow() + 60;
	while (got.find(text) == std::string::npos && MonoNow() < deadline) {
		struct pollfd fd = { p[0], POLLIN, 0 };
		if (poll(&fd, 1, 1000) <= 0)
			continue;
		char buf[256];
		ssize_t n = read(p[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		got.append(buf, (size_t)n);
	}
	return got.find(text) == std::string::npos ? -pid : pid;
}

// The group's child clears its death signal and waits forever; detrun is killed with
// SIGKILL. Every process of the run must be dead or dying by the time detrun is reaped:
// PTRACE_O_EXITKILL (and the reaper's death signal) send the SIGKILLs as detrun exits;
// each then ends by itself, with no help from the test (Survives).
void ExpectNothingSurvivesKill9(const std::vector<std::string> &opts)
{
	int out = -1;
	pid_t pid = StartAndAwait(UnderDetrun(opts, { Guest("esc_clone3"), "hold" }), "ready",
				  &out);
	ASSERT_NE(pid, 0);
	pid_t detrun = pid > 0 ? pid : -pid;
	kill(detrun, SIGKILL);
	int status = 0;
	WaitBounded(detrun, &status, 30);
	EXPECT_GT(pid, 0) << "the guest never said ready";
	std::vector<std::string> survivors;
	for (const ProcInfo &p : FindLeftovers(detrun))
		if (Survives(p.pid, 10))
			survivors.push_back(std::to_string(p.pid) + " " + p.cmdline);
	KillLeftovers(detrun);
	close(out);
	EXPECT_TRUE(survivors.empty())
		<< survivors.size()
		<< " survived, first: " << (survivors.empty() ? "" : survivors[0]);
}

TEST(Escape, NothingSurvivesKill9OfDetrun)
{
	ExpectNothingSurvivesKill9({});
}

TEST(Escape, NothingSurvivesKill9OfDetrunWithoutNamespaces)
{
	ExpectNothingSurvivesKill9({ "--no-namespaces" });
}

// Lines of esc_prctl without the TSC values, which differ natively on every run.
std::string WithoutTscValues(const std::string &out)
{
	std::string kept;
	for (const std::string &line : SplitLines(out))
		if (line.rfind("rdtsc-value", 0) != 0)
			kept += line + "\n";
	return kept;
}

// PR_GET_PDEATHSIG, PR_GET_SECCOMP and PR_GET_TSC answer as natively (detrun's own death
// signal, filter and TSC trap do not show); PR_SET_TSC(PR_TSC_ENABLE) does not bring the
// real TSC back (the values stay virtual: the same on every run), and PR_TSC_SIGSEGV set
// by the program itself faults as natively.
TEST(Escape, PrctlReportsTheProgramsOwnSettings)
{
	RunResult native = RunCommand({ Guest("esc_prctl") });
	ASSERT_EQ(native.code, 0) << native.Describe();
	RunResult first = RunCommand(UnderDetrun({}, { Guest("esc_prctl") }));
	RunResult second = RunCommand(UnderDetrun({}, { Guest("esc_prctl") }));
	ASSERT_EQ(first.code, 0) << first.Describe();
	EXPECT_EQ(WithoutTscValues(first.out), WithoutTscValues(native.out))
		<< FirstDifference("detrun", first.out, "native", native.out);
	EXPECT_EQ(first.out, second.out)
		<< FirstDifference("run 1", first.out, "run 2", second.out);
	RunResult native2 = RunCommand({ Guest("esc_prctl") });
	EXPECT_NE(native.out, native2.out) << "the real TSC should differ between native runs";
	EXPECT_TRUE(first.err.empty()) << first.err;
}

// A seccomp listener would hang the group: refused with EBUSY and one warning, and the
// program goes on.
TEST(Escape, SeccompListenerIsRefusedNotHung)
{
	RunOptions opt;
	opt.timeout_s = 60;
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_listener") }), opt);
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "listener: refused (EBUSY)\ngetppid: answered\n") << r.Describe();
	EXPECT_TRUE(Contains(r.err, "SECCOMP_FILTER_FLAG_NEW_LISTENER")) << r.err;
	EXPECT_EQ(SplitLines(r.err).size(), 1u) << r.err;
}

// int 0x80 and x32 calls fail with ENOSYS and one warning naming each, instead of a
// silent kill (status 159).
TEST(Escape, ForeignSyscallAbisAreRefusedByName)
{
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_abi") }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "int 0x80 getpid: ENOSYS\nx32 getpid: ENOSYS\nstill running\n")
		<< r.Describe();
	EXPECT_TRUE(Contains(r.err, "32-bit system call getpid (int 0x80 number 20)")) << r.err;
	EXPECT_TRUE(Contains(r.err, "x32 system call getpid (x32 number 39)")) << r.err;
	EXPECT_EQ(SplitLines(r.err).size(), 2u) << r.err;
}

// syscall(-1) is no call (rr's tests mark points with it): ENOSYS as natively, and no
// hazard about a number detrun does not know.
TEST(Escape, SyscallMinusOneFailsWithEnosysWithoutAWord)
{
	RunResult native = RunCommand({ Guest("syscall_minus_one") });
	ASSERT_EQ(native.out, "syscall(-1): -1, ENOSYS\nsyscall(-38): -1, ENOSYS\n"
			      "syscall(-2147483647): -1, ENOSYS\n")
		<< native.Describe();
	RunResult r = RunCommand(UnderDetrun({}, { Guest("syscall_minus_one") }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, native.out) << r.Describe();
	EXPECT_EQ(r.err, "") << r.Describe();
}

// The program's own filter answering 32-bit calls with SECCOMP_RET_TRACE (which ties with
// detrun's, and the newer filter's data wins) does not get one past detrun as the x86_64
// call of the same number: the 32-bit clone with CLONE_UNTRACED is refused like the rest.
TEST(Escape, ForeignSyscallsStayRefusedUnderTheProgramsOwnTraceFilter)
{
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_abi"), "tie" }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "own filter: 0\nint 0x80 clone: ENOSYS\nint 0x80 getpid: ENOSYS\n"
			 "x32 getpid: ENOSYS\nstill running\n")
		<< r.Describe();
	EXPECT_TRUE(Contains(r.err, "32-bit system call clone (int 0x80 number 120)")) << r.err;
}

} // namespace

namespace
{

// A timed-out pselect6/ppoll is finished by the kernel with a zero timeout; detrun must
// not force that zero into memory the program cannot write (a const), which the kernel
// never writes: the program's next wait would not wait.
TEST(Escape, TimeoutsInReadOnlyMemoryAreNotOverwritten)
{
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_timeout") }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	std::string want;
	for (int i = 0; i < 2; i++)
		for (const char *what :
		     { "pselect, const timeout", "ppoll, const timeout",
		       "pselect, shared read-only timeout", "ppoll, shared read-only timeout" })
			want += std::string(what) +
				": result 0, waited about 1 s, timeout now 1.000000000\n";
	EXPECT_EQ(r.out, want) << FirstDifference("detrun", r.out, "expected", want);
	EXPECT_TRUE(r.err.empty()) << r.err;
}

// Outputs detrun writes for the kernel (emulated clocks, random bytes, names) into
// read-only memory fail with EFAULT and leave the bytes, as natively: before, a fallback
// through /proc/PID/mem wrote through the protection and the calls succeeded.
TEST(Escape, CallOutputsIntoReadOnlyMemoryFailAsNatively)
{
	RunResult native = RunCommand({ Guest("esc_readonly_output") });
	ASSERT_EQ(native.code, 0) << native.Describe();
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_readonly_output") }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, native.out) << FirstDifference("native", native.out, "detrun", r.out);
}

// Calls that name a process by pid, process group or user (issue 17, point 2): every one
// goes through the membership check its argument kinds in syscalls.def make. Before, the
// reaper's and detrun's own limits and priorities were the program's to change.
const std::vector<std::string> kNamingRoutes = {
	"sched_setscheduler",
	"sched_getscheduler",
	"sched_setparam",
	"sched_getparam",
	"sched_rr_get_interval",
	"sched_setattr",
	"sched_getattr",
	"sched_setaffinity",
	"sched_getaffinity",
	"setpriority",
	"getpriority",
	"setpriority(PRIO_PGRP)",
	"getpriority(PRIO_USER)",
	"ioprio_set",
	"ioprio_get",
	"ioprio_get(IOPRIO_WHO_USER)",
	"ioprio_get(IOPRIO_WHO_PGRP)",
	"prlimit64(RLIMIT_NOFILE)",
	"prlimit64 read",
	"kcmp",
	"get_robust_list",
	"migrate_pages",
	"move_pages",
	"getpgid",
	"capget",
	"fcntl(F_SETOWN)",
	"getsid",
	// these three last: not for the reaper, whose process group is the group's own
	"setpgid(0, its group)",
	"kill(process group)",
	"fcntl(F_SETOWN, process group)",
};

TEST(Escape, CallsNamingTheReaperAreRefused)
{
	RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_reach"), "reaper" }));
	std::vector<std::string> routes = kNamingRoutes;
	routes.resize(routes.size() - 3);
	ExpectEveryRouteRefused(r, routes);
}

// prlimit64(getppid(), RLIMIT_NOFILE, {16, 16}) lowered detrun's own limit, and detrun then
// could not do its exec setup: the executed image must still read the virtual clock.
TEST(Escape, CallsNamingDetrunAreRefusedWithoutNamespaces)
{
	RunResult r = RunCommand(
		UnderDetrun({ "--no-namespaces" }, { Guest("esc_reach"), "parent" }));
	ExpectEveryRouteRefused(r, kNamingRoutes);
	EXPECT_TRUE(Contains(r.out, "after exec: clock virtual\n")) << r.Describe() << "\n"
								    << r.out;
}

// Any other process of the user: its limit and its nice value stay as they were.
TEST(Escape, CallsNamingAnOutsideProcessAreRefusedWithoutNamespaces)
{
	Child sleeper({ "/bin/sh", "-c", "echo $$; exec sleep 300" });
	ASSERT_TRUE(sleeper.WaitForOutput("\n", 30)) << sleeper.Err();
	pid_t outside = std::stoi(sleeper.Out());
	struct rlimit before;
	ASSERT_EQ(prlimit(outside, RLIMIT_NOFILE, nullptr, &before), 0);
	errno = 0;
	int nice_before = getpriority(PRIO_PROCESS, outside);
	RunResult r = RunCommand(UnderDetrun({ "--no-namespaces" }, { Guest("esc_reach"), "pid",
								      std::to_string(outside) }));
	struct rlimit after;
	ASSERT_EQ(prlimit(outside, RLIMIT_NOFILE, nullptr, &after), 0);
	int nice_after = getpriority(PRIO_PROCESS, outside);
	sleeper.Signal(SIGKILL);
	sleeper.Finish();
	ExpectEveryRouteRefused(r, kNamingRoutes);
	EXPECT_EQ(after.rlim_cur, before.rlim_cur);
	EXPECT_EQ(after.rlim_max, before.rlim_max);
	EXPECT_EQ(nice_after, nice_before);
}

// Calls newer than the table (issue 17, point 3): the futex2 calls and futex_waitv wait and
// wake on the emulated queues (run natively, a wait sleeps in the kernel with the group's
// only turn: the group hangs), cachestat is refused, and numbers without a row fail
// with ENOSYS and one warning each instead of running natively.
TEST(Escape, CallsPastTheTableAreEmulatedOrRefused)
{
	const std::string want = "futex_wait on another value: EAGAIN\n"
				 "futex_wait with 64-bit size: EINVAL\n"
				 "futex_wake with no waiter: 0\n"
				 "waiter: futex_wait = 0, word 0\n"
				 "futex_wake woke 1\n"
				 "futex_requeue moved 1\n"
				 "waiter: futex_wait = 0, word 0\n"
				 "futex_wake on the second word woke 1\n"
				 "futex_waitv on another value: EAGAIN\n"
				 "futex_waitv until a time past: ETIMEDOUT\n"
				 "waiter: futex_waitv = 1\n"
				 "futex_wake on its second word woke 1\n"
				 "cachestat: ENOSYS\n"
				 "syscall 470: ENOSYS\n"
				 "syscall 500: ENOSYS\n"
				 "syscall 1000: ENOSYS\n"
				 "syscall 470: ENOSYS\n";
	RunOptions opt;
	opt.timeout_s = 30;
	for (int run = 0; run < 2; run++) {
		RunResult r = RunCommand(UnderDetrun({}, { Guest("esc_newcalls") }), opt);
		ASSERT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, want) << r.Describe();
		for (const char *nr : { "470", "500", "1000" }) {
			std::string line = std::string("system call ") + nr + " is not in";
			size_t at = r.err.find(line);
			EXPECT_NE(at, std::string::npos) << r.err;
			EXPECT_EQ(r.err.find(line, at + 1), std::string::npos)
				<< "twice: " << r.err;
		}
		EXPECT_TRUE(Contains(r.err, "cachestat is not supported")) << r.err;
	}
}

} // namespace

namespace
{

// The lines of the program's own verdicts in esc_own_filter's output: what it saw from
// "uname:" on.
std::string Verdicts(const std::string &out)
{
	size_t at = out.find("uname:");
	return at == std::string::npos ? "" : out.substr(at);
}

// The program's own seccomp filter refuses munmap of a few whole pages (ERRNO(0), TRAP,
// KILL_PROCESS), then the program execs: the filter stays and judges detrun's unmap of the
// vDSO too. Under detrun the kernel's vDSO is gone all the same: the one mapped is detrun's,
// and the time read through it is virtual (the same on every run), while every verdict the program asked for holds for its own calls
// as natively: the errno (cut to 4095), a verdict returned from A, the SIGSYS of a trap
// with the kernel's siginfo (forced through when blocked: death), the death of a kill
// (status 159).
class OwnSeccompFilter : public ::testing::TestWithParam<const char *>
{
};

TEST_P(OwnSeccompFilter, GovernsTheProgramNotDetrunsSetup)
{
	const std::string mode = GetParam();
	RunResult native = RunCommand({ Guest("esc_own_filter"), mode });
	RunResult first = RunCommand(UnderDetrun({}, { Guest("esc_own_filter"), mode }));
	RunResult second = RunCommand(UnderDetrun({}, { Guest("esc_own_filter"), mode }));
	ASSERT_TRUE(Contains(native.out, "vdso mapped: yes")) << native.Describe() << native.out;
	EXPECT_TRUE(Contains(first.out, "vdso mapped: yes\nvdso clock: 1893456000."))
		<< first.Describe() << "\n"
		<< first.out;
	EXPECT_EQ(first.out, second.out)
		<< FirstDifference("run 1", first.out, "run 2", second.out);
	EXPECT_EQ(first.code, native.code) << first.Describe();
	EXPECT_EQ(Verdicts(first.out), Verdicts(native.out))
		<< FirstDifference("detrun", first.out, "native", native.out);
	EXPECT_TRUE(Contains(native.out, "uname: -1 errno 4095\ngetpgid(RET A): -1 errno 33\n"
					 "uname in a child: exit 255\n"))
		<< native.out;
	EXPECT_TRUE(first.err.empty()) << first.err;
	EXPECT_TRUE(first.leftovers.empty()) << first.Describe();
}

INSTANTIATE_TEST_SUITE_P(Escape, OwnSeccompFilter,
			 ::testing::Values("errno", "trap", "trapblocked", "kill"));

} // namespace

namespace
{

// A setup step detrun cannot do stops the group with one line and exit 125; the program
// never runs on without it. Here detrun's own RLIMIT_NOFILE is lowered from outside
// while the program waits (as a program could reach it with --no-namespaces), so the
// exec that follows can open neither /proc/PID/maps nor the files it maps: before, the
// program ran on with the host's vDSO mapped and its code unscanned.
TEST(Escape, FailedExecSetupStopsTheGroup)
{
	int in[2];
	ASSERT_EQ(pipe(in), 0);
	RunOptions opt;
	opt.stdin_fd = in[0];
	opt.timeout_s = 60;
	Child c(UnderDetrun({}, { Guest("esc_own_filter"), "wait" }), opt);
	close(in[0]);
	ASSERT_TRUE(c.WaitForOutput("waiting\n", 30)) << c.Out() << c.Err();
	// detrun waits for the program's input in ppoll (271) before its limit drops: a
	// wait begun after it would fail (EINVAL), and end the run there.
	std::string syscall_file = "/proc/" + std::to_string(c.Pid()) + "/syscall";
	double until = MonoNow() + 30;
	while (ReadFile(syscall_file).rfind("271 ", 0) != 0 && MonoNow() < until)
		usleep(1000);
	ASSERT_EQ(ReadFile(syscall_file).rfind("271 ", 0), 0u) << ReadFile(syscall_file);
	// Every descriptor below the limit in use: detrun's waits go on (they take no more
	// descriptors than the limit), but it can open nothing more.
	rlim_t lowest_free = 0;
	while (access(("/proc/" + std::to_string(c.Pid()) + "/fd/" + std::to_string(lowest_free))
			      .c_str(),
		      F_OK) == 0)
		lowest_free++;
	struct rlimit now;
	ASSERT_EQ(prlimit(c.Pid(), RLIMIT_NOFILE, nullptr, &now), 0);
	struct rlimit full = { lowest_free, now.rlim_max };
	ASSERT_EQ(prlimit(c.Pid(), RLIMIT_NOFILE, &full, nullptr), 0);
	ASSERT_EQ(write(in[1], "x", 1), 1);
	close(in[1]);
	RunResult r = c.Finish();
	EXPECT_EQ(r.code, 125) << r.Describe() << "\n" << r.out;
	EXPECT_FALSE(Contains(r.out, "vdso mapped")) << r.out;
	EXPECT_EQ(SplitLines(r.err).size(), 1u) << r.err;
	EXPECT_TRUE(Contains(r.err, "in execve at t=")) << r.err;
	// Which step finds no descriptor first (the maps, a mapped file to scan) depends on
	// what detrun closed since; each names itself.
	EXPECT_TRUE(Contains(r.err, ": Too many open files; the program must not run on")) << r.err;
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
}

} // namespace
