// Software nobody here wrote, run as outsiders will: the JVM, and what it leans
// on. Guests: tests/guests/out_*.c.
#include <gtest/gtest.h>
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

bool Installed(const std::string &program)
{
	return RunCommand({ "sh", "-c", "command -v " + program }).code == 0;
}

// Records argv, then replays it offline twice: both replays must end as the recording did,
// with the same stdout and stderr.
void ExpectRecordingReplays(const std::vector<std::string> &argv, const std::string &tag)
{
	TempDir dir("out-" + tag);
	std::string log = dir / "run.dlog";
	std::vector<std::string> rec_argv{ kDetrun, "record", "-o", log, "--" };
	rec_argv.insert(rec_argv.end(), argv.begin(), argv.end());
	RunResult rec = RunCommand(rec_argv);
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_TRUE(rec.leftovers.empty()) << rec.Describe();
	for (int i = 0; i < 2; i++) {
		RunResult rep = RunCommand({ "unshare", "-n", kDetrun, "replay", log });
		EXPECT_EQ(rep.code, rec.code) << rep.Describe();
		EXPECT_EQ(rep.out, rec.out)
			<< FirstDifference("recorded", rec.out, "replayed", rep.out);
		EXPECT_EQ(rep.err, rec.err)
			<< FirstDifference("recorded", rec.err, "replayed", rep.err);
		EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
	}
}

// cgroup v1 files are made when read and change by the moment (cpuacct.usage, memory.stat):
// fingerprinting them as input files made every replay stop at the first one ("differs
// from the recording").
TEST(Outsider, CgroupFilesAreNotStartingState)
{
	RunResult probe = RunCommand({ Guest("out_cgroup_read") });
	ASSERT_EQ(probe.code, 0) << probe.Describe();
	if (probe.out.find("no cgroup v1") != std::string::npos)
		GTEST_SKIP() << "this machine has no cgroup v1 hierarchy";
	ExpectRecordingReplays({ Guest("out_cgroup_read") }, "cgroup");
}

// The JVM reads its cgroup's memory.stat at every start (Arguments::set_heap_size): no
// recording of any Java program replayed. -XX:-UsePerfData: the JVM also lists the shared
// /tmp/hsperfdata_USER, which every other JVM on the machine changes (a real input).
TEST(Outsider, JavaStartupReplays)
{
	if (!Installed("java"))
		GTEST_SKIP() << "java is not installed";
	ExpectRecordingReplays({ "java", "-XX:-UsePerfData", "-XshowSettings:properties",
				 "-version" },
			       "java");
}

} // namespace
