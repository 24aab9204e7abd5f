// Debugging a recording of parallel mode (--jobs 2): the replay under gdb runs one
// process at a time, each other one let go on to its next stop before another starts, so
// the events come in the recording's order and gdb sees the whole group stopped wherever
// one task stops. Every test drives Debian's real gdb in batch mode.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"
#include "debugger/gdb_session.h"

namespace
{

const std::string kDetrun = DETRUN_PATH;
const std::string kGuest = std::string(GUEST_DIR) + "/dbg_par";

// Breakpoints forward and back, a watchpoint going back, then on to the end: the parent
// adds what two children computing at once send it.
const std::vector<std::string> kSession{ "break note",     "continue",         "continue",
					 "continue",       "print *r",         "print total",
					 "monitor when",   "reverse-continue", "print *r",
					 "print total",    "monitor when",     "delete",
					 "watch -l total", "reverse-continue", "print total",
					 "monitor when",   "delete",           "continue" };

// The program's "from K: V (total T)" lines, in the order the parent got them.
std::vector<std::string> Results(const std::string &out)
{
	return Matching(out, "^from [01]: [0-9]+ \\(total [0-9]+\\)$");
}

// Records dbg_par under --jobs 2 into dir/par.dlog; its output.
std::string RecordJobsTwo(const TempDir &dir)
{
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult rec = RunCommand({ kDetrun, "record", "--jobs", "2", "-o", dir / "par.dlog", "--",
				     kGuest },
				   opt);
	EXPECT_EQ(rec.code, 0) << rec.Describe();
	EXPECT_NE(rec.out.find("DBG-PAR-OK"), std::string::npos) << rec.Describe();
	RunResult header = RunCommand({ kDetrun, "log", dir / "par.dlog" });
	EXPECT_NE(header.out.find(", jobs 2,"), std::string::npos) << header.Describe();
	return rec.out;
}

TEST(DebugParallel, ARecordingOfJobsTwoIsDebuggedForwardAndBack)
{
	TempDir dir("debugpar");
	std::vector<std::string> results = Results(RecordJobsTwo(dir));
	ASSERT_EQ(results.size(), 8u);

	RunResult r = Debug(dir, "par.dlog", kSession);
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
	EXPECT_EQ(all.find("serial mode only"), std::string::npos) << all;
	// Three hits forward: the third result; back one: the second, and the time before.
	std::vector<std::string> hits = Matching(r.out, "^Breakpoint 1, note \\(r=");
	EXPECT_EQ(hits.size(), 4u) << r.out;
	std::vector<std::string> when = Matching(all, "^logical time ");
	ASSERT_EQ(when.size(), 3u) << all;
	long third = NumberAfter(when[0], "logical time "),
	     second = NumberAfter(when[1], "logical time ");
	EXPECT_LT(second, third) << all;
	long total1 = NumberAfter(results[0], "(total "),
	     total2 = NumberAfter(results[1], "(total ");
	EXPECT_NE(r.out.find("$2 = " + std::to_string(total2) + "\n"), std::string::npos)
		<< "before the third result, the total of two\n"
		<< r.out;
	EXPECT_NE(r.out.find("$4 = " + std::to_string(total1) + "\n"), std::string::npos)
		<< "before the second result, the total of one\n"
		<< r.out;
	// The watchpoint going back stops at the first result's write, in the parent.
	EXPECT_NE(r.out.find("Old value = " + std::to_string(total1) + "\nNew value = 0\n"),
		  std::string::npos)
		<< r.out;
	EXPECT_NE(r.out.find("$5 = 0\n"), std::string::npos) << r.out;
	EXPECT_LT(NumberAfter(when[2], "logical time "), second) << all;
	// On to the end: every result as recorded, in the recording's order.
	for (const std::string &line : results)
		EXPECT_NE(r.out.find(line + "\n"), std::string::npos) << line << "\n" << r.out;
	EXPECT_NE(r.out.find("DBG-PAR-OK"), std::string::npos) << r.out;

	// Going back does not depend on timing: a second session says the same.
	RunResult again = Debug(dir, "par.dlog", kSession);
	EXPECT_EQ(Matching(again.out + again.err,
			   "^(logical time |\\$[0-9]+ = |Old value|New value)"),
		  Matching(all, "^(logical time |\\$[0-9]+ = |Old value|New value)"))
		<< again.Describe();
}

// One instruction back from an event of the parent whose stop came before the events of
// the children handled ahead of it: the instruction before it is the parent's system call
// instruction, in the parent's run since its resume, not in a child's that ran after it.
TEST(DebugParallel, ReverseStepiFromAnEventStaysInItsProcess)
{
	TempDir dir("debugpar");
	RecordJobsTwo(dir);
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult traced = RunCommand({ kDetrun, "replay", "--trace-file", dir / "par.trace",
					dir / "par.dlog" },
				      opt);
	ASSERT_EQ(traced.code, 0) << traced.Describe();
	std::string trace = ReadFile(dir / "par.trace");
	// The parent's getrandom (stdio's first buffer), with a child's event just before it.
	std::smatch m;
	ASSERT_TRUE(std::regex_search(trace, m,
				      std::regex("\\[t=([0-9]+) task [23]\\] [^\n]*\n(  [^\n]*\n)*"
						 "\\[t=([0-9]+) task 1\\] getrandom\\(")))
		<< "no event of a child right before the parent's getrandom\n"
		<< trace;
	long event = atol(m[3].str().c_str());
	RunResult r = Debug(dir, "par.dlog",
			    { "monitor goto " + std::to_string(event), "continue", "monitor when",
			      "reverse-stepi", "x/i $pc", "bt 1", "monitor when" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	std::vector<std::string> when = Matching(all, "^logical time ");
	ASSERT_EQ(when.size(), 2u) << all;
	EXPECT_EQ(NumberAfter(when[0], "logical time "), event) << all;
	EXPECT_LT(NumberAfter(when[1], "logical time "), event) << all;
	EXPECT_NE(when[1].find("; task 1 (tid "), std::string::npos) << all;
	EXPECT_FALSE(Matching(r.out, "^=> 0x[0-9a-f]+ <[_A-Za-z]*getrandom\\+[0-9]+>:\\s+syscall")
			     .empty())
		<< r.out;
	EXPECT_FALSE(Matching(r.out, "^#0 .*getrandom").empty()) << r.out;
}

} // namespace
