// End-to-end determinism tests: run guest programs and real programs natively and
// under detrun. Each case of the table below says how often to run it under detrun (every
// output must be byte-identical), whether it must first be shown to vary natively (proof
// that the case exercises nondeterminism on this machine), whether its output must equal
// the native output, and the exit code that native and detrun runs must both give.
// Commands run through the shared harness (harness.h).
#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifndef DETRUN_PATH
#error "DETRUN_PATH must be defined (path of build/detrun)"
#endif
#ifndef GUEST_DIR
#error "GUEST_DIR must be defined (directory of the built guest programs)"
#endif
#ifndef GO_GUEST
#define GO_GUEST ""
#endif

#include "harness.h"

namespace
{

// ---------------------------------------------------------------------------------------
// Shared inputs: generated data files and the real python executable

std::string g_data_dir; // set once DataDir() created it

std::string DataDir()
{
	static std::string dir = [] {
		char tmpl[] = "/tmp/detrun-e2e-data-XXXXXX";
		const char *d = mkdtemp(tmpl);
		if (!d)
			return std::string();
		std::string dir = d;
		// words.txt: 5000 pseudo-random lines of words; numbers.txt: 200000 numbers
		unsigned long x = 12345;
		auto next = [&x] {
			x = x * 6364136223846793005ul + 1442695040888963407ul;
			return (unsigned)(x >> 33);
		};
		static const char *syll[] = { "ka", "lo", "mi", "ne", "ru",
					      "ta", "vo", "zi", "pe", "su" };
		{
			std::ofstream w(dir + "/words.txt");
			for (int i = 0; i < 5000; i++) {
				int words = 1 + (int)(next() % 6);
				for (int k = 0; k < words; k++) {
					int sy = 1 + (int)(next() % 4);
					for (int j = 0; j < sy; j++)
						w << syll[next() % 10];
					w << (k + 1 < words ? " " : "\n");
				}
			}
		}
		{
			std::ofstream n(dir + "/numbers.txt");
			for (int i = 0; i < 200000; i++)
				n << (long)(next() % 1000000) - 500000 << "\n";
		}
		g_data_dir = dir;
		return dir;
	}();
	return dir;
}

struct DataDirCleanup : ::testing::Environment {
	void TearDown() override
	{
		if (!g_data_dir.empty()) // created by this process
			RunCommand({ "rm", "-rf", g_data_dir });
	}
};
::testing::Environment *const data_env = ::testing::AddGlobalTestEnvironment(new DataDirCleanup);

// ---------------------------------------------------------------------------------------
// The table

enum Native {
	kAnyNative,    // native output may be anything (only its exit code is checked)
	kMustVary,     // native runs must produce at least two different outputs
	kSameAsNative, // detrun output must equal the native output
};

struct Case {
	std::string name;
	std::vector<std::string> argv; // {guests} {data} {python} {go} are expanded
	int runs;                      // detrun runs, all outputs identical
	Native native;
	int exit_code; // expected of native and detrun runs
	std::vector<std::string> detrun_opts = {};
	int native_tries = 30; // kMustVary: native runs until two outputs differ
	// Why a replay of this case is known to differ from its recording; empty: it must not.
	// The replay still runs and its difference is printed, so the reason stays visible.
	std::string replay_divergence = "";
};

// gtest prints the parameter of each test: the case name is enough.
void PrintTo(const Case &c, std::ostream *os)
{
	*os << c.name;
}

const char *kPyThreads = R"PY(
import sys, threading
sys.setswitchinterval(0.0005)
out = []
lock = threading.Lock()
def worker(i):
    for j in range(300):
        x = 0
        for k in range(1000):
            x += k * i
        with lock:
            out.append(i)
ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for t in ts: t.start()
for t in ts: t.join()
runs = []
for v in out:
    if runs and runs[-1][0] == v: runs[-1][1] += 1
    else: runs.append([v, 1])
print(len(out), "items; runs:", " ".join("%d*%d" % (v, n) for v, n in runs))
)PY";

const char *kPyDeterministic = R"PY(
import hashlib, json, math, threading, queue, subprocess, sys
results = [None] * 6
def work(i):
    h = hashlib.sha256()
    for k in range(2000):
        h.update(("%d:%d" % (i, k)).encode())
    results[i] = h.hexdigest()[:16]
ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
for t in ts: t.start()
for t in ts: t.join()
print("digests", results)
q = queue.Queue()
for i in range(100): q.put(i * i)
print("queue sum", sum(q.get() for _ in range(100)))
print("json", json.dumps({"b": [1, 2, {"c": None}], "a": math.pi}, sort_keys=True))
print("primes", [n for n in range(2, 80) if all(n % d for d in range(2, int(math.sqrt(n)) + 1))])
p = subprocess.run(["/bin/sh", "-c", "echo from a subprocess; exit 3"], capture_output=True, text=True)
print("subprocess", repr(p.stdout), p.returncode)
)PY";

const char *kPyHashOrder = "print(' '.join({'w%02d' % i for i in range(40)}))\n"
			   "import os; print(len(os.urandom(16)))\n";

const char *kPyInventory =
	"import time, random, uuid, os\n"
	"print(time.time(), time.monotonic(), random.random(), uuid.uuid4(), os.getpid(),\n"
	"      hash('detrun'))\n";

const char *kShListCreated =
	"d=$(mktemp -d) && cd $d && mkdir sub && echo one > b && echo two > a && touch c && "
	"ln -s a link && ls -l --full-time -i . && cd / && rm -rf $d";

const char *kShBuildStamp =
	"d=$(mktemp -d) && printf 'const char *stamp = __DATE__ \" \" __TIME__;\\n' > $d/s.c && "
	"gcc -O2 -c $d/s.c -o $d/s.o && md5sum < $d/s.o && strings $d/s.o | grep ':' ; rm -rf $d";

// How many processes run at once in the cases of processes racing on shared memory. Add
// "2" once the engine runs processes of different memory domains in parallel: each case
// then runs under --jobs 2 as well (processes sharing memory must stay one at a time).
// The ways a run treats shared memory: serial, merged domains under --jobs 2, and page
// ownership (--page-owner) under --jobs 2; by the name's suffix.
const std::vector<std::pair<std::string, std::vector<std::string>>> kSharedMemoryModes = {
	{ "jobs1", { "--jobs", "1" } },
	{ "jobs2", { "--jobs", "2" } },
	{ "jobs2_owned", { "--jobs", "2", "--page-owner" } },
};

// Two processes racing on a counter in shared memory, by each way memory is shared
// (vkernel/memory_domain.h), in each mode of kSharedMemoryModes.
std::vector<Case> SharedMemoryCases()
{
	std::vector<Case> cases;
	for (const auto &mode : kSharedMemoryModes)
		for (const char *kind : { "anon", "memfd", "sysv", "file" })
			cases.push_back({ std::string("par_shared_") + kind + "_" + mode.first,
					  { "{guests}/par_shared_race", kind },
					  10,
					  kMustVary,
					  0,
					  mode.second });
	// Several pages, read and written, a write(2) from them, a memfd beside, an mremap; a
	// process-shared mutex: the ways page ownership moves a page (engine/page_share.h).
	for (const auto &mode : kSharedMemoryModes)
		for (const char *guest : { "par_shared_pages", "par_shared_mutex" })
			cases.push_back({ std::string(guest) + "_" + mode.first,
					  { std::string("{guests}/") + guest },
					  10,
					  kMustVary,
					  0,
					  mode.second });
	return cases;
}

std::vector<Case> Cases()
{
	std::vector<Case> cases = SharedMemoryCases();
	const std::string G = "{guests}/";
	std::vector<Case> table = {
		// guest programs: nondeterministic natively
		{ "racy_counter_4x2M", { G + "racy_counter", "4", "2000000" }, 10, kMustVary, 0 },
		{ "racy_counter_2x2M", { G + "racy_counter", "2", "2000000" }, 10, kMustVary, 0 },
		{ "racy_counter_8x500k", { G + "racy_counter", "8", "500000" }, 10, kMustVary, 0 },
		{ "racy_counter_quantum7",
		  { G + "racy_counter", "4", "2000000" },
		  10,
		  kMustVary,
		  0,
		  { "--quantum", "7" } },
		{ "racy_counter_seed99",
		  { G + "racy_counter", "3", "1000000" },
		  10,
		  kMustVary,
		  0,
		  { "--seed", "99" } },
		{ "mutex_condvar", { G + "mutex_condvar" }, 10, kMustVary, 0 },
		{ "mutex_condvar_5p2c", { G + "mutex_condvar", "5", "2", "100" }, 10, kMustVary, 0 },
		{ "spin_barrier", { G + "spin_barrier" }, 10, kMustVary, 0 },
		{ "spin_barrier_3x5", { G + "spin_barrier", "3", "5" }, 10, kMustVary, 0 },
		{ "pipe_writers", { G + "pipe_writers" }, 10, kMustVary, 0 },
		// processes that compute between their messages (parallel mode runs them at once)
		{ "par_pipeline", { G + "par_pipeline", "10", "2000000" }, 10, kMustVary, 0 },
		{ "par_compute", { G + "par_compute", "4", "20000000" }, 10, kMustVary, 0 },
		// ... and that allocate as they compute: ticks move their clocks (scheduler.h)
		{ "par_alloc", { G + "par_alloc", "3", "20", "200000" }, 10, kMustVary, 0 },
		// a parent catching SIGCHLD computes while its children exit
		{ "par_sigchld", { G + "par_sigchld", "6" }, 10, kMustVary, 0 },
		{ "epoll_pipes", { G + "epoll_pipes" }, 10, kMustVary, 0 },
		{ "signals", { G + "signals" }, 10, kMustVary, 0 },
		{ "stdout_threads", { G + "stdout_threads" }, 10, kMustVary, 0 },
		{ "sleeps", { G + "sleeps" }, 10, kMustVary, 0 },
		// guest programs whose output does not depend on the schedule
		{ "atomic_flag_wait", { G + "atomic_flag_wait" }, 10, kSameAsNative, 0 },
		// exit codes
		{ "exit_code_0", { G + "exit_code", "0" }, 10, kSameAsNative, 0 },
		{ "exit_code_3", { G + "exit_code", "3" }, 10, kSameAsNative, 3 },
		{ "exit_code_255", { G + "exit_code", "255" }, 10, kSameAsNative, 255 },
		// issue 17: an exited child not yet reaped is still there for signals; a System
		// V waiter whose object is removed wakes with EIDRM
		{ "zombie_kill", { G + "zombie_kill" }, 10, kSameAsNative, 0 },
		{ "zombie_kill_no_ns",
		  { G + "zombie_kill" },
		  10,
		  kSameAsNative,
		  0,
		  { "--no-namespaces" } },
		{ "ipc_removed", { G + "ipc_removed" }, 10, kSameAsNative, 0 },
		{ "ipc_removed_no_ns",
		  { G + "ipc_removed" },
		  10,
		  kSameAsNative,
		  0,
		  { "--no-namespaces" } },
		{ "kill_self_15", { G + "kill_self", "15" }, 10, kSameAsNative, 143 },
		{ "kill_self_9", { G + "kill_self", "9" }, 10, kSameAsNative, 137 },
		{ "sh_exit_7", { "sh", "-c", "exit 7" }, 10, kSameAsNative, 7 },
		// real programs
		{ "sh_pipeline",
		  { "sh", "-c", "seq 1 2000 | sort -r | head -5 | tr 0-9 a-j" },
		  10,
		  kSameAsNative,
		  0 },
		{ "ls_root", { "ls", "/" }, 10, kSameAsNative, 0 },
		{ "wc_file", { "wc", "{data}/words.txt" }, 10, kSameAsNative, 0 },
		{ "cat_file", { "cat", "{data}/words.txt" }, 10, kSameAsNative, 0 },
		{ "sort_words", { "sort", "{data}/words.txt" }, 10, kSameAsNative, 0 },
		{ "sort_numbers_parallel",
		  { "sort", "-n", "--parallel=2", "-S", "2M", "{data}/numbers.txt" },
		  10,
		  kSameAsNative,
		  0 },
		{ "python_threads_lock", { "{python}", "-c", kPyThreads }, 10, kMustVary, 0 },
		{ "python_deterministic",
		  { "{python}", "-c", kPyDeterministic },
		  10,
		  kSameAsNative,
		  0 },
		{ "python_hash_order", { "{python}", "-c", kPyHashOrder }, 10, kMustVary, 0 },
		{ "go_goroutines", { "{go}" }, 10, kMustVary, 0 },
		// the inventory of internal nondeterminism: one guest per row, each varies natively
		{ "inv_time", { G + "inv_time" }, 10, kMustVary, 0 },
		{ "inv_random", { G + "inv_random" }, 10, kMustVary, 0 },
		{ "inv_random_device", { G + "inv_random_device" }, 10, kMustVary, 0 },
		{ "inv_identity", { G + "inv_identity" }, 10, kMustVary, 0 },
		{ "inv_layout", { G + "inv_layout" }, 10, kMustVary, 0 },
		{ "inv_files", { G + "inv_files" }, 10, kMustVary, 0 },
		{ "inv_proc", { G + "inv_proc" }, 10, kMustVary, 0 },
		{ "inv_shared_memory", { G + "inv_shared_memory" }, 10, kMustVary, 0 },
		{ "inv_cpuid", { G + "inv_cpuid" }, 10, kAnyNative, 0 },
		{ "inv_python", { "{python}", "-c", kPyInventory }, 10, kMustVary, 0 },
		{ "inv_go", { "{go}-inventory" }, 10, kMustVary, 0 },
		{ "inv_date", { "date", "+%s.%N %c" }, 10, kMustVary, 0 },
		{ "inv_ls_full_time", { "sh", "-c", kShListCreated }, 10, kMustVary, 0 },
		// __DATE__/__TIME__ change once a second natively: only determinism is checked
		{ "inv_gcc_build_stamp", { "sh", "-c", kShBuildStamp }, 10, kAnyNative, 0 },
	};
	cases.insert(cases.begin(), table.begin(), table.end());
	return cases;
}

class E2E : public ::testing::TestWithParam<Case>
{
};

// Every case is also recorded and replayed, as rr does for each of its tests: the replay
// must print what the recording printed (stdout and stderr) and end with the same exit
// code. (A recording need not print what a plain run prints: its calls on descriptors
// from outside, such as a pipe on stdout, stop to be logged, which may shift the schedule.)
void RecordAndReplay(const Case &c, const std::vector<std::string> &argv)
{
	TempDir dir("e2e-rec");
	ASSERT_FALSE(dir.path.empty()) << "cannot create a directory for the log";
	std::string log = dir / "run.dlog";
	std::vector<std::string> record = { DETRUN_PATH, "record", "-o", log };
	record.insert(record.end(), c.detrun_opts.begin(), c.detrun_opts.end());
	record.push_back("--");
	record.insert(record.end(), argv.begin(), argv.end());
	RunResult rec = RunCommand(record);
	ASSERT_FALSE(rec.timed_out) << "the recording hung\n" << rec.Describe();
	EXPECT_TRUE(rec.leftovers.empty()) << "the recording left processes behind\n"
					   << rec.Describe();
	ASSERT_EQ(rec.code, c.exit_code) << "recording\n" << rec.Describe();

	RunResult rep = RunCommand({ DETRUN_PATH, "replay", log });
	ASSERT_FALSE(rep.timed_out) << "the replay hung\n" << rep.Describe();
	EXPECT_TRUE(rep.leftovers.empty()) << "the replay left processes behind\n"
					   << rep.Describe();
	bool same = rep.code == rec.code && rep.out == rec.out && rep.err == rec.err;
	if (!c.replay_divergence.empty()) {
		std::cout << "[ replay  ] KNOWN DIVERGENCE (" << c.replay_divergence << "): "
			  << (same ? "replayed the same this time"
				   : "exit code " + std::to_string(rep.code) + ", " +
					      FirstDifference("recording", rec.out, "replay",
							      rep.out))
			  << "\n";
		return;
	}
	EXPECT_EQ(rep.code, rec.code) << "replay\n" << rep.Describe();
	EXPECT_TRUE(rep.out == rec.out)
		<< "REPLAY DIVERGED: " << FirstDifference("recording", rec.out, "replay", rep.out)
		<< rep.Describe();
	EXPECT_TRUE(rep.err == rec.err) << "REPLAY DIVERGED on stderr: "
					<< FirstDifference("recording", rec.err, "replay", rep.err);
	std::cout << "[ replay  ] recorded (" << rec.seconds << " s) and replayed (" << rep.seconds
		  << " s): same output, exit code " << rep.code << "\n";
}

TEST_P(E2E, DeterministicUnderDetrun)
{
	const Case &c = GetParam();
	std::vector<std::string> argv;
	for (std::string a : c.argv) {
		if (a.find("{python}") != std::string::npos) {
			if (Python().empty())
				GTEST_SKIP() << "python3 not found";
			a = Replace(a, "{python}", Python());
		}
		if (a.find("{go}") != std::string::npos) {
			if (std::string(GO_GUEST).empty() || access(GO_GUEST, X_OK))
				GTEST_SKIP()
					<< "Go guest not built (go not found at configure time?)";
			a = Replace(a, "{go}", GO_GUEST);
		}
		if (a.find("{data}") != std::string::npos) {
			ASSERT_FALSE(DataDir().empty()) << "cannot create the data directory";
			a = Replace(a, "{data}", DataDir());
		}
		a = Replace(a, "{guests}", GUEST_DIR);
		argv.push_back(a);
	}
	if (argv[0].find('/') != std::string::npos) {
		ASSERT_EQ(access(argv[0].c_str(), X_OK), 0) << argv[0] << " is not built";
	}

	// Natively: the exit code, and variation or the reference output.
	RunResult native = RunCommand(argv);
	ASSERT_FALSE(native.timed_out) << native.Describe();
	EXPECT_TRUE(native.leftovers.empty()) << native.Describe();
	ASSERT_EQ(native.code, c.exit_code) << "native run\n" << native.Describe();
	if (c.native == kMustVary) {
		bool varied = false;
		for (int i = 1; i < c.native_tries && !varied; i++) {
			RunResult again = RunCommand(argv);
			ASSERT_FALSE(again.timed_out) << again.Describe();
			EXPECT_TRUE(again.leftovers.empty()) << again.Describe();
			ASSERT_EQ(again.code, c.exit_code) << "native run " << i << "\n"
							   << again.Describe();
			if (again.out != native.out) {
				varied = true;
				std::cout << "[ native  ] varied at run " << i << ": "
					  << FirstDifference("native run 0", native.out,
							     "native run " + std::to_string(i),
							     again.out);
			}
		}
		EXPECT_TRUE(varied)
			<< "the program never varied in " << c.native_tries
			<< " native runs, so this case proves nothing on this machine; output:\n"
			<< Head(native.out);
	}

	// Under detrun: every run identical, same exit code.
	std::vector<std::string> cmd = UnderDetrun(c.detrun_opts, argv);
	std::string reference;
	for (int i = 0; i < c.runs; i++) {
		RunResult r = RunCommand(cmd);
		ASSERT_FALSE(r.timed_out) << "detrun run " << i << " hung\n" << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << "detrun run " << i << " left processes behind\n"
						 << r.Describe();
		ASSERT_EQ(r.code, c.exit_code) << "detrun run " << i << "\n" << r.Describe();
		if (i == 0) {
			reference = r.out;
			if (c.native == kSameAsNative) {
				ASSERT_TRUE(r.out == native.out)
					<< FirstDifference("native", native.out, "detrun run 0",
							   r.out)
					<< r.Describe();
			}
			continue;
		}
		ASSERT_TRUE(r.out == reference)
			<< "NOT DETERMINISTIC: "
			<< FirstDifference("detrun run 0", reference,
					   "detrun run " + std::to_string(i), r.out)
			<< r.Describe();
	}
	std::cout << "[ detrun  ] " << c.runs << " identical runs, exit code " << c.exit_code
		  << ", output " << reference.size() << " bytes:\n"
		  << Head(reference, 6);
	RecordAndReplay(c, argv);
}

INSTANTIATE_TEST_SUITE_P(Table, E2E, ::testing::ValuesIn(Cases()),
			 [](const ::testing::TestParamInfo<Case> &info) {
				 return info.param.name;
			 });

// The table again with processes in parallel (--jobs 2), for every case that starts more
// than one process: each must be as deterministic there and replay the same (its output
// may differ from the serial run's). A program of one process is one memory domain, which
// runs as in serial mode; `DETRUN_JOBS=2 make test` runs every test in parallel mode.
// The Table case has shown already how the program varies natively: only its exit code is
// checked here.
bool OneProcess(const Case &c)
{
	static const char *const threads_only[] = {
		"racy_counter",
		"mutex_condvar",
		"spin_barrier",
		"stdout_threads",
		"atomic_flag_wait",
		"python_threads_lock",
		"python_deterministic",
		"python_hash_order",
		"go_goroutines",
		"exit_code",
		"inv_time",
		"inv_random",
		"inv_identity",
		"inv_layout",
		"inv_cpuid",
		"inv_python",
		"inv_go",
		"inv_date",
		"cat_file",
		"wc_file",
		"sort_words",
		"ls_root",
	};
	for (const char *name : threads_only)
		if (c.name.rfind(name, 0) == 0)
			return true;
	return false;
}

std::vector<Case> ParallelCases()
{
	std::vector<Case> cases;
	for (Case c : Cases()) {
		bool has_jobs = std::find(c.detrun_opts.begin(), c.detrun_opts.end(), "--jobs") !=
				c.detrun_opts.end();
		if (has_jobs || OneProcess(c))
			continue; /* the shared-memory cases name their own jobs */
		c.detrun_opts.insert(c.detrun_opts.begin(), { "--jobs", "2" });
		if (c.native == kMustVary)
			c.native = kAnyNative;
		cases.push_back(c);
	}
	return cases;
}

INSTANTIATE_TEST_SUITE_P(Parallel, E2E, ::testing::ValuesIn(ParallelCases()),
			 [](const ::testing::TestParamInfo<Case> &info) {
				 return info.param.name;
			 });

// ---------------------------------------------------------------------------------------
// make -j2 of a generated C project: natively and under detrun

// Writes the project into the existing directory `dir`: ten units and main.c, compiled and
// linked with `cflags`.
void WriteProject(const std::string &dir, const std::string &cflags)
{
	const int n = 10;
	std::ostringstream header, mainc, objs;
	header << "#ifndef COMMON_H\n#define COMMON_H\n";
	mainc << "#include <stdio.h>\n#include \"common.h\"\nint main(void)\n{\n"
	      << "\tlong total = 0;\n";
	objs << "OBJS = main.o";
	for (int i = 0; i < n; i++) {
		header << "long f" << i << "(long x);\n";
		std::ostringstream src;
		src << "#include \"common.h\"\n"
		    << "static long helper(long x) { return x * " << (i + 3) << " + " << (i * i)
		    << "; }\n"
		    << "long f" << i << "(long x)\n{\n\tlong acc = 0;\n"
		    << "\tfor (long k = 0; k < " << (100 + 10 * i) << "; k++)\n"
		    << "\t\tacc = (acc ^ helper(x + k)) % 1000003;\n\treturn acc;\n}\n";
		WriteFile(dir + "/f" + std::to_string(i) + ".c", src.str());
		mainc << "\tprintf(\"f" << i << " = %ld\\n\", f" << i << "(" << i * 17 << "));\n"
		      << "\ttotal += f" << i << "(" << i << ");\n";
		objs << " f" << i << ".o";
	}
	header << "#endif\n";
	mainc << "\tprintf(\"total = %ld\\n\", total);\n\treturn 0;\n}\n";
	WriteFile(dir + "/common.h", header.str());
	WriteFile(dir + "/main.c", mainc.str());
	WriteFile(dir + "/Makefile", "CFLAGS = " + cflags + "\n" + objs.str() +
					     "\n\n"
					     "prog: $(OBJS)\n"
					     "\tgcc $(CFLAGS) -o $@ $(OBJS)\n\n"
					     "%.o: %.c common.h\n"
					     "\tgcc $(CFLAGS) -c $< -o $@\n");
}

// The project in a fresh directory of its own, built with gcc -O2.
std::string MakeProject()
{
	char tmpl[] = "/tmp/detrun-e2e-make-XXXXXX";
	const char *d = mkdtemp(tmpl);
	if (!d)
		return "";
	WriteProject(d, "-O2");
	return d;
}

TEST(E2EMake, ParallelBuildOfGeneratedProject)
{
	const std::vector<std::string> unset = { "MAKEFLAGS", "MFLAGS", "MAKELEVEL",
						 "MAKEOVERRIDES" };
	const std::vector<std::string> make = { "make", "-j2", "--no-print-directory" };
	struct Cleanup {
		std::vector<std::string> dirs;
		~Cleanup()
		{
			for (const auto &d : dirs)
				RunCommand({ "rm", "-rf", d });
		}
	} cleanup; // removes the project directories however the test ends
	std::vector<std::string> &dirs = cleanup.dirs;

	std::string ndir = MakeProject();
	ASSERT_FALSE(ndir.empty());
	dirs.push_back(ndir);
	RunOptions nopt;
	nopt.cwd = ndir;
	nopt.unset_env = unset;
	RunResult native = RunCommand(make, nopt);
	ASSERT_FALSE(native.timed_out) << native.Describe();
	EXPECT_TRUE(native.leftovers.empty()) << native.Describe();
	ASSERT_EQ(native.code, 0) << "native make\n" << native.Describe();
	RunResult nprog = RunCommand({ ndir + "/prog" });
	ASSERT_EQ(nprog.code, 0) << nprog.Describe();

	const int runs = 3;
	std::string reference;
	for (int i = 0; i < runs; i++) {
		std::string dir = MakeProject();
		ASSERT_FALSE(dir.empty());
		dirs.push_back(dir);
		RunOptions opt;
		opt.cwd = dir;
		opt.unset_env = unset;
		opt.timeout_s = 300;
		RunResult r = RunCommand(UnderDetrun({}, make), opt);
		ASSERT_FALSE(r.timed_out) << "detrun make run " << i << " hung\n" << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		ASSERT_EQ(r.code, native.code) << "detrun make run " << i << "\n" << r.Describe();
		RunResult prog = RunCommand({ dir + "/prog" });
		ASSERT_EQ(prog.code, 0) << prog.Describe();
		EXPECT_TRUE(prog.out == nprog.out)
			<< FirstDifference("natively built prog", nprog.out,
					   "prog built under detrun (run " + std::to_string(i) +
						   ")",
					   prog.out);
		if (i == 0)
			reference = r.out;
		else
			EXPECT_TRUE(r.out == reference)
				<< "NOT DETERMINISTIC: "
				<< FirstDifference("detrun make run 0", reference,
						   "detrun make run " + std::to_string(i), r.out);
	}
	std::cout << "[ make    ] native make output:\n"
		  << Head(native.out, 15) << "[ make    ] detrun make output:\n"
		  << Head(reference, 15);
}

// The regular files of directory `dir` (not below it), by name, with their bytes.
std::map<std::string, std::string> FilesIn(const std::string &dir)
{
	std::map<std::string, std::string> files;
	DIR *d = opendir(dir.c_str());
	if (!d)
		return files;
	while (struct dirent *e = readdir(d)) {
		struct stat st;
		std::string path = dir + "/" + e->d_name;
		if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
			files[e->d_name] = ReadFile(path);
	}
	closedir(d);
	return files;
}

// Names present in only one of `a` and `b`, or with other bytes in each.
std::vector<std::string> DifferingFiles(const std::map<std::string, std::string> &a,
					const std::map<std::string, std::string> &b)
{
	std::vector<std::string> names;
	for (const auto &[name, bytes] : a)
		if (!b.count(name) || b.at(name) != bytes)
			names.push_back(name);
	for (const auto &[name, bytes] : b)
		if (!a.count(name))
			names.push_back(name);
	return names;
}

std::string JoinNames(const std::vector<std::string> &names)
{
	std::string s;
	for (const std::string &n : names)
		s += (s.empty() ? "" : " ") + n;
	return s;
}

// The memory domains that --trace names after a process mapped shared memory.
std::set<std::string> MappedDomains(const std::string &trace)
{
	const std::string key = "shared memory: memory domain ";
	std::set<std::string> domains;
	for (const std::string &line : SplitLines(trace)) {
		size_t at = line.find(key);
		if (at != std::string::npos)
			domains.insert(line.substr(at + key.size()));
	}
	return domains;
}

struct Build {
	RunResult make;
	std::map<std::string, std::string> files; // the tree after the build, sources and all
};

// Writes a fresh copy of the LTO project at `root`/src, runs `make -j2` there (under
// `prefix`: nothing, or detrun and its options) and moves the tree to `root`/`name`, so that
// every build runs at the same path.
Build BuildFreshCopy(const std::string &root, const std::vector<std::string> &prefix,
		     const std::string &name)
{
	Build b;
	const std::string src = root + "/src";
	if (mkdir(src.c_str(), 0755) != 0)
		return b;
	WriteProject(src, "-O2 -g -flto");
	std::vector<std::string> argv = prefix;
	argv.insert(argv.end(), { "make", "-j2", "--no-print-directory" });
	RunOptions opt;
	opt.cwd = src;
	opt.unset_env = { "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES",
			  "SOURCE_DATE_EPOCH" };
	b.make = RunCommand(argv, opt);
	b.files = FilesIn(src);
	rename(src.c_str(), (root + "/" + name).c_str());
	return b;
}

// Reproducible builds (issue 19): `make -j2` under `detrun --jobs 2`, two compilers at once,
// in a fresh copy of the tree each time, gives the same bytes in every artifact, the 11
// objects and the linked program. Every copy is built at the same path: -g records the build
// directory in the debug information, which would make any two paths differ.
//
// Natively, gcc's plain -O2 -g objects are identical from build to build too (gcc is
// deterministic), so a plain project would show only that detrun does not break that. With
// -flto each object names its sections after a seed gcc draws from the clock and its pid
// (reproducible builds pass -frandom-seed against it): two native builds differ in every
// object, and the test shows that first. The program linked from them is the same natively
// (the link does not keep the seed). Under detrun the clock and the pids are the group's own.
TEST(E2EMake, JobsTwoBuildsAreByteIdentical)
{
	TempDir root("e2e-repro");
	ASSERT_FALSE(root.path.empty());
	Build native[2];
	for (int i = 0; i < 2; i++) {
		native[i] = BuildFreshCopy(root.path, {}, "native" + std::to_string(i));
		ASSERT_EQ(native[i].make.code, 0) << native[i].make.Describe();
		EXPECT_TRUE(native[i].make.leftovers.empty()) << native[i].make.Describe();
	}
	std::vector<std::string> varied = DifferingFiles(native[0].files, native[1].files);
	EXPECT_FALSE(varied.empty()) << "two native builds were identical: the test shows nothing";
	std::cout << "[ repro   ] differing between two native builds: " << JoinNames(varied)
		  << "\n";
	RunResult nprog = RunCommand({ root / "native0/prog" });
	ASSERT_EQ(nprog.code, 0) << nprog.Describe();

	const int runs = 3;
	Build first;
	for (int i = 0; i < runs; i++) {
		std::vector<std::string> detrun{ DETRUN_PATH, "--jobs", "2", "--" };
		if (i == 0) // the trace says which memory domain each mapping left its process in
			detrun.insert(detrun.begin() + 3, { "--trace-file", root / "trace" });
		Build b = BuildFreshCopy(root.path, detrun, "detrun" + std::to_string(i));
		ASSERT_FALSE(b.make.timed_out) << "detrun build " << i << " hung\n"
					       << b.make.Describe();
		ASSERT_EQ(b.make.code, 0) << "detrun build " << i << "\n" << b.make.Describe();
		EXPECT_TRUE(b.make.leftovers.empty()) << b.make.Describe();
		size_t artifacts = 0;
		for (const auto &[name, bytes] : b.files) {
			bool object = name.size() > 2 && name.substr(name.size() - 2) == ".o";
			artifacts += object || name == "prog";
		}
		EXPECT_EQ(artifacts, 12u) << "want 11 objects and prog in build " << i;
		if (i == 0) {
			first = b;
			std::set<std::string> domains = MappedDomains(ReadFile(root / "trace"));
			EXPECT_GT(domains.size(), 1u)
				<< "every process that maps shared memory (make, gcc, cc1, as, ld: "
				   "glibc's gconv-modules.cache, read-only) was in one memory domain: "
				   "the compilers ran one at a time";
			std::cout << "[ repro   ] memory domains after a shared mapping: "
				  << domains.size() << "\n";
			RunResult prog = RunCommand({ root / "detrun0/prog" });
			ASSERT_EQ(prog.code, 0) << prog.Describe();
			EXPECT_TRUE(prog.out == nprog.out)
				<< FirstDifference("natively built prog", nprog.out,
						   "prog built under detrun", prog.out);
			continue;
		}
		std::vector<std::string> differ = DifferingFiles(first.files, b.files);
		EXPECT_TRUE(differ.empty()) << "NOT REPRODUCIBLE: detrun builds 0 and " << i
					    << " differ in " << JoinNames(differ);
		EXPECT_TRUE(b.make.out == first.make.out)
			<< "NOT DETERMINISTIC: "
			<< FirstDifference("detrun make run 0", first.make.out,
					   "detrun make run " + std::to_string(i), b.make.out);
	}
	std::cout << "[ repro   ] " << runs
		  << " builds under detrun --jobs 2: every file identical (" << first.files.size()
		  << " files)\n";
}

// ---------------------------------------------------------------------------------------
// The harness itself: it must notice processes left behind and never hang.

TEST(E2EHarness, ReportsLeftBehindProcesses)
{
	// natively, a background child outlives the shell, once in the same group and once
	// escaped into its own session
	RunResult r = RunCommand({ "sh", "-c", "sleep 1000 & setsid sleep 1001 & echo started" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "started\n") << r.Describe();
	ASSERT_EQ(r.leftovers.size(), 2u) << r.Describe();
	EXPECT_TRUE(FindLeftovers(getpid()).empty());
}

TEST(E2EHarness, TimeoutKillsTheGroup)
{
	RunOptions opt;
	opt.timeout_s = 1;
	RunResult r = RunCommand({ "sh", "-c", "sleep 1000 | cat; echo never" }, opt);
	EXPECT_TRUE(r.timed_out) << r.Describe();
	EXPECT_EQ(r.code, 128 + SIGKILL) << r.Describe();
	EXPECT_EQ(r.out, "") << r.Describe();
}

// Under detrun a background process must not outlive the run either (detrun waits for it
// on the virtual clock or kills it, but nothing may be left behind).
TEST(E2EDetrun, BackgroundChildDoesNotEscape)
{
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(
			UnderDetrun({}, { "sh", "-c", "sleep 1000 & echo started" }));
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, "started\n") << r.Describe();
	}
}

// ---------------------------------------------------------------------------------------
// Bad input to detrun itself

size_t CountLines(const std::string &s)
{
	return (size_t)std::count(s.begin(), s.end(), '\n') + (!s.empty() && s.back() != '\n');
}

TEST(E2EBadInput, NonexistentProgram)
{
	RunResult r = RunCommand({ DETRUN_PATH, "--", "/nonexistent" });
	ASSERT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(r.code, 127) << r.Describe();
	EXPECT_EQ(CountLines(r.err), 1u) << "want exactly one line on stderr\n" << r.Describe();
	EXPECT_EQ(r.out, "") << r.Describe();
}

TEST(E2EBadInput, NotExecutable)
{
	ASSERT_FALSE(DataDir().empty());
	RunResult r = RunCommand({ DETRUN_PATH, "--", DataDir() + "/words.txt" });
	ASSERT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(r.code, 126) << r.Describe();
	EXPECT_EQ(CountLines(r.err), 1u) << "want exactly one line on stderr\n" << r.Describe();
}

TEST(E2EBadInput, UnknownOption)
{
	RunResult r = RunCommand({ DETRUN_PATH, "--bogus-flag", "--", "true" });
	ASSERT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_NE(r.code, 0) << r.Describe();
	EXPECT_LT(r.code, 128) << "must exit, not crash\n" << r.Describe();
	EXPECT_EQ(CountLines(r.err), 1u) << "want a one-line error\n" << r.Describe();
	EXPECT_NE(r.err.find("bogus-flag"), std::string::npos) << "should name the option\n"
							       << r.Describe();
	EXPECT_EQ(r.out, "") << r.Describe();
}

TEST(E2EBadInput, NoProgram)
{
	for (const std::vector<std::string> &argv :
	     { std::vector<std::string>{ DETRUN_PATH },
	       std::vector<std::string>{ DETRUN_PATH, "--" } }) {
		RunResult r = RunCommand(argv);
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		EXPECT_NE(r.code, 0) << r.Describe();
		EXPECT_LT(r.code, 128) << "must exit, not crash\n" << r.Describe();
		std::string lower = r.err;
		std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
		EXPECT_NE(lower.find("usage"), std::string::npos) << "want a usage message\n"
								  << r.Describe();
	}
}

} // namespace
