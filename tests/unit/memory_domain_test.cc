// Memory domains (vkernel/memory_domain.c): which processes share writable state and must
// run one task at a time among themselves. Processes here are bare structs with an
// address-space id, as the engine makes them.
#include <gtest/gtest.h>

#include <sched.h>

#include <memory>
#include <utility>
#include <vector>

// The C headers check struct layouts with C11's _Static_assert, which is C++'s static_assert.
#define _Static_assert static_assert
extern "C" {
#include "vkernel/memory_domain.h"
#include "vkernel/task.h"
}

namespace
{

class MemoryDomain : public ::testing::Test
{
      protected:
	void SetUp() override
	{
		memory_domain_reset();
		merges.clear();
		memory_domain_set_merge_hook([](process *a, process *b) {
			merges.push_back({ a->aspace, b->aspace });
		});
	}
	void TearDown() override
	{
		memory_domain_set_merge_hook(nullptr);
		memory_domain_reset();
	}
	// A process with its own address space, numbered as the engine numbers them.
	process *Make(int aspace)
	{
		procs.emplace_back(new process{});
		procs.back()->aspace = aspace;
		return procs.back().get();
	}
	process *Fork(process *parent, int aspace, uint64_t flags = 0)
	{
		process *child = Make(aspace);
		memory_domain_forked(parent, child, flags);
		return child;
	}
	static shared_object File(uint64_t dev, uint64_t ino)
	{
		return { SHARED_FILE, dev, ino, false };
	}
	// The file mapped through a descriptor opened read-only.
	static shared_object ReadOnlyFile(uint64_t dev, uint64_t ino)
	{
		return { SHARED_FILE, dev, ino, true };
	}
	static shared_object Shm(uint64_t id)
	{
		return { SHARED_SYSV, id, 0, false };
	}
	static shared_object Anon()
	{
		return { SHARED_ANON, memory_domain_new_anon(), 0, false };
	}

	static std::vector<std::pair<int, int>> merges;
	std::vector<std::unique_ptr<process>> procs;
};
std::vector<std::pair<int, int>> MemoryDomain::merges;

TEST_F(MemoryDomain, AProcessThatSharesNothingIsAlone)
{
	process *a = Make(1), *b = Fork(a, 2), *c = Fork(a, 3);
	EXPECT_EQ(memory_domain_of(a), 1);
	EXPECT_EQ(memory_domain_of(b), 2);
	EXPECT_EQ(memory_domain_of(c), 3);
	EXPECT_FALSE(memory_domain_same(b, c));
	EXPECT_TRUE(merges.empty());
}

TEST_F(MemoryDomain, ForkOfAProcessWithASharedRegionSharesIt)
{
	// An anonymous MAP_SHARED region reaches another process only by fork.
	process *a = Make(1), *before = Fork(a, 2);
	memory_domain_map(a, Anon());
	process *after = Fork(a, 3), *grandchild = Fork(after, 4);
	EXPECT_EQ(memory_domain_of(after), 1);
	EXPECT_EQ(memory_domain_of(grandchild), 1);
	EXPECT_EQ(memory_domain_of(before), 2) << "forked before the mapping";
	EXPECT_TRUE(merges.empty()) << "a child joins, no domains merge";
}

TEST_F(MemoryDomain, VforkAndCloneVmChildrenShareTheAddressSpace)
{
	process *a = Make(1);
	memory_domain_map(a, Anon());
	process *v = Fork(a, 1, CLONE_VM | CLONE_VFORK);
	EXPECT_EQ(memory_domain_of(v), 1);
	process *lone = Make(5), *vl = Fork(lone, 5, CLONE_VM);
	EXPECT_TRUE(memory_domain_same(lone, vl));
	// The exec of a vfork child gives it an address space of its own: it leaves.
	v->aspace = 7;
	memory_domain_exec(v);
	EXPECT_EQ(memory_domain_of(v), 7);
	EXPECT_EQ(memory_domain_of(a), 1);
}

TEST_F(MemoryDomain, TheSameFileOrSegmentMergesTwoDomainsOnce)
{
	process *a = Make(3), *b = Make(2), *c = Make(1);
	memory_domain_map(a, File(8, 100));
	memory_domain_map(b, File(8, 101));
	EXPECT_FALSE(memory_domain_same(a, b)) << "another inode";
	memory_domain_map(b, File(8, 100));
	EXPECT_TRUE(memory_domain_same(a, b));
	EXPECT_EQ(memory_domain_of(a), 2) << "the smallest address space names the domain";
	ASSERT_EQ(merges.size(), 1u);
	EXPECT_EQ(merges[0], std::make_pair(2, 3));
	memory_domain_map(b, File(8, 100)); // again: nothing new
	memory_domain_map(a, File(8, 101)); // already one domain
	EXPECT_EQ(merges.size(), 1u);
	// A SysV segment joins c: the three are one, named by c's address space.
	memory_domain_map(c, Shm(42));
	memory_domain_map(a, Shm(42));
	EXPECT_EQ(merges.size(), 2u);
	EXPECT_EQ(memory_domain_of(a), 1);
	EXPECT_EQ(memory_domain_of(b), 1);
	EXPECT_EQ(memory_domain_of(c), 1);
}

// Readers of a file none of them can write through their mapping (glibc's
// gconv-modules.cache in make and every compiler) stay apart; a writable mapping of the file
// joins every reader, and a reader forked from a writer stays with it.
TEST_F(MemoryDomain, ReadOnlyMappingsOfAFileShareOnlyWithAWritableOne)
{
	process *a = Make(1), *b = Make(2), *c = Make(3);
	memory_domain_map(a, ReadOnlyFile(8, 100));
	memory_domain_map(b, ReadOnlyFile(8, 100));
	process *child = Fork(b, 4);
	EXPECT_FALSE(memory_domain_same(a, b));
	EXPECT_EQ(memory_domain_of(child), 4) << "inherits a mapping it cannot write either";
	EXPECT_TRUE(merges.empty());
	memory_domain_map(c, File(8, 100));
	EXPECT_EQ(memory_domain_of(a), 1);
	EXPECT_EQ(memory_domain_of(b), 1);
	EXPECT_EQ(memory_domain_of(c), 1);
	EXPECT_EQ(memory_domain_of(child), 1);
	EXPECT_EQ(merges.size(), 3u);
	// A reader that maps the file writable too joins the other readers.
	process *d = Make(5), *e = Make(6);
	memory_domain_map(d, ReadOnlyFile(8, 200));
	memory_domain_map(e, ReadOnlyFile(8, 200));
	EXPECT_FALSE(memory_domain_same(d, e));
	memory_domain_map(e, File(8, 200));
	EXPECT_TRUE(memory_domain_same(d, e));
	memory_domain_map(e, ReadOnlyFile(8, 200)); // again read-only: stays writable
	memory_domain_exec(d);
	EXPECT_EQ(memory_domain_of(d), 5) << "exec drops its mapping";
	EXPECT_EQ(memory_domain_of(e), 6);
}

TEST_F(MemoryDomain, KindsOfObjectsNeverMix)
{
	process *a = Make(1), *b = Make(2);
	memory_domain_map(a, Shm(7));
	memory_domain_map(b, File(7, 0));
	EXPECT_FALSE(memory_domain_same(a, b));
	memory_domain_map(a, Anon());
	memory_domain_map(b, Anon());
	EXPECT_FALSE(memory_domain_same(a, b)) << "two anonymous regions are two objects";
}

TEST_F(MemoryDomain, ExecAndExitSplitADomain)
{
	process *a = Make(1), *b = Make(2), *c = Make(3);
	memory_domain_map(a, File(1, 1));
	memory_domain_map(b, File(1, 1));
	memory_domain_map(b, File(1, 2));
	memory_domain_map(c, File(1, 2));
	EXPECT_EQ(memory_domain_of(c), 1) << "a and c share through b";
	b->aspace = 4;
	memory_domain_exec(b); // b's mappings are gone: a and c share nothing now
	EXPECT_EQ(memory_domain_of(a), 1);
	EXPECT_EQ(memory_domain_of(b), 4);
	EXPECT_EQ(memory_domain_of(c), 3);
	memory_domain_map(b, File(1, 2));
	EXPECT_EQ(memory_domain_of(b), 3);
	memory_domain_forget(c);
	memory_domain_forget(c); // twice: nothing
	EXPECT_EQ(memory_domain_of(b), 4);
}

TEST_F(MemoryDomain, SharedDescriptorTablesAndFsInfoAreOneDomain)
{
	// The LOCAL rows (dup, umask, ...) are the caller's own only within its domain.
	process *a = Make(1), *files = Fork(a, 2, CLONE_FILES), *fs = Fork(a, 3, CLONE_FS);
	process *plain = Fork(files, 4);
	EXPECT_EQ(memory_domain_of(files), 1);
	EXPECT_EQ(memory_domain_of(fs), 1);
	EXPECT_EQ(memory_domain_of(plain), 4) << "fork copies the table";
	files->aspace = 5;
	memory_domain_exec(files); // exec unshares the descriptor table
	fs->aspace = 6;
	memory_domain_exec(fs); // but not the fs information
	EXPECT_EQ(memory_domain_of(files), 5);
	EXPECT_EQ(memory_domain_of(fs), 1);
}

// ptrace inside the group (handlers/sys_ptrace.c): a tracer and its tracee are one domain,
// with one merge reported, and stay so across the tracee's exec; a fork of the tracee is
// not traced by that alone.
TEST_F(MemoryDomain, ATracerAndItsTraceeAreOneDomainThroughAnExec)
{
	process *tracer = Make(1), *tracee = Make(2);
	memory_domain_trace(tracer, tracee);
	EXPECT_EQ(memory_domain_of(tracee), 1);
	memory_domain_trace(tracer, tracee); // an attach again after a detach: nothing new
	EXPECT_EQ(merges.size(), 1u);
	process *child = Fork(tracee, 3);
	EXPECT_EQ(memory_domain_of(child), 3) << "a fork does not inherit the trace";
	tracee->aspace = 4;
	memory_domain_exec(tracee);
	EXPECT_EQ(memory_domain_of(tracee), 1);
	memory_domain_forget(tracer);
	EXPECT_EQ(memory_domain_of(tracee), 4) << "its tracer gone, it is alone again";
}

TEST_F(MemoryDomain, AProcessThatStartsSharingKeepsItsAddressSpacesDomain)
{
	// q and p's vfork child v share a file: one domain, named by q. When p starts sharing
	// something of its own (a descriptor table), it must stay in v's domain: they are one
	// address space.
	process *q = Make(1), *p = Make(2), *v = Fork(p, 2, CLONE_VM | CLONE_VFORK);
	memory_domain_map(v, File(3, 3));
	memory_domain_map(q, File(3, 3));
	EXPECT_EQ(memory_domain_of(p), 1);
	process *c = Fork(p, 4, CLONE_FILES);
	EXPECT_EQ(memory_domain_of(p), 1);
	EXPECT_EQ(memory_domain_of(c), 1);
	EXPECT_EQ(memory_domain_of(v), 1);
}

TEST_F(MemoryDomain, ThreadsAreTheirProcess)
{
	process *a = Make(1);
	memory_domain_forked(a, a, CLONE_THREAD | CLONE_VM);
	EXPECT_EQ(memory_domain_of(a), 1);
	EXPECT_TRUE(merges.empty());
}

} // namespace
