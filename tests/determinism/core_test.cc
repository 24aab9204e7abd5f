// The engine: typed task state and the tracer's parts, seen from outside.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdio.h>

#include <map>
#include <regex>
#include <string>

#include "harness.h"

namespace
{

// Tasks parked by different handler families (a read, a write into a full pipe, a
// sigtimedwait), each keeping its own state in its own wait: the deadlock report names
// every task's own wait, with its own descriptor.
TEST(CoreDeadlock, ReportNamesEachTasksOwnWaitAcrossHandlerFamilies)
{
	RunOptions opts;
	opts.timeout_s = 60;
	Child c(UnderDetrun({}, { std::string(GUEST_DIR) + "/core_deadlock_kinds" }), opts);
	bool reported = c.WaitForOutput("waiting for a signal from outside", 30, true);
	std::string err = c.Err();
	c.Signal(SIGTERM);
	RunResult r = c.Finish();
	ASSERT_TRUE(reported) << r.Describe();
	int rfd = -1, wfd = -1;
	ASSERT_EQ(sscanf(r.out.c_str(), "reader on fd %d, writer on fd %d", &rfd, &wfd), 2)
		<< r.Describe();
	std::map<int, std::string> wait_of_task;
	std::regex line("task ([0-9]+) \\(tid [0-9]+\\): ([^\n]*)");
	for (std::sregex_iterator it(err.begin(), err.end(), line), end; it != end; ++it)
		wait_of_task[std::stoi((*it)[1])] = (*it)[2];
	EXPECT_EQ(wait_of_task[2], "read fd " + std::to_string(rfd)) << err;
	EXPECT_EQ(wait_of_task[3], "write fd " + std::to_string(wfd)) << err;
	EXPECT_EQ(wait_of_task[4], "sigtimedwait") << err;
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
}

} // namespace
