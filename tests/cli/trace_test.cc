// The syscall table (syscalls/syscalls.def) holds each call's argument count and kinds:
// --trace shows a call's own arguments, as many as it takes, a descriptor or int in
// decimal, flags and pointers in hex, a path as its string (not four hex registers).
#include <gtest/gtest.h>

#include <string>

#include "harness.h"

namespace
{

TEST(SyscallTableTrace, ShowsEachCallsOwnArguments)
{
	RunResult r = RunCommand(
		UnderDetrun({ "--trace" }, { std::string(GUEST_DIR) + "/table_trace" }));
	ASSERT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "table_trace: ok\n") << r.Describe();
	for (const char *line :
	     { "] sched_yield()\n", "] openat(-100, \"/nonexistent/table-trace\", 0, 0)\n",
	       "] mmap(0, 4096, 0x5, 0x22, -1, 0)\n" })
		EXPECT_NE(r.err.find(line), std::string::npos)
			<< "no line " << line << r.Describe();
}

} // namespace
