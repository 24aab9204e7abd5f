// The output regions of an external call (handlers/call_outputs.c), derived from the
// OUTPUTS column of its row in syscalls.def: where a call leaves bytes in the program's
// memory, and how many of them each region holds once the call returned. The "tracee" is
// this test process itself (remote memory reads work on any process the caller may read),
// so a call's arguments are real buffers here and no call is made: the test plays the
// kernel by filling them in.
#include <gtest/gtest.h>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

// The C headers check struct layouts with C11's _Static_assert, which is C++'s static_assert.
#define _Static_assert static_assert
extern "C" {
#include "handlers/call_outputs.h"
#include "engine/remote.h"
}

namespace
{

// A task stopped at the entry of call NR with ARGS: this very process.
struct Call {
	std::unique_ptr<task> t{ new task() };
	outputs o{};
	std::vector<shim_region> got;

	Call(long nr, std::vector<uint64_t> args)
	{
		t->tid = getpid();
		t->syscall_nr = nr;
		for (size_t i = 0; i < args.size(); i++)
			syscall_set_arg(t.get(), (int)i, args[i]);
		describe_outputs(t.get(), &o);
	}
	~Call()
	{
		free_regions(got.data(), got.size());
	}
	// The regions after the call returned RET (what record would log).
	void Returned(int64_t ret)
	{
		got.resize((size_t)o.n);
		read_outputs(t.get(), &o, ret, got.data());
	}
};

uint64_t A(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

TEST(CallOutputs, RecvfromDataThenAddressBoundedByItsLength)
{
	char buf[100];
	struct sockaddr_storage from;
	socklen_t from_len = 16;
	Call c(SYS_recvfrom, { 3, A(buf), sizeof(buf), 0, A(&from), A(&from_len) });
	ASSERT_EQ(c.o.n, 3);
	EXPECT_FALSE(c.o.incomplete);
	EXPECT_EQ(c.o.r[0].kind, R_DATA);
	EXPECT_EQ(c.o.r[0].addr, A(buf));
	EXPECT_EQ(c.o.r[0].max, sizeof(buf));
	EXPECT_EQ(c.o.r[1].kind, R_LEN);
	EXPECT_EQ(c.o.r[1].addr, A(&from_len));
	EXPECT_EQ(c.o.r[2].kind, R_ADDR);
	EXPECT_EQ(c.o.r[2].max, 16u); // the room the length said at entry

	memcpy(buf, "hello", 5); // the "kernel" delivers 5 bytes and an 8-byte address
	memset(&from, 0xab, 8);
	from_len = 8;
	c.Returned(5);
	ASSERT_EQ(c.got[0].len, 5u);
	EXPECT_EQ(memcmp(c.got[0].bytes, "hello", 5), 0);
	EXPECT_TRUE(c.got[0].data);
	EXPECT_EQ(c.got[1].len, 4u);
	EXPECT_FALSE(c.got[1].data);
	EXPECT_EQ(c.got[2].len, 8u); // bounded by the updated length, not the room
	EXPECT_EQ(c.got[2].max, 16u);
}

TEST(CallOutputs, ReadvSpreadsTheResultOverItsBuffersInOrder)
{
	char a[4], b[10];
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	Call c(SYS_readv, { 3, A(iov), 2 });
	ASSERT_EQ(c.o.n, 2);
	memcpy(a, "abcd", 4);
	memcpy(b, "ef", 2);
	c.Returned(6);
	EXPECT_EQ(c.got[0].len, 4u);
	EXPECT_EQ(c.got[1].len, 2u);
	EXPECT_EQ(std::string((char *)c.got[1].bytes, 2), "ef");
}

TEST(CallOutputs, TooManyBuffersAreIncompleteNeverASilentGap)
{
	std::vector<char> room(MAX_IOVECS + 1);
	std::vector<struct iovec> iov(MAX_IOVECS + 1);
	for (size_t i = 0; i < iov.size(); i++)
		iov[i] = { &room[i], 1 };
	Call c(SYS_readv, { 3, A(iov.data()), iov.size() });
	EXPECT_TRUE(c.o.incomplete);
	EXPECT_EQ(c.o.n, MAX_IOVECS);
}

TEST(CallOutputs, EpollWaitHoldsOneEventPerResult)
{
	struct epoll_event ev[8];
	Call c(SYS_epoll_wait, { 3, A(ev), 8, 0 });
	ASSERT_EQ(c.o.n, 1);
	EXPECT_EQ(c.o.r[0].kind, R_PER_RESULT);
	EXPECT_EQ(c.o.r[0].max, sizeof(ev));
	c.Returned(3);
	EXPECT_EQ(c.got[0].len, 3 * sizeof(struct epoll_event));
}

TEST(CallOutputs, RecvmsgBuffersNameControlAndFlags)
{
	char data[32], name[64], control[48];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr m = {};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_name = name;
	m.msg_namelen = sizeof(name);
	m.msg_control = control;
	m.msg_controllen = sizeof(control);
	Call c(SYS_recvmsg, { 3, A(&m), 0 });
	ASSERT_EQ(c.o.n, 6);
	enum region_kind want[] = { R_DATA, R_LEN, R_ADDR, R_LEN, R_ADDR, R_FIXED };
	for (int i = 0; i < 6; i++)
		EXPECT_EQ(c.o.r[i].kind, want[i]) << "region " << i;
	EXPECT_EQ(c.o.r[2].addr, A(name));
	EXPECT_EQ(c.o.r[4].addr, A(control));
	EXPECT_EQ(c.o.r[5].addr, A(&m.msg_flags));

	m.msg_namelen = 2; // an unnamed unix peer
	m.msg_controllen = 24;
	c.Returned(7);
	EXPECT_EQ(c.got[0].len, 7u);
	EXPECT_EQ(c.got[1].len, 4u);
	EXPECT_EQ(c.got[2].len, 2u);
	EXPECT_EQ(c.got[3].len, 8u);
	EXPECT_EQ(c.got[4].len, 24u);
	EXPECT_EQ(c.got[5].len, 4u);
}

TEST(CallOutputs, FailedCallLeavesNothing)
{
	char buf[16];
	struct sockaddr_storage from;
	socklen_t from_len = sizeof(from);
	Call c(SYS_recvfrom, { 3, A(buf), sizeof(buf), 0, A(&from), A(&from_len) });
	c.Returned(-11);
	ASSERT_EQ(c.got.size(), 3u);
	for (const shim_region &r : c.got) {
		EXPECT_EQ(r.len, 0u);
		EXPECT_EQ(r.bytes, nullptr);
	}
}

TEST(CallOutputs, NullBufferAndCallWithoutOutputsHaveNoRegion)
{
	Call none(SYS_write, { 1, 0, 0 });
	EXPECT_EQ(none.o.n, 0);
	char buf[8];
	Call no_addr(SYS_recvfrom, { 3, A(buf), sizeof(buf), 0, 0, 0 });
	EXPECT_EQ(no_addr.o.n, 1); // only the data: no address asked for
}

} // namespace
