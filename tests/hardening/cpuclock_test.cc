// Issue 9, points 3, 10, 11 and 20: CPU instructions and clocks that reach the program
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

namespace {

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
			EXPECT_EQ(r.out, first) << FirstDifference("run 1", first, "run " + std::to_string(i + 1), r.out);
	}
	return first;
}

// ---- point 3: a shared executable mapping of a file is never patched ----------------------

TEST(CpuPatch, SharedWritableExecMappingLeavesTheFileUnchanged)
{
	std::string dir = TempDir();
	ASSERT_FALSE(dir.empty());
	std::string copy = dir + "/mapped";
	ASSERT_EQ(RunCommand({"cp", G + "cpu_shared_exec", copy}).code, 0);
	std::string before = ReadFile(copy);
	ASSERT_FALSE(before.empty());

	RunResult r = RunCommand(UnderDetrun({}, {G + "cpu_shared_exec", copy}));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_NE(r.out.find("mapped"), std::string::npos) << r.Describe();
	EXPECT_TRUE(ReadFile(copy) == before) << "detrun wrote into " << copy;
	// The CPUID there runs natively: said once, with its address.
	EXPECT_NE(r.err.find("shared mapping of " + copy), std::string::npos) << r.Describe();
	RunCommand({"rm", "-rf", dir});
}

// ---- point 11: CPUID the scan used to miss, RDPID ----------------------------------------

struct ScanCase {
	const char *name;
	std::vector<std::string> args;
	int lines;
};

class ScanMisses : public ::testing::TestWithParam<ScanCase> {};

TEST_P(ScanMisses, CpuidIsVirtual)
{
	const ScanCase &c = GetParam();
	std::vector<std::string> argv{G + "cpu_scan_misses"};
	argv.insert(argv.end(), c.args.begin(), c.args.end());
	RunResult native = RunCommand(argv);
	ASSERT_EQ(native.code, 0) << native.Describe();
	EXPECT_EQ(native.out.find(kVirtualBrand), std::string::npos)
		<< "natively the real brand shows: " << native.out;
	std::string out = StableUnderDetrun({}, argv);
	std::vector<std::string> lines = SplitLines(out);
	EXPECT_EQ((int)lines.size(), c.lines) << out;
	for (const auto &l : lines)
		EXPECT_NE(l.find(": " + kVirtualBrand), std::string::npos) << "real CPUID ran: " << l;
}

INSTANTIATE_TEST_SUITE_P(
	Cases, ScanMisses,
	::testing::Values(ScanCase{"nosym", {"nosym"}, 1}, ScanCase{"pkey", {"pkey"}, 1},
			  ScanCase{"mremap", {"mremap"}, 1},
			  ScanCase{"dlopen_twice", {"dlopen", G + "libcpu_brand_lib.so"}, 2}),
	[](const ::testing::TestParamInfo<ScanCase> &i) { return std::string(i.param.name); });

TEST(CpuPatch, RdpidAndRdtscpGiveTheVirtualCpu)
{
	// Natively the numbers name the real CPU: they change with where the task runs.
	RunResult on0 = RunCommand({"taskset", "-c", "0", G + "cpu_rdpid"});
	RunResult on1 = RunCommand({"taskset", "-c", "1", G + "cpu_rdpid"});
	if (on0.code == 0 && on1.code == 0)
		EXPECT_NE(SplitLines(on0.out)[0], SplitLines(on1.out)[0]);
	std::string out = StableUnderDetrun({"--cpus", "2"}, {G + "cpu_rdpid"});
	EXPECT_EQ(out, "start: rdpid 0 rdtscp aux 0 getcpu 0\n"
		       "on cpu 1: rdpid 1 rdtscp aux 1 getcpu 1\n");
}

} // namespace
