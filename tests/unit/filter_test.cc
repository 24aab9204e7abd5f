// The seccomp program detrun loads (engine/filter.c), run here on sample calls: which run
// freely and which stop, one task at a time and with processes in parallel (--jobs above
// 1), where only LOCAL rows run freely and shared mappings stop.
#include <gtest/gtest.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "engine/filter.h"
#include "syscalls/syscall_table.h"
}

namespace
{

std::vector<sock_filter> Program(bool parallel)
{
	int fd = memfd_create("filter", 0);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(filter_export(false, parallel, fd), 0);
	off_t size = lseek(fd, 0, SEEK_END);
	std::vector<sock_filter> insns(size / sizeof(sock_filter));
	EXPECT_EQ(pread(fd, insns.data(), size, 0), size);
	close(fd);
	return insns;
}

// Classic BPF as seccomp runs it, the instructions libseccomp writes.
uint32_t Run(const std::vector<sock_filter> &prog, const seccomp_data &d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
	for (size_t pc = 0; pc < prog.size(); pc++) {
		const sock_filter &in = prog[pc];
		uint32_t v = BPF_SRC(in.code) == BPF_X ? x : in.k;
		switch (BPF_CLASS(in.code)) {
		case BPF_LD:
			if (BPF_MODE(in.code) == BPF_ABS)
				memcpy(&a, (const char *)&d + in.k, 4);
			else if (BPF_MODE(in.code) == BPF_IMM)
				a = in.k;
			else if (BPF_MODE(in.code) == BPF_MEM)
				a = mem[in.k];
			break;
		case BPF_LDX:
			x = BPF_MODE(in.code) == BPF_MEM ? mem[in.k] : in.k;
			break;
		case BPF_ST:
			mem[in.k] = a;
			break;
		case BPF_STX:
			mem[in.k] = x;
			break;
		case BPF_ALU:
			if (BPF_OP(in.code) == BPF_AND)
				a &= v;
			else if (BPF_OP(in.code) == BPF_OR)
				a |= v;
			else
				ADD_FAILURE() << "ALU op " << BPF_OP(in.code);
			break;
		case BPF_JMP:
			if (BPF_OP(in.code) == BPF_JA)
				pc += in.k;
			else if (BPF_OP(in.code) == BPF_JEQ)
				pc += a == v ? in.jt : in.jf;
			else if (BPF_OP(in.code) == BPF_JGT)
				pc += a > v ? in.jt : in.jf;
			else if (BPF_OP(in.code) == BPF_JGE)
				pc += a >= v ? in.jt : in.jf;
			else if (BPF_OP(in.code) == BPF_JSET)
				pc += (a & v) ? in.jt : in.jf;
			break;
		case BPF_RET:
			return BPF_RVAL(in.code) == BPF_A ? a : in.k;
		case BPF_MISC:
			if (BPF_MISCOP(in.code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		}
	}
	ADD_FAILURE() << "ran off the program's end";
	return SECCOMP_RET_KILL_PROCESS;
}

struct Verdicts {
	std::vector<sock_filter> serial = Program(false), parallel = Program(true);

	bool Free(bool in_parallel, long nr, std::vector<uint64_t> args = {})
	{
		seccomp_data d = {};
		d.nr = (int)nr;
		d.arch = AUDIT_ARCH_X86_64;
		for (size_t i = 0; i < args.size(); i++)
			d.args[i] = args[i];
		uint32_t r = Run(in_parallel ? parallel : serial, d);
		EXPECT_TRUE(r == SECCOMP_RET_ALLOW || r == SECCOMP_RET_TRACE ||
			    (in_parallel && r == (SECCOMP_RET_TRACE | SYSCALL_TICK_TAG)))
			<< std::hex << r;
		last = r;
		return r == SECCOMP_RET_ALLOW;
	}

	// With processes in parallel: a stop only to move the domain's clock (a tick).
	bool Ticks(long nr, std::vector<uint64_t> args = {})
	{
		Free(true, nr, args);
		return last == (SECCOMP_RET_TRACE | SYSCALL_TICK_TAG);
	}

	uint32_t last = 0;
};

TEST(Filter, LocalCallsRunFreelyAndSharedOnesStopWithProcessesInParallel)
{
	Verdicts v;
	for (long nr : { __NR_getpid, __NR_gettid, __NR_rt_sigprocmask, __NR_dup, __NR_umask }) {
		EXPECT_TRUE(v.Free(false, nr)) << syscall_name(nr);
		EXPECT_TRUE(v.Free(true, nr)) << syscall_name(nr);
	}
	// Calls on the process's own memory map tick: they stop only to move its clock.
	for (long nr : { __NR_brk, __NR_madvise, __NR_munmap }) {
		EXPECT_TRUE(v.Free(false, nr)) << syscall_name(nr);
		EXPECT_TRUE(v.Ticks(nr)) << syscall_name(nr);
	}
	for (long nr : { __NR_getppid, __NR_close, __NR_lseek, __NR_pread64, __NR_dup2, __NR_fsync,
			 __NR_epoll_ctl, __NR_shmget, __NR_fchmod }) {
		EXPECT_TRUE(v.Free(false, nr)) << syscall_name(nr);
		EXPECT_FALSE(v.Free(true, nr)) << syscall_name(nr);
	}
	// A LOCAL row naming a process runs freely only when it names the caller.
	EXPECT_TRUE(v.Free(true, __NR_get_robust_list, { 0 }));
	EXPECT_FALSE(v.Free(true, __NR_get_robust_list, { 7 }));
	// A shared row naming the caller stops too with processes in parallel.
	EXPECT_TRUE(v.Free(false, __NR_getpgid, { 0 }));
	EXPECT_FALSE(v.Free(true, __NR_getpgid, { 0 }));
	EXPECT_FALSE(v.Free(true, __NR_read)) << "a stopping row stops in both";
}

TEST(Filter, SharedMappingsStopWithProcessesInParallel)
{
	Verdicts v;
	const uint64_t rw = PROT_READ | PROT_WRITE, anon = MAP_ANONYMOUS;
	for (bool par : { false, true }) {
		EXPECT_FALSE(v.Free(par, __NR_mmap, { 0, 4096, PROT_EXEC, MAP_PRIVATE | anon }));
		EXPECT_FALSE(v.Ticks(__NR_mmap, { 0, 4096, PROT_EXEC, MAP_PRIVATE | anon }));
		EXPECT_FALSE(v.Free(par, __NR_shmat, { 1, 0, SHM_EXEC }));
	}
	EXPECT_TRUE(v.Free(false, __NR_mmap, { 0, 4096, rw, MAP_PRIVATE | anon }));
	EXPECT_TRUE(v.Ticks(__NR_mmap, { 0, 4096, rw, MAP_PRIVATE | anon }));
	EXPECT_TRUE(v.Free(false, __NR_mmap, { 0, 4096, rw, MAP_SHARED | anon }));
	EXPECT_FALSE(v.Free(true, __NR_mmap, { 0, 4096, rw, MAP_SHARED | anon }));
	EXPECT_FALSE(v.Ticks(__NR_mmap, { 0, 4096, rw, MAP_SHARED | anon }));
	EXPECT_FALSE(v.Free(true, __NR_mmap, { 0, 4096, rw, MAP_SHARED_VALIDATE, 3 }));
	EXPECT_FALSE(v.Ticks(__NR_mmap, { 0, 4096, rw, MAP_SHARED_VALIDATE, 3 }));
	EXPECT_TRUE(v.Free(false, __NR_shmat, { 1, 0, 0 }));
	EXPECT_FALSE(v.Free(true, __NR_shmat, { 1, 0, 0 }));
}

TEST(Filter, EveryRowStopsInParallelWhereItStopsOneAtATime)
{
	// Parallel only adds stops; every ALLOW row without a narrowing stops there; and a
	// TICK row ticks where it would run freely, never elsewhere.
	Verdicts v;
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		bool serial = v.Free(false, e.nr), parallel = v.Free(true, e.nr);
		bool ticks = v.Ticks(e.nr);
		if (parallel) {
			EXPECT_TRUE(serial) << e.name;
		}
		if (e.cls == SC_ALLOW) {
			EXPECT_FALSE(parallel) << e.name;
		}
		if (e.cls == SC_LOCAL) {
			EXPECT_EQ(parallel || ticks, serial) << e.name;
		}
		EXPECT_EQ(ticks, syscall_ticks(e.nr) && serial) << e.name;
	}
}

} // namespace
