// PostgreSQL (Debian's package) under detrun: initdb and the server run in the group, a
// native pgbench drives it over its unix socket. The server waits for its latches through a
// signalfd in an epoll set, forks a backend per connection and shares memory between its
// processes: everything a real multi-process server does.
#include <gtest/gtest.h>

#include <glob.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <iostream>
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
	// The server, with `settings` ("name=value") given as -c options.
	std::vector<std::string> Server(const std::vector<std::string> &settings = {}) const
	{
		std::vector<std::string> argv{
			bin + "/postgres",  "-D", data, "-k", sock, "-p", kPort, "-c",
			"listen_addresses="
		};
		for (const std::string &s : settings)
			argv.insert(argv.end(), { "-c", s });
		return AsPostgres(argv);
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

// Recorded over its unix socket with `opts` while `pgbench -c 4 -t TXNS` runs, then replayed
// offline from a copy of the cluster the recording started from: the same exit status and
// server log (a line for each connection and disconnection, with the session's time), and
// the same files in the data directory (tables, WAL, statistics) when each has shut down.
void RecordAndReplay(const std::vector<std::string> &opts, int txns)
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
	std::vector<std::string> record{ kDetrun, "record", "-o", log };
	record.insert(record.end(), opts.begin(), opts.end());
	record.push_back("--");
	for (const std::string &a : pg.Server({ "log_connections=on", "log_disconnections=on" }))
		record.push_back(a);
	Child rec(record, opt);
	ASSERT_TRUE(rec.WaitForOutput("ready to accept connections", 120, true))
		<< rec.Finish().Describe();
	RunResult fill = pg.Pgbench({ "-i", "-q", "-s", "1" });
	ASSERT_EQ(fill.code, 0) << fill.Describe();
	std::string n = std::to_string(txns);
	RunResult bench = pg.Pgbench({ "-c", "4", "-t", n });
	ASSERT_EQ(bench.code, 0) << bench.Describe();
	std::string all = std::to_string(4 * txns);
	EXPECT_NE(bench.out.find("actually processed: " + all + "/" + all), std::string::npos)
		<< bench.Describe();
	rec.Signal(SIGINT);
	RunResult recorded = rec.Finish();
	ASSERT_EQ(recorded.code, 0) << recorded.Describe();
	ASSERT_NE(recorded.err.find("database system is shut down"), std::string::npos)
		<< recorded.Describe();

	// What the before-images of the data directory cost the log.
	RunResult stats = RunCommand({ kDetrun, "log", "--stats", log });
	size_t images = stats.out.find("before-images");
	std::cout << "[ figure ] PostgreSQL log " << stats.out.substr(5, stats.out.find('\n') - 5)
		  << "; "
		  << (images == std::string::npos
			      ? std::string("no before-images")
			      : stats.out.substr(images, stats.out.find('\n', images) - images))
		  << "\n";
	ASSERT_EQ(RunCommand({ "mv", pg.data, pg.data + ".recorded" }).code, 0);
	ASSERT_EQ(RunCommand({ "cp", "-a", pg.data + ".orig", pg.data }).code, 0);
	ASSERT_EQ(RunCommand({ "sh", "-c", "rm -f " + pg.sock + "/.s.PGSQL.*" }).code, 0);
	RunOptions ropt;
	ropt.timeout_s = 600;
	// On the real files (else its writes go to a private view), which the log's
	// before-images put back to the starting state as well as the copy did.
	RunResult rep = RunCommand({ "unshare", "-n", kDetrun, "replay", "--in-place", log }, ropt);
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.err, recorded.err)
		<< FirstDifference("recording", recorded.err, "replay", rep.err);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
	RunResult files = RunCommand({ "diff", "-r", "-q", pg.data + ".recorded", pg.data });
	EXPECT_EQ(files.code, 0) << "the replay left other files than the recording\n"
				 << files.out << files.Describe();
}

// Before, 3 replays in 5 diverged as pgbench -c 4 connected: the postmaster's wait was found
// ready at a later look of the scheduler (after a backend's exit) than the replay admitted it.
TEST(PostgreSQL, RecordedOverItsUnixSocketReplaysOffline)
{
	RecordAndReplay({}, 50);
}

// The same under --jobs 2: the postmaster forks a backend per connection, each in parallel
// mode's stop loop. They all map the postmaster's shared memory, so they are one memory
// domain and run one at a time, as in serial mode, until page ownership lets them run apart.
TEST(PostgreSQL, RecordedWithJobsTwoReplaysOffline)
{
	RecordAndReplay({ "--jobs", "2" }, 75);
}

} // namespace
