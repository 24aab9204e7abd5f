// CPU instructions and clocks that reach the program
// without a syscall. Patching CPUID must never write into a file; the scan must find CPUID
// and RDPID wherever code is mapped; the vDSO, adjtimex and the personality must not
// bring real time or ASLR back; trapping RDTSC must not change the program's signal
// state. Each determinism case is two-sided: the guest's output varies (or differs from
// detrun's) natively, and is identical over several detrun runs.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string G = std::string(GUEST_DIR) + "/";
const std::string kVirtualBrand = "detrun virtual CPU";

std::string ReadFile(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	std::stringstream s;
	s << f.rdbuf();
	return s.str();
}

std::string TempDir()
{
	char tmpl[] = "/tmp/detrun-cpuclock-XXXXXX";
	const char *d = mkdtemp(tmpl);
	return d ? d : "";
}

// Runs argv under detrun `runs` times; every run must exit 0 with the same stdout, which
// is returned.
std::string StableUnderDetrun(const std::vector<std::string> &opts,
			      const std::vector<std::string> &argv, int runs = 3)
{
	std::string first;
	for (int i = 0; i < runs; i++) {
		RunResult r = RunCommand(UnderDetrun(opts, argv));
		EXPECT_EQ(r.code, 0) << r.Describe();
		if (i == 0)
			first = r.out;
		else
			EXPECT_EQ(r.out, first)
				<< FirstDifference("run 1", first, "run " + std::to_string(i + 1),
						   r.out);
	}
	return first;
}

// ---- point 3: a shared executable mapping of a file is never patched ----------------------

TEST(CpuPatch, SharedWritableExecMappingLeavesTheFileUnchanged)
{
	std::string dir = TempDir();
	ASSERT_FALSE(dir.empty());
	std::string copy = dir + "/mapped";
	ASSERT_EQ(RunCommand({ "cp", G + "cpu_shared_exec", copy }).code, 0);
	std::string before = ReadFile(copy);
	ASSERT_FALSE(before.empty());

	RunResult r = RunCommand(UnderDetrun({}, { G + "cpu_shared_exec", copy }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_NE(r.out.find("mapped"), std::string::npos) << r.Describe();
	EXPECT_TRUE(ReadFile(copy) == before) << "detrun wrote into " << copy;
	// The CPUID there runs natively: said once, with its address.
	EXPECT_NE(r.err.find("shared mapping of " + copy), std::string::npos) << r.Describe();
	RunCommand({ "rm", "-rf", dir });
}

// ---- point 11: CPUID the scan used to miss, RDPID ----------------------------------------

struct ScanCase {
	const char *name;
	std::vector<std::string> args;
	int lines;
};

void PrintTo(const ScanCase &c, std::ostream *os)
{
	*os << c.name;
}

class ScanMisses : public ::testing::TestWithParam<ScanCase>
{
};

TEST_P(ScanMisses, CpuidIsVirtual)
{
	const ScanCase &c = GetParam();
	std::vector<std::string> argv{ G + "cpu_scan_misses" };
	argv.insert(argv.end(), c.args.begin(), c.args.end());
	RunResult native = RunCommand(argv);
	ASSERT_EQ(native.code, 0) << native.Describe();
	EXPECT_EQ(native.out.find(kVirtualBrand), std::string::npos)
		<< "natively the real brand shows: " << native.out;
	std::string out = StableUnderDetrun({}, argv);
	std::vector<std::string> lines = SplitLines(out);
	EXPECT_EQ((int)lines.size(), c.lines) << out;
	for (const auto &l : lines)
		EXPECT_NE(l.find(": " + kVirtualBrand), std::string::npos)
			<< "real CPUID ran: " << l;
	if (std::string(c.name) == "dlopen_twice") { // loaded again where it was before
		EXPECT_NE(out.find("round 2 (same address)"), std::string::npos) << out;
	}
}

INSTANTIATE_TEST_SUITE_P(
	Cases, ScanMisses,
	::testing::Values(ScanCase{ "nosym", { "nosym" }, 1 }, ScanCase{ "pkey", { "pkey" }, 1 },
			  ScanCase{ "mremap", { "mremap" }, 1 },
			  ScanCase{ "readexec", { "readexec" }, 2 },
			  ScanCase{ "dlopen_twice", { "dlopen", G + "libcpu_brand_lib.so" }, 2 }),
	[](const ::testing::TestParamInfo<ScanCase> &i) { return std::string(i.param.name); });

// Without root /proc/PID/map_files is closed to detrun (CAP_SYS_ADMIN): the code is read
// through its file's name, checked to be the same inode, and patched all the same.
TEST(CpuPatch, ScannedWithoutRoot)
{
	if (getuid() != 0)
		GTEST_SKIP() << "needs root to run detrun as another user";
	std::vector<std::string> argv{ "setpriv", "--reuid=65534", "--regid=65534",
				       "--clear-groups" };
	for (const std::string &a :
	     UnderDetrun({ "--no-namespaces" }, { G + "cpu_scan_misses", "pkey" }))
		argv.push_back(a);
	RunResult r = RunCommand(argv);
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "pkey_mprotect: " + kVirtualBrand + "\n") << r.Describe();
}

TEST(CpuPatch, RdpidAndRdtscpGiveTheVirtualCpu)
{
	// Natively the numbers name the real CPU: they change with where the task runs.
	RunResult on0 = RunCommand({ "taskset", "-c", "0", G + "cpu_rdpid" });
	RunResult on1 = RunCommand({ "taskset", "-c", "1", G + "cpu_rdpid" });
	if (on0.code == 0 && on1.code == 0) {
		EXPECT_NE(SplitLines(on0.out)[0], SplitLines(on1.out)[0]);
	}
	std::string out = StableUnderDetrun({ "--cpus", "2" }, { G + "cpu_rdpid" });
	EXPECT_EQ(out, "start: rdpid 0 rdtscp aux 0 getcpu 0\n"
		       "on cpu 1: rdpid 1 rdtscp aux 1 getcpu 1\n");
}

// ---- point 10: clocks without the usual syscalls, and ASLR -------------------------------

// Runs the command natively until two outputs differ (at most `tries` runs).
bool VariesNatively(const std::vector<std::string> &argv, int tries = 10)
{
	std::string first;
	for (int i = 0; i < tries; i++) {
		RunResult r = RunCommand(argv);
		if (r.code != 0)
			return false;
		if (i == 0)
			first = r.out;
		else if (r.out != first)
			return true;
	}
	return false;
}

// A child's SIGCHLD carries its CPU time (si_utime, si_stime) natively, and wait4 its
// usage; the group's children have none, as getrusage and times say under detrun.
TEST(Clock, ChildUsageInSigchldAndWait4IsNone)
{
	EXPECT_TRUE(VariesNatively({ G + "cpu_sigchld_times" }));
	EXPECT_EQ(StableUnderDetrun({}, { G + "cpu_sigchld_times" }),
		  "child CPU time in SIGCHLD: 0 ticks\nwait4: 0.000000 s user, 0.000000 s system, 0 "
		  "minor faults, 0+0 switches\n");
}

TEST(Clock, VdsoFoundThroughMapsIsDetruns)
{
	// Natively the vDSO is in /proc/self/maps and reads the real clock.
	RunResult native = RunCommand({ G + "cpu_vdso" });
	ASSERT_EQ(native.code, 0) << native.Describe();
	EXPECT_NE(native.out.find("auxv names the same vDSO"), std::string::npos) << native.out;
	EXPECT_NE(native.out.find("maps: vDSO realtime"), std::string::npos) << native.out;
	EXPECT_TRUE(VariesNatively({ G + "cpu_vdso" }));
	// Under detrun the one found there is detrun's, which reads the virtual clock.
	std::string out = StableUnderDetrun({}, { G + "cpu_vdso" });
	EXPECT_EQ(out.rfind("vvar pages mapped\n/proc/self/auxv names the same vDSO as getauxval\n"
			    "maps: vDSO realtime 1893456000.",
			    0),
		  0u)
		<< out;
	EXPECT_NE(out.find(" monotonic 3600."), std::string::npos) << out;
	// --keep-vdso keeps it, as documented.
	RunResult kept = RunCommand(UnderDetrun({ "--keep-vdso" }, { G + "cpu_vdso" }));
	EXPECT_NE(kept.out.find("maps: vDSO realtime"), std::string::npos) << kept.Describe();
}

// ---- issue 20 point 1: clock reads through detrun's vDSO, without a stop -----------------

// A guest's output lines that contain `what`.
int CountLines(const std::string &out, const std::string &what)
{
	int n = 0;
	for (const std::string &l : SplitLines(out))
		n += l.find(what) != std::string::npos;
	return n;
}

struct ClockReadsCase {
	const char *name;
	std::string guest;
	std::string mode;
	std::vector<std::string> opts;
	int readers; // reader threads or processes in the guest
};

void PrintTo(const ClockReadsCase &c, std::ostream *os)
{
	*os << c.name;
}

class ClockReads : public ::testing::TestWithParam<ClockReadsCase>
{
};

// Every clock detrun answers, read 1000 times each in each reader, then a wait on the
// clock: the real values vary natively; under detrun they are virtual, the same on every
// run, never go backwards, and the wait ends (a read moves time less than an event, and
// every 128th read stops: an event).
TEST_P(ClockReads, SameValuesEveryRunNeverBackwards)
{
	const ClockReadsCase &c = GetParam();
	std::vector<std::string> argv{ G + c.guest, c.mode };
	EXPECT_TRUE(VariesNatively(argv, 5));
	std::string out = StableUnderDetrun(c.opts, argv);
	EXPECT_EQ(CountLines(out, "realtime 1893456000"), c.readers) << "virtual time\n" << out;
	EXPECT_EQ(CountLines(out, "monotonic 3600"), c.readers) << out;
	int vfork = c.mode == "vfork";
	EXPECT_EQ(CountLines(out, "backwards "), 10 * c.readers + vfork) << out;
	EXPECT_EQ(CountLines(out, "backwards 0"), CountLines(out, "backwards ")) << out;
	EXPECT_EQ(CountLines(out, " res 1"), 9 * c.readers) << out;
	EXPECT_EQ(CountLines(out, "time 1893456000 stored 1893456000"), c.readers) << out;
	EXPECT_EQ(CountLines(out, "clock 1234: -1 Invalid argument"), c.readers) << out;
	EXPECT_EQ(CountLines(out, "deadline reached"), c.readers) << out;
	EXPECT_EQ(CountLines(out, "then parent"), vfork) << out;
	EXPECT_EQ(CountLines(out, ": later"), vfork) << out;
}

const std::vector<std::string> kJobs2{ "--jobs", "2" };

INSTANTIATE_TEST_SUITE_P(
	Vdso, ClockReads,
	::testing::Values(ClockReadsCase{ "main", "clock_reads", "main", {}, 1 },
			  ClockReadsCase{ "fork", "clock_reads", "fork", {}, 2 },
			  ClockReadsCase{ "thread", "clock_reads", "thread", {}, 2 },
			  ClockReadsCase{ "vfork", "clock_reads", "vfork", {}, 1 },
			  ClockReadsCase{ "static_main", "clock_reads_static", "main", {}, 1 },
			  ClockReadsCase{ "static_fork", "clock_reads_static", "fork", {}, 2 },
			  ClockReadsCase{ "static_thread", "clock_reads_static", "thread", {}, 2 },
			  ClockReadsCase{ "fork_jobs2", "clock_reads", "fork", kJobs2, 2 },
			  ClockReadsCase{ "thread_jobs2", "clock_reads", "thread", kJobs2, 2 },
			  ClockReadsCase{ "vfork_jobs2", "clock_reads", "vfork", kJobs2, 1 }),
	[](const ::testing::TestParamInfo<ClockReadsCase> &i) {
		return std::string(i.param.name);
	});

// Most reads do not stop: one clock_gettime in 129 reaches detrun (--trace shows each call
// that stops), as an event, in the 9000 reads of the clocks as in the wait.
TEST(Clock, VdsoReadsMostlyDoNotStop)
{
	RunResult r = RunCommand(UnderDetrun({ "--trace" }, { G + "clock_reads", "main" }));
	ASSERT_EQ(r.code, 0) << r.Describe();
	size_t at = r.out.find("deadline reached after ");
	ASSERT_NE(at, std::string::npos) << r.out;
	long reads = 9 * 1000 + atol(r.out.c_str() + at + 23);
	long stops = CountLines(r.err, "clock_gettime(");
	EXPECT_GT(stops * 129, reads * 99 / 100) << stops << " stops for " << reads << " reads";
	EXPECT_LT(stops * 129, reads * 101 / 100) << stops << " stops for " << reads << " reads";
}

// A recording of the fork case replays with the same values, which are those of a plain
// run: the fast reads depend on events only, and nothing of them is recorded.
TEST(Clock, VdsoReadsReplayAsRecorded)
{
	std::string dir = TempDir();
	ASSERT_FALSE(dir.empty());
	std::string log = dir + "/clock.dlog";
	std::vector<std::string> prog{ G + "clock_reads", "fork" };
	for (const std::vector<std::string> &opts :
	     { std::vector<std::string>{}, std::vector<std::string>{ "--jobs", "2" } }) {
		std::vector<std::string> rec{ DETRUN_PATH, "record" };
		rec.insert(rec.end(), opts.begin(), opts.end());
		rec.insert(rec.end(), { "-o", log, "--" });
		rec.insert(rec.end(), prog.begin(), prog.end());
		RunResult recorded = RunCommand(rec);
		ASSERT_EQ(recorded.code, 0) << recorded.Describe();
		RunResult plain = RunCommand(UnderDetrun(opts, prog));
		EXPECT_EQ(plain.out, recorded.out)
			<< FirstDifference("plain run", plain.out, "recording", recorded.out);
		RunResult replayed = RunCommand({ DETRUN_PATH, "replay", log });
		EXPECT_EQ(replayed.code, 0) << replayed.Describe();
		EXPECT_EQ(replayed.out, recorded.out)
			<< FirstDifference("recording", recorded.out, "replay", replayed.out);
	}
	RunCommand({ "rm", "-rf", dir });
}

// The program's [vvar] is its memory: written over, it changes the program's own reads
// until its next event and nothing of detrun; the memory behind it cannot be shrunk (a
// truncated memfd would make detrun's next write a SIGBUS). Never run natively: there
// [vvar] is the kernel's, read-only.
TEST(Clock, VdsoPageWrittenByTheProgramHurtsOnlyItsOwnReads)
{
	std::string out = StableUnderDetrun({}, { G + "clock_scribble" });
	EXPECT_NE(out.find("after writing 42: 43\n"), std::string::npos) << out;
	EXPECT_TRUE(out.find("truncate: Operation not permitted\n") != std::string::npos ||
		    out.find("open map_files: ") != std::string::npos)
		<< out;
	EXPECT_NE(out.find("after a sleep: virtual again\n"), std::string::npos) << out;
}

// Go's runtime takes the vDSO by its own ELF lookup (version LINUX_2.6), not glibc's.
TEST(Clock, GoReadsTheVirtualClockThroughTheVdso)
{
	std::string go = std::string(GO_GUEST) + "-clockreads";
	if (std::string(GO_GUEST).empty() || access(go.c_str(), X_OK))
		GTEST_SKIP() << "no Go toolchain";
	EXPECT_TRUE(VariesNatively({ go }, 5));
	std::string out = StableUnderDetrun({}, { go });
	EXPECT_EQ(out.rfind("start 1893456000", 0), 0u) << out;
	EXPECT_NE(out.find("10000 reads, backwards 0 "), std::string::npos) << out;
	EXPECT_NE(out.find("waited 3ms in "), std::string::npos) << out;
}

TEST(Clock, AdjtimexReadsTheVirtualClock)
{
	EXPECT_TRUE(VariesNatively({ G + "cpu_adjtimex" }));
	std::string out = StableUnderDetrun({}, { G + "cpu_adjtimex" });
	std::vector<std::string> lines = SplitLines(out);
	ASSERT_EQ(lines.size(), 3u) << out;
	// The virtual wall clock starts at the default epoch (2030-01-01).
	EXPECT_NE(lines[0].find("state 0 time 1893456000."), std::string::npos) << out;
	EXPECT_EQ(lines[2], "clock_adjtime monotonic: Operation not supported");
	// Setting the clock fails as for an unprivileged program (never run natively: root
	// would really set it).
	std::string set = StableUnderDetrun({}, { G + "cpu_adjtimex", "set" }, 1);
	EXPECT_NE(set.find("set tick: Operation not permitted"), std::string::npos) << set;
}

TEST(Clock, SetarchDoesNotBringAslrBack)
{
	std::vector<std::string> argv{ "setarch", "x86_64", G + "cpu_aslr" };
	EXPECT_TRUE(VariesNatively(argv));
	std::string out = StableUnderDetrun({}, argv);
	EXPECT_NE(out.find("personality 0\n"), std::string::npos) << out;
	// The program sees the personality it would have natively, not detrun's
	// ADDR_NO_RANDOMIZE.
	std::string plain = StableUnderDetrun({}, { G + "cpu_aslr" }, 1);
	EXPECT_NE(plain.find("personality 0\n"), std::string::npos) << plain;
	EXPECT_EQ(SplitLines(plain)[0], SplitLines(out)[0]);
}

TEST(Clock, ExecSetupSurvivesDetrunsOwnTimer)
{
	// The vDSO is unmapped by calls injected at the exec stop; with a 1 ms spin budget
	// detrun's timer often interrupts them (once, the injection gave up half-way and the
	// program crashed). Every run must be clean.
	for (int i = 0; i < 8; i++) {
		RunResult r = RunCommand(UnderDetrun({ "--spin-budget", "1" },
						     { "setarch", "x86_64", G + "cpu_aslr" }));
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_NE(r.out.find("personality 0\n"), std::string::npos) << r.Describe();
		EXPECT_EQ(r.err, "") << r.Describe(); // e.g. no "cannot unmap the vDSO"
	}
}

// ---- point 20: trapping RDTSC and CPUID leaves the program's signal state alone ----------

TEST(TrapSignals, BlockedIgnoredAndHandledStayAsSet)
{
	// The guest blocks SIGSEGV and SIGILL and ignores SIGSEGV, then execs itself: the
	// loader reads the TSC and runs CPUID under that mask. Then handlers, masks and
	// SA_RESETHAND around more traps. Natively nothing changes them.
	RunResult native = RunCommand({ G + "cpu_sigstate" });
	ASSERT_EQ(native.code, 0) << native.Describe();
	ASSERT_NE(native.out.find("after exec                   SIGSEGV blocked 1 ignore"),
		  std::string::npos)
		<< native.out;
	std::string out = StableUnderDetrun({}, { G + "cpu_sigstate" }, 2);
	EXPECT_EQ(out, native.out) << FirstDifference("native", native.out, "detrun", out);
}

TEST(TrapSignals, RealFaultsStillEndTheProgram)
{
	// SIGSEGV/SIGILL with the default action, sent or raised by a fault, still kill.
	for (const char *sig : { "11", "4" }) {
		RunResult r = RunCommand(UnderDetrun({}, { G + "kill_self", sig }));
		EXPECT_EQ(r.code, 128 + atoi(sig)) << r.Describe();
	}
}

} // namespace
