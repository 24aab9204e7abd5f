// Real servers nobody here wrote, recorded while real clients drive them and replayed
// offline byte for byte: memcached (4 worker threads, libevent) and redis (an event loop
// with background threads). nginx, python's http.server and a Go server are in
// record_test.cc, PostgreSQL in postgres_test.cc.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string kDetrun = DETRUN_PATH;

// CONNS concurrent connections, each setting and reading back its own keys in the
// memcached text protocol; exits non-zero on any wrong answer.
const char kMemcachedClient[] = R"(
import socket, sys, threading
port, conns, per = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
errors = []
def reply(f):
    line = f.readline()
    if not line:
        raise EOFError("connection closed")
    return line
def client(c):
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rb")
    for i in range(per):
        key, value = b"k%d-%d" % (c, i), b"v%d" % (c * 1000003 + i) * (1 + i % 7)
        s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value))
        if reply(f) != b"STORED\r\n":
            errors.append("set " + key.decode())
        s.sendall(b"get %s\r\n" % key)
        header, data, end = reply(f), f.read(len(value) + 2), reply(f)
        if data != value + b"\r\n" or end != b"END\r\n":
            errors.append("get " + key.decode())
    s.close()
threads = [threading.Thread(target=client, args=(c,)) for c in range(conns)]
[t.start() for t in threads]
[t.join() for t in threads]
print("errors:", len(errors), errors[:3])
sys.exit(1 if errors else 0)
)";

RunResult ReplayOffline(const std::string &log, const std::vector<std::string> &extra = {})
{
	RunOptions opt;
	opt.timeout_s = 300;
	std::vector<std::string> argv{ "unshare", "-n", kDetrun, "replay" };
	argv.insert(argv.end(), extra.begin(), extra.end());
	argv.push_back(log);
	return RunCommand(argv, opt);
}

TEST(RealServers, MemcachedWithFourThreadsReplaysOffline)
{
	TempDir dir("servers");
	int port = FreePort();
	ASSERT_GT(port, 0);
	WriteFile(dir / "client.py", kMemcachedClient);
	RunOptions opt;
	opt.cwd = dir.path;
	opt.timeout_s = 300;
	Child rec({ kDetrun, "record", "-o", dir / "mc.dlog", "--", "memcached", "-u", "root", "-t",
		    "4", "-l", "127.0.0.1", "-p", std::to_string(port), "-U", "0", "-vv" },
		  opt);
	ASSERT_TRUE(rec.WaitForOutput("server listening", 60, true)) << rec.Finish().Describe();
	RunResult client = RunCommand(
		{ DEBIAN_PYTHON, dir / "client.py", std::to_string(port), "6", "60" });
	EXPECT_EQ(client.code, 0) << client.Describe();
	rec.Signal(SIGTERM);
	RunResult recorded = rec.Finish();
	ASSERT_NE(recorded.err.find("STORED"), std::string::npos) << recorded.Describe();

	RunResult rep = ReplayOffline(dir / "mc.dlog");
	EXPECT_EQ(rep.code, recorded.code) << rep.Describe();
	EXPECT_EQ(rep.err, recorded.err)
		<< FirstDifference("recording", recorded.err, "replay", rep.err);
	EXPECT_EQ(rep.out, recorded.out);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

TEST(RealServers, RedisReplaysOffline)
{
	TempDir dir("servers");
	int port = FreePort();
	ASSERT_GT(port, 0);
	RunOptions opt;
	opt.cwd = dir.path;
	opt.timeout_s = 300;
	Child rec({ kDetrun, "record", "-o", dir / "redis.dlog", "--", "redis-server", "--port",
		    std::to_string(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		    "--daemonize", "no", "--dir", dir.path },
		  opt);
	ASSERT_TRUE(rec.WaitForOutput("Ready to accept connections", 60))
		<< rec.Finish().Describe();
	std::string p = std::to_string(port);
	std::string answers;
	for (const std::vector<std::string> &cmd :
	     std::vector<std::vector<std::string>>{ { "SET", "greeting", "hello" },
						    { "INCRBY", "counter", "41" },
						    { "INCR", "counter" },
						    { "RPUSH", "list", "a", "b", "c" },
						    { "LRANGE", "list", "0", "-1" },
						    { "GET", "greeting" },
						    { "DBSIZE" } }) {
		std::vector<std::string> argv{ "redis-cli", "-p", p };
		argv.insert(argv.end(), cmd.begin(), cmd.end());
		RunResult r = RunCommand(argv);
		ASSERT_EQ(r.code, 0) << r.Describe();
		answers += r.out;
	}
	EXPECT_EQ(answers, "OK\n41\n42\n3\na\nb\nc\nhello\n3\n");
	rec.Signal(SIGTERM);
	RunResult recorded = rec.Finish();
	ASSERT_EQ(recorded.code, 0) << recorded.Describe();
	ASSERT_NE(recorded.out.find("bye bye"), std::string::npos) << recorded.Describe();

	RunResult rep = ReplayOffline(dir / "redis.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, recorded.out)
		<< FirstDifference("recording", recorded.out, "replay", rep.out);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

// Redis saving its data (SAVE: a temporary file renamed to dump.rdb), replayed twice in the
// directory of the recording: redis reads dump.rdb at start, and the replay must find none,
// as the recording did, not the one the recording saved (before, the replay loaded it and
// diverged at its open). The directory is left as the recording left it.
TEST(RealServers, RedisThatSavedReplaysWhereItWasRecorded)
{
	TempDir dir("servers");
	int port = FreePort();
	ASSERT_GT(port, 0);
	RunOptions opt;
	opt.timeout_s = 120;
	Child rec({ kDetrun, "record", "-o", dir / "redis.dlog", "--", "redis-server", "--port",
		    std::to_string(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		    "--daemonize", "no", "--dir", dir.path },
		  opt);
	ASSERT_TRUE(rec.WaitForOutput("Ready to accept connections", 60))
		<< rec.Finish().Describe();
	std::string p = std::to_string(port);
	std::string answers;
	for (const std::vector<std::string> &cmd :
	     std::vector<std::vector<std::string>>{ { "SET", "greeting", "hello" },
						    { "SAVE" },
						    { "DBSIZE" } }) {
		std::vector<std::string> argv{ "redis-cli", "-p", p };
		argv.insert(argv.end(), cmd.begin(), cmd.end());
		answers += RunCommand(argv).out;
	}
	EXPECT_EQ(answers, "OK\nOK\n1\n");
	rec.Signal(SIGTERM);
	RunResult recorded = rec.Finish();
	ASSERT_EQ(recorded.code, 0) << recorded.Describe();
	std::string dump = ReadFile(dir / "dump.rdb");
	ASSERT_FALSE(dump.empty()) << recorded.Describe();
	for (int i = 0; i < 2; i++) {
		RunResult rep = ReplayOffline(dir / "redis.dlog");
		EXPECT_EQ(rep.code, 0) << rep.Describe();
		EXPECT_EQ(rep.out, recorded.out)
			<< FirstDifference("recording", recorded.out, "replay", rep.out);
		EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
		EXPECT_EQ(ReadFile(dir / "dump.rdb"), dump) << "the replay changed dump.rdb";
	}
}

// nginx's access log: a line per request with the worker's pid, its connection number, the
// request's number on that connection, the (virtual) time and what was sent. Both workers
// append to the one file, so its lines show which worker served which connection, in what
// order.
const char kAccessLog[] =
	"log_format w '$pid $connection $connection_requests $msec $request $status "
	"$body_bytes_sent';\n    access_log @DIR@/access.log w;";

// The pid (in the group's namespace) of each access log line's worker, with its count.
std::map<std::string, int> RequestsPerWorker(const std::string &log)
{
	std::map<std::string, int> per;
	for (const std::string &line : SplitLines(log))
		per[line.substr(0, line.find(' '))]++;
	return per;
}

// nginx (a master and 2 workers) recorded with `detrun record` and `opts` while wrk loads it,
// then replayed offline: the same exit status, stderr (nginx's notices) and access log.
void NginxUnderWrk(const std::vector<std::string> &opts)
{
	TempDir dir("servers");
	int port = FreePort();
	ASSERT_GT(port, 0);
	ASSERT_TRUE(MakeNginxPrefix(SOURCE_DIR, dir.path, port));
	std::string conf = ReadFile(dir / "nginx.conf");
	ASSERT_NE(conf.find("access_log off;"), std::string::npos) << conf;
	WriteFile(dir / "nginx.conf",
		  Replace(conf, "access_log off;", Replace(kAccessLog, "@DIR@", dir.path)));
	std::string big;
	for (int i = 0; big.size() < 100 * 1024; i++)
		big += "block " + std::to_string(i * 7919 % 100003) + "\n";
	WriteFile(dir / "html/100k.txt", big);
	// Files older than the run show their own times in record and replay alike.
	ASSERT_EQ(RunCommand({ "touch", "-d", "2020-01-01", dir / "html/100k.txt" }).code, 0);
	RunOptions opt;
	opt.cwd = dir.path;
	opt.timeout_s = 300;
	std::vector<std::string> record{ kDetrun, "record", "-o", dir / "nginx.dlog" };
	record.insert(record.end(), opts.begin(), opts.end());
	record.insert(record.end(), { "--", "nginx", "-e", "stderr", "-c", dir / "nginx.conf", "-p",
				      dir.path + "/" });
	Child rec(record, opt);
	ASSERT_TRUE(rec.WaitForOutput("start worker process", 60, true)) << rec.Finish().Describe();
	RunResult load = RunCommand({ "wrk", "-t2", "-c8", "-d2s",
				      "http://127.0.0.1:" + std::to_string(port) + "/100k.txt" });
	ASSERT_EQ(load.code, 0) << load.Describe();
	rec.Signal(SIGTERM);
	RunResult recorded = rec.Finish();
	ASSERT_EQ(recorded.code, 0) << recorded.Describe();
	std::string access = ReadFile(dir / "access.log");
	ASSERT_FALSE(access.empty()) << "no request reached nginx";
	std::cout << "[ nginx   ] requests per worker:";
	for (const auto &[pid, n] : RequestsPerWorker(access))
		std::cout << " " << pid << ": " << n;
	std::cout << "\n";

	unlink((dir.path + "/nginx.pid").c_str());
	unlink((dir.path + "/access.log").c_str());
	RunCommand({ "sh", "-c", "rm -rf " + dir.path + "/tmp/* " + dir.path + "/logs/*" });
	// On the real files, so that the access log it writes is there to compare.
	RunResult rep = ReplayOffline(dir / "nginx.dlog", { "--in-place" });
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.err, recorded.err)
		<< FirstDifference("recording", recorded.err, "replay", rep.err);
	std::string replayed = ReadFile(dir / "access.log");
	EXPECT_TRUE(replayed == access)
		<< FirstDifference("recorded access log", access, "replayed", replayed);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

// nginx under wrk: when wrk stops, it closes connections in the middle of a sendfile; the
// kernel raises SIGPIPE, which nginx ignores. A traced task stops for it anyway; it used to
// be an event of the recording that the replay (whose stand-in socket raises nothing)
// never met, so most such recordings diverged at the next sendfile.
TEST(RealServers, NginxUnderWrkReplaysOffline)
{
	NginxUnderWrk({});
}

// The same under --jobs 2, recorded and replayed by parallel mode's stop loop (the replay runs
// with the recording's --jobs). nginx maps a shared anonymous page (its accept mutex and
// counters) before it forks the workers, so the master and both workers are one memory
// domain: they still run one at a time, every call of theirs stopping as parallel mode has
// it, until page ownership lets processes that share memory run apart.
TEST(RealServers, NginxWithJobsTwoUnderWrkReplaysOffline)
{
	NginxUnderWrk({ "--jobs", "2" });
}

} // namespace
