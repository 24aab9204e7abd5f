// The syscall table is the single source for the filter, the dispatcher and the names:
// check it is complete and consistent with the kernel headers, and that the lists the code
// derives from it (receives, sends, flags and descriptor arguments) are what the rows say.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

extern "C" {
#include "handlers/binding.h"
#include "syscalls/syscall_table.h"
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
		if (!syscall_runs_freely(&e, false)) {
			EXPECT_NE(handler_of(e.nr), &sys_none)
				<< e.name << " stops but has no handler";
		}
	}
}

// The handlers' binding (handlers/binding.c) is derived from the same rows: every row has
// its handler there, and a number without a row has none (it is refused as unsupported).
TEST(SyscallTable, HandlersAreBoundByNumberToEveryRowAndNoOther)
{
	for (long nr = -1; nr < 1024; nr++)
		EXPECT_EQ(handler_of(nr) != nullptr, syscall_lookup(nr) != nullptr)
			<< syscall_name(nr);
}

TEST(SyscallTable, BlockingCallsNeverRunFreely)
{
	// Calls that can sleep in the kernel must stop at the tracer, or one sleeping task
	// would block the whole serial group.
	const long must_stop[] = { __NR_read,
				   __NR_write,
				   __NR_futex,
				   __NR_wait4,
				   __NR_waitid,
				   __NR_poll,
				   __NR_ppoll,
				   __NR_select,
				   __NR_pselect6,
				   __NR_epoll_wait,
				   __NR_epoll_pwait,
				   __NR_nanosleep,
				   __NR_clock_nanosleep,
				   __NR_pause,
				   __NR_rt_sigsuspend,
				   __NR_accept,
				   __NR_accept4,
				   __NR_recvfrom,
				   __NR_sendto,
				   __NR_flock,
				   __NR_clone,
				   __NR_clone3,
				   __NR_fork,
				   __NR_vfork };
	for (long nr : must_stop) {
		const syscall_entry *e = syscall_lookup(nr);
		ASSERT_NE(e, nullptr) << nr;
		EXPECT_FALSE(syscall_runs_freely(e, false)) << e->name;
	}
}

TEST(SyscallTable, UnknownNumbersHaveAPrintableName)
{
	EXPECT_STREQ(syscall_name(999), "syscall_999");
	EXPECT_EQ(syscall_lookup(-1), nullptr);
}

TEST(SyscallTable, RowsNarrowedByValueStopForTheirValues)
{
	// STOP_WHEN_EQ rows: the filter allows every other value, so the row itself must stop
	// and have a handler, and a value is listed once.
	std::set<std::pair<long, int>> seen;
	for (size_t i = 0; i < syscall_values_len; i++) {
		const syscall_value &v = syscall_values[i];
		const syscall_entry *e = syscall_lookup(v.nr);
		ASSERT_NE(e, nullptr) << v.nr;
		EXPECT_FALSE(syscall_runs_freely(e, false)) << e->name;
		EXPECT_NE(handler_of(e->nr), &sys_none) << e->name;
		EXPECT_TRUE(seen.insert({ v.nr, v.value }).second) << e->name << " " << v.value;
		for (size_t j = 0; j < syscall_conditions_len; j++)
			EXPECT_NE(syscall_conditions[j].nr, v.nr)
				<< e->name << ": STOP_WHEN and STOP_WHEN_EQ on one row";
	}
}

// ---- the table against the kernel headers ----------------------------------------------

// Every `#define __NR_name N` of <asm/unistd_64.h>, read from the header the build uses.
static std::map<std::string, long> HeaderNumbers()
{
	std::map<std::string, long> nrs;
	std::ifstream in(UNISTD_64_H);
	std::string line;
	std::regex def("#define __NR_(\\w+)\\s+(\\d+)");
	std::smatch m;
	while (std::getline(in, line))
		if (std::regex_search(line, m, def))
			nrs[m[1]] = std::stol(m[2]);
	return nrs;
}

TEST(SyscallTable, MatchesTheKernelHeaders)
{
	std::map<std::string, long> header = HeaderNumbers();
	ASSERT_GT(header.size(), 300u) << "cannot read " << UNISTD_64_H;
	for (const auto &[name, nr] : header) {
		const syscall_entry *e = syscall_lookup(nr);
		ASSERT_NE(e, nullptr) << "__NR_" << name << " (" << nr << ") has no row";
		EXPECT_EQ(e->name, name) << nr;
	}
	// Rows past the headers are calls of newer kernels, at their ABI numbers
	// (syscall_table.h); a number without a row fails with ENOSYS.
	const std::map<std::string, long> newer = {
		{ "cachestat", 451 },         { "fchmodat2", 452 },
		{ "map_shadow_stack", 453 },  { "futex_wake", 454 },
		{ "futex_wait", 455 },        { "futex_requeue", 456 },
		{ "statmount", 457 },         { "listmount", 458 },
		{ "lsm_get_self_attr", 459 }, { "lsm_set_self_attr", 460 },
		{ "lsm_list_modules", 461 },  { "mseal", 462 },
		{ "setxattrat", 463 },        { "getxattrat", 464 },
		{ "listxattrat", 465 },       { "removexattrat", 466 },
		{ "open_tree_attr", 467 },    { "file_getattr", 468 },
		{ "file_setattr", 469 },
	};
	long last = 0;
	for (const auto &[name, nr] : header)
		last = std::max(last, nr);
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		if (header.count(e.name))
			continue;
		ASSERT_EQ(newer.count(e.name), 1u) << e.name << " is not in " << UNISTD_64_H;
		EXPECT_EQ(e.nr, newer.at(e.name)) << e.name;
		EXPECT_GT(e.nr, last) << e.name << " is older than the headers but not in them";
	}
	for (const auto &[name, nr] : newer)
		EXPECT_NE(syscall_lookup(nr), nullptr) << name << " (" << nr << ") has no row";
}

// The kernel's own description of each call's arguments, where tracefs shows it
// (/sys/kernel/tracing/events/syscalls/sys_enter_NAME/format): one field per argument.
TEST(SyscallTable, ArgumentCountsMatchTheRunningKernel)
{
	const std::string dir = "/sys/kernel/tracing/events/syscalls/";
	if (!std::ifstream(dir + "sys_enter_read/format"))
		GTEST_SKIP() << "tracefs is not mounted at /sys/kernel/tracing";
	const std::map<std::string, std::string> kernel_name = {
		{ "stat", "newstat" },   { "lstat", "newlstat" },      { "fstat", "newfstat" },
		{ "uname", "newuname" }, { "sendfile", "sendfile64" }, { "umount2", "umount" }
	};
	int compared = 0;
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		auto alias = kernel_name.find(e.name);
		std::ifstream f(dir + "sys_enter_" +
				(alias == kernel_name.end() ? e.name : alias->second) + "/format");
		if (!f)
			continue; // not traceable on this kernel (rt_sigreturn, removed calls)
		int fields = 0;
		std::string line;
		while (std::getline(f, line))
			fields += line.find("field:") != std::string::npos &&
				  line.find("offset:") != std::string::npos &&
				  std::stoi(line.substr(line.find("offset:") + 7)) >= 16;
		EXPECT_EQ(e.nargs, fields) << e.name;
		compared++;
	}
	EXPECT_GT(compared, 300);
}

TEST(SyscallTable, ArgumentKindsAndOutputsAreWellFormed)
{
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		const std::string kinds = e.kinds, args = kinds.substr(0, e.nargs);
		// The arguments' letters, then ">d" for a call that returns a new descriptor.
		EXPECT_TRUE(kinds == args || kinds == args + ">d") << e.name << " " << e.kinds;
		EXPECT_LE(e.nargs, 6) << e.name;
		EXPECT_EQ(args.find_first_not_of("diuxmpsPGWODacrlkzKntTVA"), std::string::npos)
			<< e.name << " " << e.kinds;
		// One of each role a handler reads as "the" argument.
		for (const char *one : { "m", "n", "K", "z", "tTVA", "crl" })
			EXPECT_LE(std::count_if(args.begin(), args.end(),
						[&](char k) { return strchr(one, k); }),
				  one == std::string("crl") ? 2 : 1)
				<< e.name << " " << e.kinds << ": " << one;
		// A directory descriptor stands right before the path it anchors.
		for (size_t i = 0; i < args.size(); i++)
			if (args[i] == 'a') {
				EXPECT_TRUE(i + 1 < args.size() && strchr("scrl", args[i + 1]))
					<< e.name << " " << e.kinds;
			}
		for (const syscall_output &o : e.out) {
			if (o.shape == SHAPE_NONE)
				break;
			ASSERT_LT(o.arg, e.nargs) << e.name;
			EXPECT_LT(o.count_arg, e.nargs) << e.name;
			// A region is at a pointer argument (an ioctl's at its untyped argument).
			if (o.shape == SHAPE_IOCTL) {
				EXPECT_EQ(e.kinds[o.arg], 'x') << e.name;
			} else {
				EXPECT_TRUE(strchr("pkKTVA", e.kinds[o.arg])) << e.name;
			}
		}
	}
}

TEST(SyscallTable, EveryCallThatNamesAProcessIsChecked)
{
	// Calls whose argument names another process, process group or user: their kinds
	// (P G W O D) make the membership check run before the handler (sys_reach.c). wait4
	// and waitid name only children, who are members; ptrace checks its target itself
	// (sys_ptrace.c: a member, or EPERM) and perf_event_open is refused whole.
	const char *naming[] = { "kill",
				 "tkill",
				 "tgkill",
				 "rt_sigqueueinfo",
				 "rt_tgsigqueueinfo",
				 "pidfd_send_signal",
				 "pidfd_open",
				 "pidfd_getfd",
				 "process_vm_readv",
				 "process_vm_writev",
				 "process_madvise",
				 "process_mrelease",
				 "prlimit64",
				 "getpriority",
				 "setpriority",
				 "ioprio_get",
				 "ioprio_set",
				 "sched_setparam",
				 "sched_getparam",
				 "sched_setscheduler",
				 "sched_getscheduler",
				 "sched_rr_get_interval",
				 "sched_setaffinity",
				 "sched_getaffinity",
				 "sched_setattr",
				 "sched_getattr",
				 "kcmp",
				 "migrate_pages",
				 "move_pages",
				 "get_robust_list",
				 "getpgid",
				 "getsid",
				 "setpgid",
				 "setns" };
	for (const char *name : naming) {
		const syscall_entry *e = nullptr;
		for (size_t i = 0; i < syscall_table_len && !e; i++)
			if (!strcmp(syscall_table[i].name, name))
				e = &syscall_table[i];
		ASSERT_NE(e, nullptr) << name;
		EXPECT_TRUE(syscall_names_process(e)) << name << " names a process unchecked";
	}
	EXPECT_FALSE(syscall_names_process(syscall_lookup(__NR_getpid)));
	// A "who" follows the "which" that says what it is.
	for (size_t i = 0; i < syscall_table_len; i++) {
		const char *w = strpbrk(syscall_table[i].kinds, "WO");
		if (w) {
			EXPECT_TRUE(w > syscall_table[i].kinds && w[-1] == 'x')
				<< syscall_table[i].name;
		}
	}
}

// ---- the lists the code derives from the table -------------------------------------------

static std::set<std::string> Rows(bool (*pick)(const syscall_entry &))
{
	std::set<std::string> names;
	for (size_t i = 0; i < syscall_table_len; i++)
		if (pick(syscall_table[i]))
			names.insert(syscall_table[i].name);
	return names;
}

TEST(SyscallTable, DerivedListsAreWhatTheRowsSay)
{
	using S = std::set<std::string>;
	// Receives: the calls whose output is data from outside (log printing, record).
	EXPECT_EQ(Rows([](const syscall_entry &e) { return syscall_reads_data(&e); }),
		  (S{ "read", "readv", "recvfrom", "recvmsg", "recvmmsg" }));
	// Sends digested for replay: sendmmsg is one (it was left out of the old hand list).
	EXPECT_EQ(Rows([](const syscall_entry &e) { return syscall_sends_memory(&e); }),
		  (S{ "write", "writev", "sendto", "sendmsg", "sendmmsg" }));
	EXPECT_EQ(Rows([](const syscall_entry &e) { return syscall_sends(&e); }),
		  (S{ "write", "writev", "sendto", "sendmsg", "sendmmsg", "sendfile" }));
	// MSG_* flags: where MSG_DONTWAIT and MSG_NOSIGNAL are read.
	EXPECT_EQ(Rows([](const syscall_entry &e) { return syscall_msg_flags_arg(&e) >= 0; }),
		  (S{ "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg" }));
	EXPECT_EQ(syscall_msg_flags_arg(syscall_lookup(__NR_sendmsg)), 2);
	EXPECT_EQ(syscall_msg_flags_arg(syscall_lookup(__NR_sendmmsg)), 3);
	// The descriptor a shim call is about: argument 0, none for the calls on many
	// descriptors or none.
	for (long nr : { __NR_read, __NR_sendfile, __NR_ioctl, __NR_accept4, __NR_epoll_wait })
		EXPECT_EQ(syscall_fd_arg(syscall_lookup(nr)), 0) << syscall_name(nr);
	for (long nr : { __NR_poll, __NR_ppoll, __NR_select, __NR_pselect6, __NR_clock_gettime,
			 __NR_gettimeofday, __NR_time })
		EXPECT_EQ(syscall_fd_arg(syscall_lookup(nr)), -1) << syscall_name(nr);
	EXPECT_EQ(syscall_fd_arg(nullptr), -1);
}

// ---- argument roles: the facts handlers read from the row -----------------------------

static const syscall_entry *Row(const char *name)
{
	for (size_t i = 0; i < syscall_table_len; i++)
		if (!strcmp(syscall_table[i].name, name))
			return &syscall_table[i];
	ADD_FAILURE() << name << " has no row";
	return nullptr;
}

TEST(SyscallTable, EveryCallThatTakesASigsetHasItsRole)
{
	using S = std::set<std::string>;
	// The calls that take a signal mask (sigset_t, its size beside it): the waits install
	// it (sys_poll.c, sys_signal.c, an outside wait run as ppoll in sys_external.c).
	EXPECT_EQ(Rows([](const syscall_entry &e) { return syscall_sigset(&e).arg >= 0; }),
		  (S{ "rt_sigprocmask", "rt_sigpending", "rt_sigsuspend", "rt_sigtimedwait",
		      "ppoll", "pselect6", "epoll_pwait", "epoll_pwait2", "signalfd",
		      "signalfd4" }));
	// A mask comes with its size, but for pselect6's pair, which holds both; a size
	// without a mask is rt_sigaction's, whose masks are inside struct sigaction.
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		struct syscall_sigset s = syscall_sigset(&e);
		bool size = strchr(e.kinds, 'z') != nullptr;
		if (s.arg >= 0) {
			EXPECT_EQ(size, !s.indirect) << e.name;
			EXPECT_EQ(s.size_arg >= 0, !s.indirect) << e.name;
		} else if (size) {
			EXPECT_NE(syscall_irregular(e.nr), nullptr)
				<< e.name << ": a size, no mask";
		}
	}
	// The positions the handlers knew by name before.
	struct {
		const char *name;
		int arg, size_arg;
		bool indirect;
	} known[] = { { "ppoll", 3, 4, false },         { "epoll_pwait", 4, 5, false },
		      { "epoll_pwait2", 4, 5, false },  { "pselect6", 5, -1, true },
		      { "rt_sigsuspend", 0, 1, false }, { "rt_sigtimedwait", 0, 3, false } };
	for (const auto &k : known) {
		struct syscall_sigset s = syscall_sigset(Row(k.name));
		EXPECT_EQ(s.arg, k.arg) << k.name;
		EXPECT_EQ(s.size_arg, k.size_arg) << k.name;
		EXPECT_EQ(s.indirect, k.indirect) << k.name;
	}
	EXPECT_EQ(syscall_sigset(nullptr).arg, -1);
}

TEST(SyscallTable, EveryWaitWithATimeoutHasItsRole)
{
	// Every row whose handler parks a poll or epoll wait turns its timeout into a
	// deadline and, waiting outside, rewrites it to zero: each must say where it is.
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		if (handler_of(e.nr) == &sys_poll || handler_of(e.nr) == &sys_epoll_wait) {
			EXPECT_GE(syscall_timeout(&e).arg, 0) << e.name;
		}
	}
	struct {
		const char *name;
		int arg;
		timeout_form form;
	} known[] = { { "poll", 2, TIMEOUT_MS },
		      { "ppoll", 2, TIMEOUT_TIMESPEC },
		      { "select", 4, TIMEOUT_TIMEVAL },
		      { "pselect6", 4, TIMEOUT_TIMESPEC },
		      { "epoll_wait", 3, TIMEOUT_MS },
		      { "epoll_pwait", 3, TIMEOUT_MS },
		      { "epoll_pwait2", 3, TIMEOUT_TIMESPEC },
		      { "rt_sigtimedwait", 2, TIMEOUT_TIMESPEC },
		      { "semtimedop", 3, TIMEOUT_TIMESPEC },
		      { "mq_timedsend", 4, TIMEOUT_ABS_REALTIME },
		      { "mq_timedreceive", 4, TIMEOUT_ABS_REALTIME },
		      { "recvmmsg", 4, TIMEOUT_TIMESPEC } };
	std::set<std::string> named;
	for (const auto &k : known) {
		struct syscall_timeout to = syscall_timeout(Row(k.name));
		EXPECT_EQ(to.arg, k.arg) << k.name;
		EXPECT_EQ(to.form, k.form) << k.name;
		named.insert(k.name);
	}
	EXPECT_EQ(Rows([](const syscall_entry &e) { return syscall_timeout(&e).arg >= 0; }), named);
	EXPECT_EQ(syscall_timeout(Row("semop")).form, TIMEOUT_NONE);
}

// Page ownership hands a call the shared pages its pointer arguments point into: the row
// says which arguments are pointers; a count, a descriptor or poll's milliseconds are not.
TEST(SyscallTable, PointerArgumentsComeFromTheKinds)
{
	EXPECT_FALSE(syscall_arg_is_pointer(Row("read"), 0));
	EXPECT_TRUE(syscall_arg_is_pointer(Row("read"), 1));
	EXPECT_FALSE(syscall_arg_is_pointer(Row("read"), 2));
	EXPECT_TRUE(syscall_arg_is_pointer(Row("openat"), 1));
	EXPECT_TRUE(syscall_arg_is_pointer(Row("pselect6"), 4));
	EXPECT_TRUE(syscall_arg_is_pointer(Row("pselect6"), 5));
	EXPECT_TRUE(syscall_arg_is_pointer(Row("ppoll"), 2));
	EXPECT_FALSE(syscall_arg_is_pointer(Row("poll"), 2));
	EXPECT_FALSE(syscall_arg_is_pointer(Row("read"), 3)); // past the row's arguments
	EXPECT_FALSE(syscall_arg_is_pointer(nullptr, 0));
}

TEST(SyscallTable, SignalsSentSayTheirNumberAndTarget)
{
	// sys_signal_send reads the signal and its target from the row: every row it handles
	// must give both (tgkill's signal is its third argument, kill's its second).
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		if (handler_of(e.nr) != &sys_signal_send)
			continue;
		EXPECT_GE(syscall_signal_arg(&e), 0) << e.name;
		EXPECT_EQ(syscall_target_arg(&e), 0) << e.name;
	}
	EXPECT_EQ(syscall_signal_arg(Row("kill")), 1);
	EXPECT_EQ(syscall_signal_arg(Row("tkill")), 1);
	EXPECT_EQ(syscall_signal_arg(Row("tgkill")), 2);
	EXPECT_EQ(syscall_signal_arg(Row("rt_sigqueueinfo")), 1);
	EXPECT_EQ(syscall_signal_arg(Row("rt_tgsigqueueinfo")), 2);
	EXPECT_EQ(syscall_signal_arg(Row("pidfd_send_signal")), 1);
	EXPECT_EQ(Row("pidfd_send_signal")->kinds[0], 'D'); // a descriptor, not a pid
	EXPECT_EQ(syscall_signal_arg(Row("getpid")), -1);
}

TEST(SyscallTable, DirectoryChangesAreTheRowsEntries)
{
	// sys_dir_change stamps the directories of the entries the row names (c r l) and
	// the inode it creates or moves: every row it handles names one, and no other row.
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		EXPECT_EQ(syscall_entries(&e).n > 0, handler_of(e.nr) == &sys_dir_change) << e.name;
	}
	// The table of paths sys_files.c kept by hand before.
	struct {
		const char *name;
		int dirfd[2], path[2];
		bool creates, moves_inode, new_inode;
	} known[] = {
		{ "mkdir", { -1, -1 }, { 0, -1 }, true, false, true },
		{ "mkdirat", { 0, -1 }, { 1, -1 }, true, false, true },
		{ "mknod", { -1, -1 }, { 0, -1 }, true, false, true },
		{ "mknodat", { 0, -1 }, { 1, -1 }, true, false, true },
		{ "rmdir", { -1, -1 }, { 0, -1 }, false, false, false },
		{ "unlink", { -1, -1 }, { 0, -1 }, false, false, false },
		{ "unlinkat", { 0, -1 }, { 1, -1 }, false, false, false },
		{ "symlink", { -1, -1 }, { 1, -1 }, true, false, true },
		{ "symlinkat", { 1, -1 }, { 2, -1 }, true, false, true },
		{ "link", { -1, -1 }, { 1, -1 }, true, false, false },
		{ "linkat", { 2, -1 }, { 3, -1 }, true, false, false },
		{ "rename", { -1, -1 }, { 0, 1 }, false, true, false },
		{ "renameat", { 0, 2 }, { 1, 3 }, false, true, false },
		{ "renameat2", { 0, 2 }, { 1, 3 }, false, true, false },
	};
	for (const auto &k : known) {
		const syscall_entry *e = Row(k.name);
		struct syscall_entries c = syscall_entries(e);
		ASSERT_EQ(c.n, k.path[1] >= 0 ? 2 : 1) << k.name;
		for (int i = 0; i < c.n; i++) {
			EXPECT_EQ(c.path[i], k.path[i]) << k.name;
			EXPECT_EQ(syscall_dirfd_arg(e, c.path[i]), k.dirfd[i]) << k.name;
		}
		EXPECT_EQ(c.creates, k.creates) << k.name;
		EXPECT_EQ(c.moves_inode, k.moves_inode) << k.name;
		EXPECT_EQ(c.new_inode, k.new_inode) << k.name;
	}
	// Every *at call anchors its path at its directory descriptor.
	EXPECT_EQ(syscall_dirfd_arg(Row("openat"), 1), 0);
	EXPECT_EQ(syscall_dirfd_arg(Row("open"), 0), -1);
	EXPECT_EQ(syscall_dirfd_arg(Row("fanotify_mark"), 4), 3);
}

TEST(SyscallTable, NewDescriptorsAndWhatLeavesTheNodeAreTheRowsSay)
{
	using S = std::set<std::string>;
	// An outside call's result registered as an outside descriptor (sys_external.c): the
	// socket and the accepts it had by hand are among the rows that return one.
	S fds = Rows([](const syscall_entry &e) { return syscall_returns_fd(&e); });
	for (const char *name : { "socket", "accept", "accept4" })
		EXPECT_EQ(fds.count(name), 1u) << name;
	EXPECT_EQ(fds, (S{ "open",
			   "creat",
			   "openat",
			   "openat2",
			   "open_by_handle_at",
			   "socket",
			   "accept",
			   "accept4",
			   "dup",
			   "dup2",
			   "dup3",
			   "epoll_create",
			   "epoll_create1",
			   "eventfd",
			   "eventfd2",
			   "signalfd",
			   "signalfd4",
			   "timerfd_create",
			   "inotify_init",
			   "inotify_init1",
			   "fanotify_init",
			   "memfd_create",
			   "memfd_secret",
			   "userfaultfd",
			   "perf_event_open",
			   "pidfd_open",
			   "pidfd_getfd",
			   "mq_open",
			   "io_uring_setup",
			   "fsopen",
			   "fsmount",
			   "fspick",
			   "open_tree",
			   "open_tree_attr",
			   "landlock_create_ruleset" }));
	// Replicate's leader syncs the stream before anything leaves the node: the sends
	// (syscall_sends) and connect and shutdown, its old hand list.
	S out = Rows([](const syscall_entry &e) { return syscall_lets_out(&e); });
	S old = Rows([](const syscall_entry &e) { return syscall_sends(&e); });
	old.insert({ "shutdown", "connect" });
	EXPECT_EQ(out, old);
	EXPECT_FALSE(syscall_lets_out(Row("recvfrom")));
	EXPECT_FALSE(syscall_lets_out(nullptr));
}

TEST(SyscallTable, IrregularRowsSayWhy)
{
	// A row whose roles depend on another argument's value lists the reason; its
	// handler (or nobody, for an ALLOW row) decodes them by hand.
	int n = 0;
	for (size_t i = 0; i < syscall_table_len; i++) {
		const char *why = syscall_irregular(syscall_table[i].nr);
		if (!why)
			continue;
		n++;
		EXPECT_GT(strlen(why), 20u) << syscall_table[i].name;
	}
	EXPECT_GE(n, 5);
	EXPECT_NE(syscall_irregular(__NR_futex), nullptr);
	EXPECT_EQ(syscall_irregular(__NR_read), nullptr);
}

TEST(SyscallTable, DataDirectionAgreesWithTheOutputs)
{
	// A receive takes its data budget from a data region; a row with a data region is a
	// receive. (Adding a receive without its outputs would record nothing.)
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		bool data_region = false;
		for (const syscall_output &o : e.out)
			data_region |= o.shape == SHAPE_BUF || o.shape == SHAPE_IOV ||
				       o.shape == SHAPE_MSG || o.shape == SHAPE_MMSG;
		EXPECT_EQ(data_region, syscall_reads_data(&e)) << e.name;
		if (syscall_sends(&e)) {
			EXPECT_FALSE(syscall_runs_freely(&e, false))
				<< e.name << " sends but never stops";
		}
	}
}

// ---- calls that can sleep ----------------------------------------------------------------

TEST(SyscallTable, EveryCallThatCanSleepStops)
{
	// Calls that can sleep in the kernel until another task (or the outside) acts. One that
	// ran freely would sleep with the group's only turn: every one must stop.
	const char *sleeps[] = {
		"read",
		"readv",
		"write",
		"writev",
		"open",
		"openat",
		"openat2",
		"creat",
		"preadv2",
		"pwritev2",
		"recvfrom",
		"recvmsg",
		"recvmmsg",
		"sendto",
		"sendmsg",
		"sendmmsg",
		"accept",
		"accept4",
		"connect",
		"sendfile",
		"splice",
		"tee",
		"vmsplice",
		"copy_file_range",
		"poll",
		"ppoll",
		"select",
		"pselect6",
		"epoll_wait",
		"epoll_pwait",
		"epoll_pwait2",
		"futex",
		"futex_waitv",
		"wait4",
		"waitid",
		"nanosleep",
		"clock_nanosleep",
		"pause",
		"rt_sigsuspend",
		"rt_sigtimedwait",
		"flock",
		"fcntl",
		"semop",
		"semtimedop",
		"msgsnd",
		"msgrcv",
		"mq_timedsend",
		"mq_timedreceive",
		"ioctl",
		"syslog",
		"userfaultfd",
		"io_setup",
		"io_uring_setup",
		"io_uring_enter",
		"clone",
		"clone3",
		"fork",
		"vfork",
		"execve",
		"execveat",
		"exit",
		"exit_group",
		"seccomp",
		"ptrace",
	};
	for (const char *name : sleeps) {
		const syscall_entry *e = nullptr;
		for (size_t i = 0; i < syscall_table_len && !e; i++)
			if (!strcmp(syscall_table[i].name, name))
				e = &syscall_table[i];
		ASSERT_NE(e, nullptr) << name;
		EXPECT_FALSE(syscall_runs_freely(e, false)) << name << " can sleep but runs freely";
	}
	// The free-running calls that wait at all wait for the disk or the kernel alone,
	// never for another task: their rows say so.
	for (const char *name :
	     { "fsync", "fdatasync", "sync", "syncfs", "sync_file_range", "msync" }) {
		const syscall_entry *e = nullptr;
		for (size_t i = 0; i < syscall_table_len && !e; i++)
			if (!strcmp(syscall_table[i].name, name))
				e = &syscall_table[i];
		ASSERT_NE(e, nullptr) << name;
		std::string reason = e->reason;
		EXPECT_TRUE(reason.find("never for another task") != std::string::npos ||
			    reason.find("without waiting for another task") != std::string::npos)
			<< name << ": " << e->reason;
	}
}

TEST(SyscallTable, AllowRowsHaveTheirOwnReasons)
{
	// Each row's reason is about its call: no one sentence shared by a crowd of rows.
	std::map<std::string, int> uses;
	for (size_t i = 0; i < syscall_table_len; i++)
		if (syscall_runs_freely(&syscall_table[i], false))
			uses[syscall_table[i].reason]++;
	for (const auto &[reason, n] : uses)
		EXPECT_LE(n, 20) << "\"" << reason << "\" is shared by " << n << " rows";
}

TEST(SyscallTable, TraceShowsEachCallsOwnArguments)
{
	const uint64_t args[6] = { 3, 0x1000, 64, 7, 8, 9 };
	char buf[256];
	syscall_format_call(buf, sizeof(buf), __NR_read, args, nullptr, nullptr);
	EXPECT_STREQ(buf, "read(3, 0x1000, 64)");
	syscall_format_call(buf, sizeof(buf), __NR_getpid, args, nullptr, nullptr);
	EXPECT_STREQ(buf, "getpid()");
	const uint64_t open_args[6] = { (uint64_t)-100, 0x2000, 0x80000, 0, 0, 0 };
	auto reader = [](void *, uint64_t addr, char *out, size_t n) {
		snprintf(out, n, "/etc/%s", addr == 0x2000 ? "hosts" : "?");
		return true;
	};
	syscall_format_call(buf, sizeof(buf), __NR_openat, open_args, reader, nullptr);
	EXPECT_STREQ(buf, "openat(-100, \"/etc/hosts\", 0x80000, 0)");
	// The result's role is not an argument: socket shows its three.
	syscall_format_call(buf, sizeof(buf), __NR_socket, args, nullptr, nullptr);
	EXPECT_STREQ(buf, "socket(3, 0x1000, 0x40)");
	syscall_format_call(buf, sizeof(buf), 999, args, nullptr, nullptr);
	EXPECT_STREQ(buf, "syscall_999(0x3, 0x1000, 0x40, 0x7, 0x8, 0x9)");
	syscall_format_call(buf, 8, __NR_read, args, nullptr, nullptr); // cut short, terminated
	EXPECT_STREQ(buf, "read(3,");
}

// ---- processes in parallel ---------------------------------------------------------------

TEST(SyscallTable, LocalRowsKeepToTheCaller)
{
	// With processes in parallel only LOCAL rows run freely: a call whose object another
	// process can see must not be LOCAL. These act on files, open file descriptions, IPC
	// objects, other processes, or close a descriptor (a pipe's last close is the peer's
	// EOF).
	for (const char *name : { "close",
				  "close_range",
				  "dup2",
				  "dup3",
				  "lseek",
				  "pread64",
				  "preadv",
				  "msync",
				  "fsync",
				  "fdatasync",
				  "chmod",
				  "fchmod",
				  "chown",
				  "fchown",
				  "fchmodat",
				  "setxattr",
				  "fsetxattr",
				  "getxattr",
				  "epoll_ctl",
				  "shmget",
				  "shmctl",
				  "shmdt",
				  "semget",
				  "msgget",
				  "mq_open",
				  "mq_unlink",
				  "mq_notify",
				  "setpgid",
				  "setsid",
				  "getpgid",
				  "getppid",
				  "setpriority",
				  "prlimit64",
				  "process_vm_readv",
				  "process_vm_writev",
				  "statfs",
				  "chdir",
				  "getcwd",
				  "kcmp",
				  "pidfd_open" }) {
		const syscall_entry *e = nullptr;
		for (size_t i = 0; i < syscall_table_len && !e; i++)
			if (!strcmp(syscall_table[i].name, name))
				e = &syscall_table[i];
		ASSERT_NE(e, nullptr) << name;
		EXPECT_EQ(e->cls, SC_ALLOW) << name << " runs freely with processes in parallel";
		EXPECT_TRUE(syscall_runs_freely(e, false)) << name;
		EXPECT_FALSE(syscall_runs_freely(e, true)) << name;
	}
	// A signalfd is seen by whoever reads it; making one stops in serial runs too, so that
	// detrun knows the group may hold one (epoll sets are then judged item by item).
	for (const char *name : { "signalfd", "signalfd4" }) {
		const syscall_entry *e = nullptr;
		for (size_t i = 0; i < syscall_table_len && !e; i++)
			if (!strcmp(syscall_table[i].name, name))
				e = &syscall_table[i];
		ASSERT_NE(e, nullptr) << name;
		EXPECT_EQ(e->cls, SC_SERIALIZE) << name;
		EXPECT_FALSE(syscall_runs_freely(e, false)) << name;
	}
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		if (e.cls != SC_LOCAL)
			continue;
		EXPECT_EQ(handler_of(e.nr), &sys_none) << e.name << ": a LOCAL row never stops";
		EXPECT_TRUE(syscall_runs_freely(&e, true)) << e.name;
		EXPECT_FALSE(syscall_lets_out(&e)) << e.name;
		EXPECT_EQ(syscall_entries(&e).n, 0) << e.name << " changes directory entries";
		// A path is looked up in the file system others change; memfd_create's string is
		// a name, and calls the kernel no longer has read nothing.
		bool gone = strstr(e.reason, "fails at once with ENOSYS") != nullptr;
		if (strcmp(e.name, "memfd_create") && !gone) {
			EXPECT_LT(syscall_path_arg(&e), 0) << e.name << " looks up a path";
		}
	}
	EXPECT_STREQ(syscall_class_name(SC_LOCAL), "local");
}

TEST(SyscallTable, SharedMappingsStopWithProcessesInParallel)
{
	// mmap with MAP_SHARED (MAP_SHARED_VALIDATE has its bit) and every shmat stop in
	// parallel: the memory domains merge at their exit.
	bool mmap_seen = false, shmat_seen = false;
	for (size_t i = 0; i < syscall_shared_conditions_len; i++) {
		const syscall_condition &c = syscall_shared_conditions[i];
		bool narrowed = false;
		for (size_t j = 0; j < syscall_conditions_len; j++)
			narrowed |= syscall_conditions[j].nr == c.nr;
		EXPECT_TRUE(narrowed)
			<< syscall_name(c.nr) << ": STOP_WHEN_SHARED widens STOP_WHEN";
		if (c.nr == __NR_mmap) {
			mmap_seen = true;
			EXPECT_EQ(c.arg, 3);
			EXPECT_TRUE(c.mask & MAP_SHARED);
			EXPECT_TRUE(c.mask & MAP_SHARED_VALIDATE);
			EXPECT_FALSE(c.mask & MAP_PRIVATE);
		}
		if (c.nr == __NR_shmat) {
			shmat_seen = true;
			EXPECT_EQ(c.arg, -1) << "every shmat stops";
		}
	}
	EXPECT_TRUE(mmap_seen);
	EXPECT_TRUE(shmat_seen);
}
