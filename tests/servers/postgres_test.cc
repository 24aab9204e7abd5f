// PostgreSQL (Debian's package) under detrun: initdb and the server run in the group, a
// native pgbench drives it over its unix socket. The server waits for its latches through a
// signalfd in an epoll set, forks a backend per connection and shares memory between its
// processes: everything a real multi-process server does.
#include <gtest/gtest.h>

#include <glob.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string kDetrun = DETRUN_PATH;
const std::string kPort = "5499"; // names the socket file only: no TCP

// The newest installed PostgreSQL's bin directory, or "" when none is installed.
std::string PgBin()
{
	glob_t g;
	std::string found;
	if (glob("/usr/lib/postgresql/*/bin/postgres", 0, nullptr, &g) == 0) {
		found = g.gl_pathv[g.gl_pathc - 1];
		found.resize(found.size() - std::string("/postgres").size());
	}
	globfree(&g);
	return found;
}

// The server refuses to run as root: every PostgreSQL program runs as the postgres user.
std::vector<std::string> AsPostgres(const std::vector<std::string> &argv)
{
	std::vector<std::string> all{ "setpriv", "--reuid=postgres", "--regid=postgres",
				      "--init-groups" };
	all.insert(all.end(), argv.begin(), argv.end());
	return all;
}

struct PgDir {
	TempDir dir{ "pg" };
	std::string bin = PgBin();
	std::string data = dir / "data", sock = dir / "sock";

	bool Prepare()
	{
		return !bin.empty() && getpwnam("postgres") &&
		       RunCommand({ "install", "-d", "-o", "postgres", "-g", "postgres", sock })
				       .code == 0 &&
		       RunCommand({ "chown", "postgres:postgres", dir.path }).code == 0;
	}
	std::vector<std::string> Initdb() const
	{
		return AsPostgres({ bin + "/initdb", "-D", data, "-A", "trust", "-U", "postgres",
				    "--no-sync", "--no-instructions" });
	}
	std::vector<std::string> Server() const
	{
		return AsPostgres({ bin + "/postgres", "-D", data, "-k", sock, "-p", kPort, "-c",
				    "listen_addresses=" });
	}
	RunResult Pgbench(const std::vector<std::string> &args) const
	{
		std::vector<std::string> argv{ bin + "/pgbench", "-h", sock, "-p", kPort, "-U",
					       "postgres" };
		argv.insert(argv.end(), args.begin(), args.end());
		argv.push_back("postgres");
		RunOptions opt;
		opt.timeout_s = 300;
		return RunCommand(argv, opt);
	}
};

const char kMissing[] = "PostgreSQL is not installed (Debian package postgresql): run `make deps`";

TEST(PostgreSQL, ServerUnderDetrunServesPgbenchFiveTimes)
{
	PgDir pg;
	ASSERT_TRUE(pg.Prepare()) << kMissing;
	RunResult init = RunCommand(UnderDetrun({}, pg.Initdb()));
	ASSERT_EQ(init.code, 0) << init.Describe();

	RunOptions opt;
	opt.timeout_s = 900;
	Child server(UnderDetrun({}, pg.Server()), opt);
	ASSERT_TRUE(server.WaitForOutput("ready to accept connections", 120, true))
		<< server.Finish().Describe();
	RunResult fill = pg.Pgbench({ "-i", "-q" });
	ASSERT_EQ(fill.code, 0) << fill.Describe();
	for (int round = 1; round <= 5; round++) {
		RunResult bench = pg.Pgbench({ "-c", "4", "-t", "200" });
		ASSERT_EQ(bench.code, 0) << "round " << round << ": " << bench.Describe();
		EXPECT_NE(bench.out.find("number of transactions actually processed: 800/800"),
			  std::string::npos)
			<< "round " << round << ": " << bench.Describe();
	}
	server.Signal(SIGINT); // fast shutdown, passed on to the group by detrun
	RunResult done = server.Finish();
	EXPECT_EQ(done.code, 0) << done.Describe();
	EXPECT_NE(done.err.find("database system is shut down"), std::string::npos)
		<< done.Describe();
	EXPECT_TRUE(done.leftovers.empty()) << done.Describe();
}

// Recorded over its unix socket and replayed offline, byte for byte. Before, 3 replays in 5
// diverged as pgbench -c 4 connected: the postmaster's wait was found ready at a later
// look of the scheduler (after a backend's exit) than the replay admitted it.
TEST(PostgreSQL, RecordedOverItsUnixSocketReplaysOffline)
{
	PgDir pg;
	ASSERT_TRUE(pg.Prepare()) << kMissing;
	RunResult init = RunCommand(pg.Initdb());
	ASSERT_EQ(init.code, 0) << init.Describe();
	// Replay starts from the files the recording started from.
	ASSERT_EQ(RunCommand({ "cp", "-a", pg.data, pg.data + ".orig" }).code, 0);

	std::string log = pg.dir / "pg.dlog";
	RunOptions opt;
	opt.timeout_s = 900;
	std::vector<std::string> record{ kDetrun, "record", "-o", log, "--" };
	for (const std::string &a : pg.Server())
		record.push_back(a);
	Child rec(record, opt);
	ASSERT_TRUE(rec.WaitForOutput("ready to accept connections", 120, true))
		<< rec.Finish().Describe();
	RunResult fill = pg.Pgbench({ "-i", "-q", "-s", "1" });
	ASSERT_EQ(fill.code, 0) << fill.Describe();
	RunResult bench = pg.Pgbench({ "-c", "4", "-t", "50" });
	ASSERT_EQ(bench.code, 0) << bench.Describe();
	rec.Signal(SIGINT);
	RunResult recorded = rec.Finish();
	ASSERT_EQ(recorded.code, 0) << recorded.Describe();
	ASSERT_NE(recorded.err.find("database system is shut down"), std::string::npos)
		<< recorded.Describe();

	ASSERT_EQ(RunCommand({ "rm", "-rf", pg.data }).code, 0);
	ASSERT_EQ(RunCommand({ "cp", "-a", pg.data + ".orig", pg.data }).code, 0);
	ASSERT_EQ(RunCommand({ "sh", "-c", "rm -f " + pg.sock + "/.s.PGSQL.*" }).code, 0);
	RunOptions ropt;
	ropt.timeout_s = 600;
	RunResult rep = RunCommand({ "unshare", "-n", kDetrun, "replay", log }, ropt);
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.err, recorded.err)
		<< FirstDifference("recording", recorded.err, "replay", rep.err);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

} // namespace
