// gdb's inferior calls on a replay (`print f(1)`, `call fflush(0)`): a function that makes
// no system call runs and gdb prints its value; one that does is refused with one line
// (its system call would change the replay), gdb puts the registers back, and the replay
// goes on as recorded. Every test drives Debian's real gdb in batch mode.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"
#include "debugger/gdb_session.h"

namespace
{

TEST(DebugCalls, CallsRunAndOnesThatMakeSystemCallsAreRefused)
{
	TempDir dir("debugcalls");
	RunResult rec = RecordInto(dir, "calls.dlog", { std::string(GUEST_DIR) + "/dbg_infcall" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	std::vector<std::string> lines = SplitLines(rec.out);
	ASSERT_EQ(lines.size(), 6u) << rec.out;
	RunResult r = Debug(dir, "calls.dlog",
			    { "break tick", "continue", "continue", "print add(1, 2)",
			      "call (int)fflush(0)", "bt 1", "print add(10, 20)", "delete",
			      "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
	// At tick(1) the counter is 0: add(1, 2) is 3, add(10, 20) 30.
	EXPECT_NE(r.out.find("$1 = 3\n"), std::string::npos) << all;
	EXPECT_NE(r.out.find("$2 = 30\n"), std::string::npos) << all;
	// fflush's write: refused, one line; gdb back where it was.
	EXPECT_EQ(Matching(r.err, "^detrun: warning: task 1: a function gdb called makes a system "
				  "call \\(write\\): not run")
			  .size(),
		  1u)
		<< r.err;
	EXPECT_NE(all.find("Program received signal SIGSYS"), std::string::npos) << all;
	EXPECT_NE(all.find("GDB has restored the context to what it was before the call."),
		  std::string::npos)
		<< all;
	EXPECT_FALSE(
		Matching(r.out, "^#0  tick \\(i=(i@entry=)?1\\) at .*dbg_infcall.c:[0-9]+$").empty())
		<< r.out;
	// The program's output: each recorded line once, in order, and nothing else of it.
	size_t at = 0;
	for (const std::string &line : lines) {
		size_t found = r.out.find(line + "\n", at);
		ASSERT_NE(found, std::string::npos) << line << "\n" << r.out;
		EXPECT_EQ(r.out.find(line + "\n", found + 1), std::string::npos) << line << "\n"
										 << r.out;
		at = found + line.size();
	}
}

} // namespace
