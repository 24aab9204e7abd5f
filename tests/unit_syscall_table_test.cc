// The syscall table is the single source for the filter, the dispatcher and the names:
// check it is complete and consistent with the kernel headers.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <set>
#include <string>

extern "C" {
#include "supervisor/syscall_table.h"
}

TEST(SyscallTable, NumbersAreUniqueAndNamed)
{
	std::set<long> seen;
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		EXPECT_TRUE(seen.insert(e.nr).second) << e.name << " listed twice";
		EXPECT_STREQ(syscall_name(e.nr), e.name);
		EXPECT_EQ(syscall_lookup(e.nr), &e);
		EXPECT_NE(e.reason, nullptr);
		EXPECT_GT(std::string(e.reason).size(), 10u) << e.name << " needs a reason";
	}
}

TEST(SyscallTable, EveryStoppingRowHasAHandler)
{
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		if (e.cls != SC_ALLOW) {
			EXPECT_NE(e.handler, &sys_none) << e.name << " stops but has no handler";
		}
	}
}

TEST(SyscallTable, BlockingCallsNeverRunFreely)
{
	// Calls that can sleep in the kernel must stop at the tracer, or one sleeping task
	// would block the whole serial group.
	const long must_stop[] = { __NR_read, __NR_write, __NR_futex, __NR_wait4, __NR_waitid,
				   __NR_poll, __NR_ppoll, __NR_select, __NR_pselect6,
				   __NR_epoll_wait, __NR_epoll_pwait, __NR_nanosleep,
				   __NR_clock_nanosleep, __NR_pause, __NR_rt_sigsuspend,
				   __NR_accept, __NR_accept4, __NR_recvfrom, __NR_sendto,
				   __NR_flock, __NR_clone, __NR_clone3, __NR_fork, __NR_vfork };
	for (long nr : must_stop) {
		const syscall_entry *e = syscall_lookup(nr);
		ASSERT_NE(e, nullptr) << nr;
		EXPECT_NE(e->cls, SC_ALLOW) << e->name;
	}
}

TEST(SyscallTable, UnknownNumbersHaveAPrintableName)
{
	EXPECT_STREQ(syscall_name(999), "syscall_999");
	EXPECT_EQ(syscall_lookup(-1), nullptr);
}

TEST(SyscallTable, StopOnValuesWidenRowsThatRunFreely)
{
	// STOP_ON makes one request of a freely running call stop: the row must run freely
	// otherwise (ALLOW, or EXTERNAL without a shim), have a handler for the stop, and keep
	// its values on one argument, few enough for the filter's masked comparisons.
	for (size_t i = 0; i < syscall_stop_values_len; i++) {
		const syscall_stop_value &v = syscall_stop_values[i];
		const syscall_entry *e = syscall_lookup(v.nr);
		ASSERT_NE(e, nullptr) << v.nr;
		EXPECT_TRUE(e->cls == SC_EXTERNAL) << e->name << ": an ALLOW row has no handler";
		EXPECT_NE(e->handler, &sys_none) << e->name;
		int n = 0;
		for (size_t j = 0; j < syscall_stop_values_len; j++)
			if (syscall_stop_values[j].nr == v.nr) {
				EXPECT_EQ(syscall_stop_values[j].arg, v.arg) << e->name;
				n++;
			}
		EXPECT_LE(n, 8) << e->name;
		for (size_t j = 0; j < syscall_conditions_len; j++)
			EXPECT_NE(syscall_conditions[j].nr, v.nr) << e->name << " has STOP_WHEN too";
	}
}
