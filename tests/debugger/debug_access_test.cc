// Who can reach detrun's gdb server: whoever connects reads and writes the
// program's memory. `detrun debug` listens nowhere (gdb talks to it through its remote
// pipe), `--gdb` serves a unix socket in a directory only its user enters, TCP only when
// asked, and a peer of another uid is refused on both.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "harness.h"
#include "debugger/gdb_session.h"

namespace
{

const std::string kDetrun = DETRUN_PATH;
const std::string kRacy = std::string(EXAMPLES_DIR) + "/racy_counter";

// Run by gdb's `shell` while the group is stopped: every socket a process of the session
// holds (detrun, its server, gdb, the program) that another process could reach: one in
// /proc/net/tcp or tcp6 (any state), a listening unix socket or a bound datagram one (a
// bound stream socket that never listens, as detrun's CPU claims, takes no connection).
const char kReachable[] = R"(
import os
sid = os.getsid(0)
inet = set()
for name in ('/proc/net/tcp', '/proc/net/tcp6'):
    for line in open(name).readlines()[1:]:
        inet.add(line.split()[9])
named = {}
for line in open('/proc/net/unix').readlines()[1:]:
    f = line.split()
    if int(f[3], 16) & 0x10000 or (len(f) > 7 and f[4] == '0002'):
        named[f[6]] = ' '.join(f[7:]) or 'listening'
seen = 0
for pid in filter(str.isdigit, os.listdir('/proc')):
    try:
        if os.getsid(int(pid)) != sid:
            continue
        fds = os.listdir('/proc/%s/fd' % pid)
        comm = open('/proc/%s/comm' % pid).read().strip()
    except OSError:
        continue
    for fd in fds:
        try:
            link = os.readlink('/proc/%s/fd/%s' % (pid, fd))
        except OSError:
            continue
        if not link.startswith('socket:['):
            continue
        seen += 1
        ino = link[8:-1]
        if ino in inet:
            print('REACHABLE: %s (%s) fd %s: TCP' % (pid, comm, fd))
        if ino in named:
            print('REACHABLE: %s (%s) fd %s: unix %s' % (pid, comm, fd, named[ino]))
print('SOCKETS SEEN: %d' % seen)
)";

// Connects to `at` (a unix socket's path or 127.0.0.1:PORT) as uid 65534 and asks for the
// stop: "refused: WHY" (no connection), "closed" (no answer), or "reply".
const char kNobodyClient[] = R"(
import socket, sys
at = sys.argv[1]
try:
    if at.startswith('/'):
        s = socket.socket(socket.AF_UNIX)
        s.connect(at)
    else:
        host, port = at.rsplit(':', 1)
        s = socket.create_connection((host, int(port)))
except OSError as e:
    print('refused:', e.strerror)
    sys.exit(0)
try:
    s.sendall(b'$?#3f')
    print('reply' if s.recv(64) else 'closed')
except (ConnectionResetError, BrokenPipeError):
    print('closed')
)";

std::string AsNobody(const std::string &at)
{
	RunResult r = RunCommand({ "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
				   DEBIAN_PYTHON, "-c", kNobodyClient, at });
	return r.code == 0 ? r.out : "client failed: " + r.Describe();
}

// The user's own gdb connects to `at` and kills the program: the server then ends.
RunResult KillThrough(Child &server, const std::string &at)
{
	RunResult g = RunCommand({ "gdb", "-q", "-batch", "-ex", "set sysroot /", "-ex",
				   "target extended-remote " + at, "-ex", "kill", kRacy });
	EXPECT_EQ(g.code, 0) << g.Describe();
	return server.Finish();
}

TEST(DebugAccess, DebugListensNowhere)
{
	TempDir dir("debug-access");
	ASSERT_EQ(RecordInto(dir, "r.dlog", { kRacy, "1", "5" }).code, 0);
	std::ofstream(dir / "reachable.py") << kReachable;
	RunResult r = Debug(dir, "r.dlog",
			    { "break worker", "continue",
			      std::string("shell ") + DEBIAN_PYTHON + " reachable.py",
			      "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_NE(r.out.find("hit Breakpoint 1, worker ("), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("REACHABLE"), std::string::npos) << r.out;
	// gdb's end of the conversation and the server's at least: the check saw them.
	EXPECT_GE(NumberAfter(r.out, "SOCKETS SEEN: "), 2) << r.out;
	EXPECT_NE(r.out.find("counter = 5 "), std::string::npos) << r.out;
}

TEST(DebugAccess, GdbServesAUnixSocketInAPrivateDirectory)
{
	if (getuid() != 0)
		GTEST_SKIP() << "needs root to run a client as another uid";
	Child server({ kDetrun, "--gdb", "--", kRacy, "1", "5" });
	std::string at = GdbAddress(server);
	ASSERT_EQ(at.substr(0, 1), "/") << server.Err();
	EXPECT_EQ(server.Err().find("TCP"), std::string::npos) << server.Err();
	struct stat st;
	ASSERT_EQ(stat(at.substr(0, at.rfind('/')).c_str(), &st), 0) << at;
	EXPECT_EQ(st.st_mode & 0777, 0700u) << at;
	EXPECT_EQ(st.st_uid, getuid()) << at;
	EXPECT_EQ(AsNobody(at), "refused: Permission denied\n");
	RunResult r = KillThrough(server, at);
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(r.out, "") << "killed at its first stop";
	EXPECT_NE(stat(at.substr(0, at.rfind('/')).c_str(), &st), 0) << "its directory is removed";
}

// Nobody connects: SIGTERM ends the run (it was ignored while detrun waited for gdb) with
// one line, the status of a run SIGTERM ended, and the socket's directory gone.
TEST(DebugAccess, SigtermWhileWaitingForGdbEndsTheRun)
{
	Child server({ kDetrun, "--gdb", "--", kRacy, "1", "5" });
	std::string at = GdbAddress(server);
	ASSERT_EQ(at.substr(0, 1), "/") << server.Err();
	server.Signal(SIGTERM);
	RunResult r = server.Finish();
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_EQ(r.code, 128 + SIGTERM) << r.Describe();
	EXPECT_EQ(Matching(r.err, "^detrun: ").size(), 2u) << r.Describe();
	EXPECT_NE(r.err.find("detrun: Terminated while waiting for gdb: the group is killed\n"),
		  std::string::npos)
		<< r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(r.out, "");
	struct stat st;
	EXPECT_NE(stat(at.substr(0, at.rfind('/')).c_str(), &st), 0) << "its directory is removed";
}

// A client as uid 65534 at `at` is closed on, detrun says so once and goes on serving:
// gdb then kills the program at its first stop through the same address.
void ExpectNobodyRefused(Child &server, const std::string &at)
{
	EXPECT_EQ(AsNobody(at), "closed\n");
	EXPECT_TRUE(server.WaitForOutput("refused", 60, true)) << server.Err();
	RunResult r = KillThrough(server, at);
	EXPECT_EQ(Matching(r.err, "^detrun: refused a gdb connection from uid 65534: detrun runs "
				  "as uid 0$")
			  .size(),
		  1u)
		<< r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(r.out, "") << "killed at its first stop";
}

TEST(DebugAccess, AnotherUidIsRefusedOnAUnixSocket)
{
	if (getuid() != 0)
		GTEST_SKIP() << "needs root to run a client as another uid";
	TempDir dir("debug-access");
	ASSERT_EQ(chmod(dir.path.c_str(), 0777), 0);
	Child server({ kDetrun, "--gdb=unix:" + dir / "g.sock", "--", kRacy, "1", "5" });
	std::string at = GdbAddress(server);
	ASSERT_EQ(at, dir / "g.sock") << server.Err();
	ASSERT_EQ(chmod(at.c_str(), 0777), 0); // the socket lets anyone connect: its check stays
	ExpectNobodyRefused(server, at);
}

TEST(DebugAccess, AnotherUidIsRefusedOnTcp)
{
	if (getuid() != 0)
		GTEST_SKIP() << "needs root to run a client as another uid";
	Child server({ kDetrun, "--gdb=tcp:0", "--", kRacy, "1", "5" });
	std::string at = GdbAddress(server);
	ASSERT_EQ(at.substr(0, 10), "127.0.0.1:") << server.Err();
	EXPECT_EQ(Matching(server.Err(), "^detrun: warning: gdb is served on TCP: any local user "
					 "can connect to " +
						 at)
			  .size(),
		  1u)
		<< server.Err();
	ExpectNobodyRefused(server, at);
}

} // namespace

// gdb is connected on TCP: a second gdb is told at once that another one is connected
// (before, the port was closed and gdb retried for its 15 s connect timeout), also after
// the first session went back (a re-execution keeps answering); the first goes on.
TEST(DebugAccess, SecondGdbOnTcpIsRefusedAtOnce)
{
	Child server({ kDetrun, "--gdb=tcp:0", "--", kRacy, "1", "5" });
	std::string at = GdbAddress(server);
	ASSERT_FALSE(at.empty()) << server.Err();
	int in[2];
	ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
	RunOptions o;
	o.stdin_fd = in[0];
	Child first({ "gdb", "-q", "-ex", "set sysroot /", "-ex", "target extended-remote " + at,
		      "-ex", "echo CONNECTED\\n", kRacy },
		    o);
	close(in[0]);
	ASSERT_TRUE(first.WaitForOutput("CONNECTED", 60)) << first.Out() << first.Err();
	auto second = [&] {
		return RunCommand(
			{ "gdb", "-q", "-batch", "-ex", "target extended-remote " + at, kRacy });
	};
	RunResult refused = second();
	EXPECT_NE((refused.out + refused.err).find("another gdb is connected to this run already"),
		  std::string::npos)
		<< refused.Describe();
	std::string back = "break worker\ncontinue\nreverse-continue\necho BACK\\n\n";
	ASSERT_EQ(write(in[1], back.data(), back.size()), (ssize_t)back.size());
	ASSERT_TRUE(first.WaitForOutput("BACK", 120)) << first.Out() << first.Err();
	RunResult again = second();
	EXPECT_NE((again.out + again.err).find("another gdb is connected to this run already"),
		  std::string::npos)
		<< again.Describe();
	std::string end = "kill\nquit\n";
	ASSERT_EQ(write(in[1], end.data(), end.size()), (ssize_t)end.size());
	close(in[1]);
	RunResult g = first.Finish();
	EXPECT_EQ(g.code, 0) << g.Describe();
	RunResult r = server.Finish();
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
}
