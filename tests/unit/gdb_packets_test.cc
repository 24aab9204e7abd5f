// The GDB remote protocol's framing (debugger/packets.c) over a socketpair: the test plays
// gdb on one end. $data#checksum, '+' or '-' for each packet, '}' escapes, Ctrl-C as a
// bare 0x03 byte, and no-ack mode once gdb asked for it (QStartNoAckMode).
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>

extern "C" {
#include "debugger/internal.h"
}

namespace
{

// Both ends of a connection: `gdb` is the test's, `stub` detrun's.
struct Wire {
	int gdb = -1, stub = -1;
	Wire()
	{
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
			gdb = sv[0];
			stub = sv[1];
		}
	}
	~Wire()
	{
		close(gdb);
		close(stub);
	}
	void Send(const std::string &bytes) const
	{
		ASSERT_EQ(write(gdb, bytes.data(), bytes.size()), (ssize_t)bytes.size());
	}
	// Everything the stub wrote so far (it writes before the test reads: no waiting).
	std::string Received() const
	{
		std::string got;
		char buf[4096];
		ssize_t n;
		while ((n = recv(gdb, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			got.append(buf, (size_t)n);
		return got;
	}
	std::string Read(size_t size = PACKET_MAX) const
	{
		std::string buf(size, '\0');
		int n = packet_read(stub, &buf[0], size);
		return n < 0 ? "<gone>" : buf.substr(0, (size_t)n);
	}
};

// A packet as gdb frames it: the checksum is the sum of the data bytes modulo 256.
std::string Framed(const std::string &data)
{
	unsigned sum = 0;
	for (unsigned char c : data)
		sum += c;
	char tail[4];
	snprintf(tail, sizeof(tail), "#%02x", sum & 0xff);
	return "$" + data + tail;
}

TEST(GdbPackets, ReadChecksAcknowledgesAndSkipsNoise)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	w.Send("+" + Framed("m401000,4"));
	EXPECT_EQ(w.Read(), "m401000,4");
	EXPECT_EQ(w.Received(), "+");
}

TEST(GdbPackets, BadChecksumIsRefusedAndTheResentPacketRead)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	w.Send("$g#00" + Framed("g"));
	EXPECT_EQ(w.Read(), "g");
	EXPECT_EQ(w.Received(), "-+");
}

TEST(GdbPackets, ChecksumDigitsInEitherCase)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	std::string data = "vCont;c"; // sum 0x2a8: checksum a8
	w.Send("$" + data + "#A8");
	EXPECT_EQ(w.Read(), data);
	EXPECT_EQ(w.Received(), "+");
}

TEST(GdbPackets, CtrlCIsAnEmptyRead)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	w.Send("\x03");
	std::string buf(16, 'x');
	EXPECT_EQ(packet_read(w.stub, &buf[0], buf.size()), 0);
	EXPECT_EQ(w.Received(), "");
}

TEST(GdbPackets, LongPacketIsCutToTheBufferAndStillAcknowledged)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	w.Send(Framed("X1000,8:abcdefgh") + Framed("c"));
	EXPECT_EQ(w.Read(8), "X1000,8"); // 7 bytes and the NUL
	EXPECT_EQ(w.Read(), "c");
	EXPECT_EQ(w.Received(), "++");
}

TEST(GdbPackets, ClosedConnectionIsGone)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	w.Send("$m0,4#");
	shutdown(w.gdb, SHUT_WR);
	EXPECT_EQ(w.Read(), "<gone>");
}

TEST(GdbPackets, SendEscapesAndChecksumsThenWaitsForTheAck)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	// gdb acknowledges before the stub sends: the ack is read after the write.
	w.Send("-+");
	std::string data = "a$b#c}d*e";
	EXPECT_EQ(packet_send(w.stub, data.data(), data.size()), 0);
	std::string escaped = "a}\x04"
			      "b}\x03"
			      "c}]d}\x0a"
			      "e";
	// Refused once ('-'): sent twice.
	EXPECT_EQ(w.Received(), Framed(escaped) + Framed(escaped));
}

TEST(GdbPackets, SendfFormats)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	w.Send("+");
	EXPECT_EQ(packet_sendf(w.stub, "T%02xthread:p%x.%x;", 5, 0x1f, 0x20), 0);
	EXPECT_EQ(w.Received(), Framed("T05thread:p1f.20;"));
}

TEST(GdbPackets, SendToAClosedPeerFails)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	shutdown(w.gdb, SHUT_WR); // no ack will ever come
	EXPECT_EQ(packet_send(w.stub, "OK", 2), -1);
}

TEST(GdbPackets, HexBothWays)
{
	const unsigned char bytes[] = { 0x00, 0x7f, 0x80, 0xff, 0x1a };
	char hex[2 * sizeof(bytes) + 1];
	hex_encode(hex, bytes, sizeof(bytes));
	EXPECT_STREQ(hex, "007f80ff1a");
	unsigned char back[8] = {};
	EXPECT_EQ(hex_decode(back, "007F80ff1a", sizeof(back)), 5);
	EXPECT_EQ(memcmp(back, bytes, sizeof(bytes)), 0);
	EXPECT_EQ(hex_decode(back, "0g", sizeof(back)), -1);
	EXPECT_EQ(hex_decode(back, "0102030405", 2), 2); // at most max bytes
	const char *p = "1f2a,rest";
	EXPECT_EQ(hex_number(&p), 0x1f2aull);
	EXPECT_STREQ(p, ",rest");
}

// Last in the file: no-ack mode stays on for the rest of the process (as for the session).
TEST(GdbPackets, NoAckModeNeitherAcksNorWaits)
{
	Wire w;
	ASSERT_GE(w.gdb, 0);
	EXPECT_FALSE(packet_acks_off());
	packet_no_ack();
	EXPECT_TRUE(packet_acks_off());
	w.Send("$g#00");
	EXPECT_EQ(w.Read(), "g"); // a bad checksum too: nothing is resent without acks
	EXPECT_EQ(packet_send(w.stub, "OK", 2), 0);
	EXPECT_EQ(w.Received(), Framed("OK"));
}

} // namespace
