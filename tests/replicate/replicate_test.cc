// detrun replicate on a real 3-node NATS JetStream cluster on loopback. The tests that leave
// the servers alone share one cluster, which ctest starts once per run (the fixture
// ReplicateCluster: nats_cluster.cc); each names its groups uniquely. The tests that kill or
// stop servers, or run replicas on nodes, start a cluster of their own (stores under a
// temporary directory), as every test does when this program runs without ctest. Each
// replica is its own detrun process in its own directory. The failover tests run each
// replica on a node of its own: a network namespace joined to the test's by a veth pair
// (replicate/cluster.sh nodes-up), where the server binds the same port as on every other
// node; the client talks to the nodes' addresses. The other tests run every replica in the
// test's namespace, where only the leader can bind the port. What is asserted never
// depends on timing: a leader is killed after the client has seen a given number of
// acknowledgements, and every waiting step has a hard limit. Servers, replicas and clients
// die with the test process (a Ctrl-C'd ctest leaves none running).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <sstream>
#include <functional>
#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string kDetrun = DETRUN_PATH;
const std::string kClient = std::string(GUEST_DIR) + "/repl_client";
const std::string kKvServer = std::string(EXAMPLES_DIR) + "/kvserver";
const std::string kKvClient = std::string(EXAMPLES_DIR) + "/kvclient";
const std::string kClusterSh = std::string(SOURCE_DIR) + "/replicate/cluster.sh";

// A node: a network namespace, the replica's address there, and the address of the test's
// end of its veth pair.
struct Node {
	std::string ns, addr, here;
};

// A 3-server NATS cluster: this test process's own (its three nats-server processes and
// three nodes, made on first use and removed after the suite; a run that was killed leaves
// the nodes to the next run's nodes-sweep: their names carry the test process's pid), or the
// suite's shared one (ctest's fixture ReplicateCluster, tests/replicate/nats_cluster.cc),
// which only its URLs and ports describe here. The servers' clients connect on the first
// node's address on this side, which every node reaches (127.0.0.1 if there are no nodes).
struct Cluster {
	bool shared = false;
	std::unique_ptr<TempDir> dir;
	int base = 0;
	std::string host = "127.0.0.1", urls;
	std::unique_ptr<Child> servers[3];
	std::vector<Node> nodes;
	std::string nodes_why; // why there are none

	void MakeNodes()
	{
		RunCommand({ "sh", kClusterSh, "nodes-sweep" });
		RunResult r = RunCommand(
			{ "sh", kClusterSh, "nodes-up", std::to_string(getpid()), "3" });
		std::istringstream lines(r.out);
		Node n;
		while (lines >> n.ns >> n.addr >> n.here)
			nodes.push_back(n);
		if (r.code != 0 || nodes.size() != 3) {
			nodes_why =
				"cannot make network namespaces (root and iproute2 are needed): " +
				r.Describe();
			nodes.clear();
			RunCommand({ "sh", kClusterSh, "nodes-down", std::to_string(getpid()) });
		}
		if (!nodes.empty())
			host = nodes[0].here;
	}
	void RemoveNodes()
	{
		if (!nodes.empty())
			RunCommand({ "sh", kClusterSh, "nodes-down", std::to_string(getpid()) });
	}
	std::string Conf(int n) const
	{
		auto port = [&](int off) { return std::to_string(base + off); };
		return "server_name: n" + std::to_string(n + 1) + "\nlisten: " + host + ":" +
		       port(n) + "\nhttp: 127.0.0.1:" + port(20 + n) +
		       "\njetstream { store_dir: \"" + dir->path + "/n" + std::to_string(n + 1) +
		       "\" }\ncluster { name: detrun, " + "listen: 127.0.0.1:" + port(10 + n) +
		       ", routes: [nats://127.0.0.1:" + port(10) +
		       ", nats://127.0.0.1:" + port(11) + ", nats://127.0.0.1:" + port(12) +
		       "] }\n";
	}
	bool Start(int n)
	{
		if (shared) {
			ADD_FAILURE() << "a test that stops servers needs a cluster of its own";
			return false;
		}
		std::string conf = (*dir) / ("n" + std::to_string(n + 1) + ".conf");
		WriteFile(conf, Conf(n));
		RunOptions opt;
		opt.die_with_test = true;
		opt.timeout_s = 1500;
		servers[n] = std::make_unique<Child>(std::vector<std::string>{ "nats-server", "-c",
									       conf },
						     opt);
		return servers[n]->WaitForOutput("Server is ready", 30, true);
	}
	void Kill(int n)
	{
		if (shared) {
			ADD_FAILURE() << "a test that kills servers needs a cluster of its own";
			return;
		}
		servers[n]->Signal(SIGKILL);
		servers[n]->Finish();
	}
	void Stop()
	{
		for (auto &s : servers)
			if (s) {
				s->Signal(SIGTERM);
				s->Finish();
			}
	}
};

// The cluster the running test uses: one of the two below.
Cluster *cluster;
Cluster *own_cluster, *shared_cluster;

// This process's own cluster, started on first use and kept for the tests after (when the
// test program runs them all): for the tests that kill or stop servers, or run replicas on
// nodes (whose namespaces reach only the address this cluster listens on).
void UseOwnCluster()
{
	if (!own_cluster) {
		own_cluster = new Cluster;
		Cluster *c = own_cluster;
		c->dir = std::make_unique<TempDir>("replicate");
		// servers at base+0..2, routes at +10..12, monitoring at +20..22
		c->base = ReservedPorts(23);
		c->MakeNodes();
		for (int n = 0; n < 3; n++) {
			if (!c->urls.empty())
				c->urls += ",";
			c->urls += "nats://" + c->host + ":" + std::to_string(c->base + n);
		}
		for (int n = 0; n < 3; n++)
			c->Start(n);
		// JetStream answers once the servers have elected a meta leader (bounded).
		for (int i = 0; i < 300; i++) {
			RunResult r = RunCommand(
				{ "curl", "-s",
				  "http://127.0.0.1:" + std::to_string(c->base + 20) + "/jsz" });
			if (r.out.find("\"leader\"") != std::string::npos)
				break;
			usleep(100 * 1000);
		}
	}
	cluster = own_cluster;
}

// The suite's shared cluster, which ctest starts once for the tests that leave its servers
// alone: the file DETRUN_NATS_CLUSTER names ("urls=..." and "base=..." lines). Without that
// variable (the test program run by hand), this process's own.
void UseSharedCluster()
{
	const char *file = getenv("DETRUN_NATS_CLUSTER");
	if (!file) {
		UseOwnCluster();
		return;
	}
	if (!shared_cluster) {
		shared_cluster = new Cluster;
		shared_cluster->shared = true;
		for (const std::string &line : SplitLines(ReadFile(file))) {
			if (line.rfind("urls=", 0) == 0)
				shared_cluster->urls = line.substr(5);
			if (line.rfind("base=", 0) == 0)
				shared_cluster->base = std::stoi(line.substr(5));
		}
	}
	cluster = shared_cluster;
	ASSERT_FALSE(cluster->urls.empty() || cluster->base == 0)
		<< "DETRUN_NATS_CLUSTER=" << file << " names no cluster (ctest starts it with "
		<< "the fixture ReplicateCluster): \"" << ReadFile(file) << "\"";
}

// A group name no other test uses on the cluster: the test process's pid with its start
// time, since pids repeat within a run (pid_max is 32768 here) and a group an earlier test
// left on the shared cluster would be followed instead of led.
std::string GroupName(const std::string &prefix)
{
	std::string stat = ReadFile("/proc/self/stat");
	std::istringstream fields(stat.substr(stat.rfind(')') + 2));
	std::string field, started;
	for (int i = 3; i <= 22 && fields >> field; i++)
		started = field; // field 22: the start time, in clock ticks since boot
	return prefix + std::to_string(getpid()) + "-" + started;
}

class Replicate : public ::testing::Test
{
      protected:
	static void TearDownTestSuite()
	{
		if (own_cluster) {
			own_cluster->Stop();
			own_cluster->RemoveNodes();
		}
		delete own_cluster;
		delete shared_cluster;
		own_cluster = shared_cluster = cluster = nullptr;
	}
};

// A replica: `detrun replicate` in DIR/NODE, in the network namespace NETNS if one is given.
std::unique_ptr<Child> Replica(const TempDir &dir, const std::string &group,
			       const std::string &node, const std::vector<std::string> &prog,
			       const std::vector<std::string> &extra = {},
			       const std::string &netns = "")
{
	RunOptions opt;
	opt.die_with_test = true;
	opt.cwd = dir / node;
	opt.timeout_s = 600;
	mkdir(opt.cwd.c_str(), 0755);
	// Standard output goes to a file: a pipe nobody reads would fill up and block the
	// program's writes in the kernel, at moments the wall clock picks.
	std::vector<std::string> argv = {
		"sh",          "-c",        "exec \"$0\" \"$@\" > stdout.txt",
		kDetrun,       "replicate", "--cluster",
		cluster->urls, "--group",   group,
		"--node",      node
	};
	if (!netns.empty())
		argv.insert(argv.begin(), { "nsenter", "--net=/run/netns/" + netns });
	argv.insert(argv.end(), extra.begin(), extra.end());
	argv.push_back("--");
	argv.insert(argv.end(), prog.begin(), prog.end());
	return std::make_unique<Child>(argv, opt);
}

// Kills whatever is still running when a test leaves early (a failed ASSERT), so that
// nothing waits for its hard limit and nothing is left behind.
struct KillOnExit {
	std::vector<Child *> children;
	~KillOnExit()
	{
		for (Child *c : children)
			if (c) {
				c->Signal(SIGKILL);
				c->Finish();
			}
	}
};

// The same for a test's three replicas, which it starts one by one.
struct KillReplicasOnExit {
	std::unique_ptr<Child> *r;
	~KillReplicasOnExit()
	{
		KillOnExit k{ { r[0].get(), r[1].get(), r[2].get() } };
	}
};

int CountOf(const std::string &s, const std::string &what)
{
	int n = 0;
	for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
		n++;
	return n;
}

} // namespace

namespace
{

// What a failover run replicates: a server (PORT and ADDR replaced), the client's
// protocol, how many keys, how the group is ended (kvserver's SHUTDOWN request, or
// SIGTERM), and where the replicas run: each on a node of its own (a network namespace;
// the server listens on 0.0.0.0 there), or all in the test's namespace (on 127.0.0.1).
struct Server {
	std::string name, proto;
	std::vector<std::string> argv;
	int keys;
	bool shutdown_request;
	bool own_nodes;
};

// How the tests run a client: it ends with the test, after 15 minutes at most.
RunOptions ClientOptions()
{
	RunOptions o;
	o.die_with_test = true;
	o.timeout_s = 900;
	return o;
}

// Three replicas a, b, c of one server (on nodes 0, 1, 2), and a client.
struct Group {
	const Server s;
	TempDir dir;
	int port = FreePort();
	std::string name;
	std::vector<std::string> prog;
	std::unique_ptr<Child> r[3], client;

	explicit Group(const Server &server)
	    : s(server), dir("repl-" + server.name), name(GroupName(server.name))
	{
		for (const auto &a : s.argv)
			prog.push_back(Replace(Replace(a, "PORT", std::to_string(port)), "ADDR",
					       s.own_nodes ? "0.0.0.0" : "127.0.0.1"));
	}
	~Group()
	{
		KillOnExit k{ { r[0].get(), r[1].get(), r[2].get(), client.get() } };
	}
	std::string Addr(int n) const
	{
		return s.own_nodes ? cluster->nodes[n].addr : "127.0.0.1";
	}
	std::string At(int n) const // "ADDRESS:PORT" of node n
	{
		return Addr(n) + ":" + std::to_string(port);
	}
	std::string Everywhere() const // every node's address, node a's first
	{
		return Addr(0) + "," + Addr(1) + "," + Addr(2) + ":" + std::to_string(port);
	}
	void Start(int n, const std::vector<std::string> &extra = {})
	{
		r[n] = Replica(dir, name, std::string(1, 'a' + n), prog, extra,
			       s.own_nodes ? cluster->nodes[n].ns : "");
	}
	// The writing client: the server's keys, in its protocol, through every node.
	void StartClient()
	{
		client = std::make_unique<Child>(std::vector<std::string>{ kClient, s.proto,
									   Everywhere(),
									   std::to_string(s.keys) },
						 ClientOptions());
	}
	// Node a with `lease_ms`, leading, then b and c following: the usual start.
	::testing::AssertionResult StartLeaderAndFollowers(const std::string &lease_ms)
	{
		Start(0, { "--lease-ms", lease_ms });
		if (!r[0]->WaitForOutput("leads group", 90, true))
			return ::testing::AssertionFailure() << r[0]->Finish().Describe();
		for (int n = 1; n < 3; n++) {
			Start(n);
			if (!r[n]->WaitForOutput("follows group", 90, true))
				return ::testing::AssertionFailure() << r[n]->Finish().Describe();
		}
		return ::testing::AssertionSuccess();
	}
	// "port P is in use" when a socket is bound to the port on node n.
	std::string Probe(int n) const
	{
		return RunCommand({ "nsenter", "--net=/run/netns/" + cluster->nodes[n].ns, kClient,
				    "bind", std::to_string(port) })
			.out;
	}
};

// What a new leader says it did, and every other replica says it saw at the same logical
// time: "leads from t=T (epoch E, after stream sequence S)"; "" if ERR has no such line.
std::string GoLiveFacts(const std::string &err)
{
	size_t at = err.find("leads from t=");
	size_t end = at == std::string::npos ? at : err.find(')', at);
	return end == std::string::npos ? "" : err.substr(at, end + 1 - at);
}

// The E of the first "(epoch E" after WHAT in ERR; 0 if there is none.
unsigned long long EpochAfter(const std::string &err, const std::string &what)
{
	size_t at = err.find(what);
	at = at == std::string::npos ? at : err.find("(epoch ", at);
	return at == std::string::npos ? 0 : std::stoull(err.substr(at + 7));
}

// The group ends (a SHUTDOWN request to the leader, or SIGTERM); every replica ends alike,
// without divergence, and states the same go-live facts FACTS.
void EndAlike(Group &g, int leader, const std::string &facts)
{
	if (g.s.shutdown_request) {
		EXPECT_EQ(RunCommand({ kKvClient, g.At(leader), "1", "1", "8", "--shutdown" }).code,
			  0);
	} else {
		g.r[leader]->Signal(SIGTERM);
	}
	RunResult end[3];
	for (int n = 0; n < 3; n++)
		end[n] = g.r[n]->Finish();
	for (int n = 0; n < 3; n++) {
		EXPECT_EQ(end[n].code, end[leader].code) << end[n].Describe();
		EXPECT_EQ(end[n].err.find("diverged"), std::string::npos)
			<< end[n].Describe() << "\nthe leader's:\n"
			<< end[leader].err;
		EXPECT_TRUE(end[n].leftovers.empty()) << end[n].Describe();
		EXPECT_EQ(CountOf(end[n].err, facts), 1) << facts << "\n" << end[n].Describe();
		// On a node of its own the port is free. Beside a leader it is taken, said once
		// (node a, restarted, meets the new leader's listening socket).
		EXPECT_EQ(CountOf(end[n].err, "cannot bind"), 0) << end[n].Describe();
		int in_use = CountOf(end[n].err, "is in use on this node");
		int want = g.s.own_nodes ? 0 : n == 0 ? 1 : std::min(in_use, 1);
		EXPECT_EQ(in_use, want) << end[n].Describe();
		if (n != leader) {
			EXPECT_NE(end[n].err.find("a replicated end"), std::string::npos)
				<< end[n].Describe();
		}
	}
	if (g.s.shutdown_request) {
		std::string snap = ReadFile(g.dir / "b/data.snapshot");
		EXPECT_FALSE(snap.empty());
		EXPECT_EQ(ReadFile(g.dir / "c/data.snapshot"), snap);
		EXPECT_EQ(ReadFile(g.dir / "a/data.snapshot"), snap);
		// The append-only data file too: node a, killed and restarted, replayed the
		// group from its starting files (the before-images in the stream), not on top
		// of what it had written (before: 459 lines against the leader's 300).
		std::string data = ReadFile(g.dir / "b/data");
		EXPECT_FALSE(data.empty());
		EXPECT_EQ(ReadFile(g.dir / "c/data"), data);
		EXPECT_EQ(ReadFile(g.dir / "a/data"), data)
			<< "node a: " << CountOf(ReadFile(g.dir / "a/data"), "\n")
			<< " lines, b: " << CountOf(data, "\n");
	}
}

// The leader is killed with SIGKILL once the client has seen a quarter of its writes
// acknowledged; a follower takes over, the client reconnects (to the new leader's
// address) and finishes; the killed node restarts and follows; every acknowledged write
// is read back from the new leader; then the group ends and every replica agrees, with
// the same state. How long the takeover took is bench/replicate.py's to measure; here its
// logical facts are asserted: the new leader's epoch is newer, and every replica passes
// its go-live mark at the logical time the new leader went live, right after the last
// record of the old epoch — with the port bound on its own node by then.
void FailoverRun(const Server &s)
{
	if (s.own_nodes) {
		UseOwnCluster();
		ASSERT_EQ(cluster->nodes.size(), 3u) << cluster->nodes_why;
	} else {
		ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	}
	Group g(s);
	std::string keys = std::to_string(s.keys);
	ASSERT_TRUE(g.StartLeaderAndFollowers("4000"));
	g.StartClient();
	ASSERT_TRUE(g.client->WaitForOutput("progress " + std::to_string(s.keys / 4), 600))
		<< g.client->Finish().Describe();
	g.r[0]->Signal(SIGKILL);
	RunResult killed = g.r[0]->Finish();
	RunResult wrote = g.client->Finish();
	ASSERT_NE(wrote.out.find("acked " + keys + " of"), std::string::npos) << wrote.Describe();
	int leader = 0;
	for (int n = 1; n < 3; n++)
		if (g.r[n]->WaitForOutput(std::string("node ") + char('a' + n) + " leads from t=",
					  0.5, true))
			leader = n;
	ASSERT_NE(leader, 0) << g.r[1]->Err() << g.r[2]->Err();
	EXPECT_EQ(CountOf(g.r[1]->Err(), "node b leads from t=") +
			  CountOf(g.r[2]->Err(), "node c leads from t="),
		  1);
	std::string facts = GoLiveFacts(g.r[leader]->Err());
	EXPECT_GT(EpochAfter(facts, "leads from"), EpochAfter(killed.err, "leads group"))
		<< killed.err << g.r[leader]->Err();
	EXPECT_EQ(wrote.out.find("via "), wrote.out.find("via " + g.Addr(0) + "\n"));
	EXPECT_NE(wrote.out.find("via " + g.Addr(leader) + "\n", wrote.out.find("progress")),
		  std::string::npos)
		<< wrote.Describe();

	g.Start(0); // the killed node comes back and follows
	ASSERT_TRUE(g.r[0]->WaitForOutput("follows group", 90, true))
		<< g.r[0]->Finish().Describe();
	RunResult check = RunCommand({ kClient, s.proto, g.At(leader), keys, "check" },
				     ClientOptions());
	EXPECT_NE(check.out.find("readable " + keys + " of"), std::string::npos)
		<< check.Describe();
	for (int n = 0; n < 3; n++) {
		if (n == leader)
			continue;
		ASSERT_TRUE(g.r[n]->WaitForOutput("here at the same logical time", 300, true))
			<< g.r[n]->Err();
		if (s.own_nodes) {
			EXPECT_NE(g.Probe(n).find("in use"), std::string::npos) << "node " << n;
		}
	}
	EndAlike(g, leader, facts);
}

} // namespace

TEST_F(Replicate, KvServerLeaderKilledFollowerTakesOver)
{
	FailoverRun({ "kv", "kv", { kKvServer, "PORT", "data", "ADDR" }, 2000, true, true });
}

TEST_F(Replicate, MemcachedLeaderKilledFollowerTakesOver)
{
	FailoverRun({ "mc",
		      "mc",
		      { "/usr/bin/memcached", "-u", "root", "-t", "4", "-l", "ADDR", "-p", "PORT",
			"-U", "0" },
		      10000,
		      false,
		      true });
}

// The same with every replica in one network namespace: a follower finds the port taken
// by the leader, says so once, and binds it when it takes over.
TEST_F(Replicate, KvServerFailoverInOneNamespace)
{
	FailoverRun({ "kv1", "kv", { kKvServer, "PORT", "data", "ADDR" }, 2000, true, false });
}

// A follower whose node cannot bind what the leader bound (here: the leader's own
// address) says so when it replays the bind, not when it would take over.
TEST_F(Replicate, FollowerThatCannotBindSaysSo)
{
	UseOwnCluster();
	ASSERT_EQ(cluster->nodes.size(), 3u) << cluster->nodes_why;
	Group g({ "nobind", "kv", {}, 0, true, true });
	g.prog = { kKvServer, std::to_string(g.port), "data", g.Addr(0) };
	g.Start(0);
	ASSERT_TRUE(g.r[0]->WaitForOutput("leads group", 90, true)) << g.r[0]->Finish().Describe();
	g.Start(1);
	ASSERT_TRUE(g.r[1]->WaitForOutput("follows group", 90, true))
		<< g.r[1]->Finish().Describe();
	EXPECT_EQ(RunCommand({ kKvClient, g.At(0), "1", "1", "8", "--shutdown" }).code, 0);
	RunResult end[2] = { g.r[0]->Finish(), g.r[1]->Finish() };
	EXPECT_EQ(end[0].code, 0) << end[0].Describe();
	EXPECT_EQ(end[1].code, 0) << end[1].Describe();
	EXPECT_EQ(CountOf(end[1].err, "node b cannot bind " + g.At(0) +
					      ", which the leader bound: Cannot assign requested "
					      "address"),
		  1)
		<< end[1].Describe();
	EXPECT_EQ(end[0].err.find("cannot bind"), std::string::npos) << end[0].Describe();
}

// kvserver's crash request crashes the leader's program; every follower crashes at the
// same logical time, and says it is a replicated end, not a leader failure: none takes
// over.
TEST_F(Replicate, KvServerCrashIsReplicated)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	TempDir dir("repl-crash");
	int port = FreePort();
	std::string group = GroupName("crash");
	std::vector<std::string> prog = { kKvServer, std::to_string(port), "data" };
	std::unique_ptr<Child> r[3];
	KillReplicasOnExit guard{ r };
	r[0] = Replica(dir, group, "a", prog, { "--lease-ms", "4000" });
	ASSERT_TRUE(r[0]->WaitForOutput("leads group", 90, true)) << r[0]->Finish().Describe();
	for (int n = 1; n < 3; n++) {
		r[n] = Replica(dir, group, n == 1 ? "b" : "c", prog);
		ASSERT_TRUE(r[n]->WaitForOutput("follows group", 90, true))
			<< r[n]->Finish().Describe();
	}
	RunResult wrote = RunCommand({ kClient, "kv", std::to_string(port), "100" });
	EXPECT_NE(wrote.out.find("acked 100 of 100"), std::string::npos) << wrote.Describe();
	RunCommand({ kKvClient, std::to_string(port), "1", "0", "8", "--crash" });
	RunResult end[3];
	for (int n = 0; n < 3; n++)
		end[n] = r[n]->Finish();
	EXPECT_EQ(end[0].code, 128 + SIGSEGV) << end[0].Describe();
	for (int n = 1; n < 3; n++) {
		EXPECT_EQ(end[n].code, end[0].code) << end[n].Describe();
		EXPECT_NE(end[n].err.find("a replicated end, not a leader failure"),
			  std::string::npos)
			<< end[n].Describe();
		EXPECT_EQ(end[n].err.find("leads from"), std::string::npos) << end[n].Describe();
		EXPECT_EQ(end[n].err.find("diverged"), std::string::npos) << end[n].Describe();
	}
}

// A server on a unix socket path (relative: each replica runs in a directory of its own).
// On a follower the replayed bind makes the socket file, as the leader's bind did; the
// follower must not bind the socket a second time (it did, and diverged: "Address already
// in use"). The program binds, listens, chmods, stats and unlinks the file, and ends.
TEST_F(Replicate, UnixSocketServerFollows)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	TempDir dir("repl-unix");
	std::string group = GroupName("unix");
	std::vector<std::string> prog = { std::string(GUEST_DIR) + "/rep_unix_bind", "." };
	std::unique_ptr<Child> r[3];
	KillReplicasOnExit guard{ r };
	r[0] = Replica(dir, group, "a", prog, { "--lease-ms", "4000" });
	RunResult led = r[0]->Finish();
	ASSERT_EQ(led.code, 0) << led.Describe();
	r[1] = Replica(dir, group, "b", prog);
	RunResult followed = r[1]->Finish();
	EXPECT_EQ(followed.code, 0) << followed.Describe();
	EXPECT_NE(followed.err.find("a replicated end"), std::string::npos) << followed.Describe();
	EXPECT_EQ(followed.err.find("diverged"), std::string::npos) << followed.Describe();
	std::string out = ReadFile(dir / "a/stdout.txt");
	EXPECT_NE(out.find("bind: ok\nlisten: ok\n"), std::string::npos) << out;
	EXPECT_NE(out.find("socket file: yes, mode 777\nunlink: ok\n"), std::string::npos) << out;
	EXPECT_EQ(ReadFile(dir / "b/stdout.txt"), out);
}

// Errors: one line each, a non-zero exit, nothing left running.
TEST_F(Replicate, ErrorsAreOneLine)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	TempDir dir("repl-err");
	int closed = FreePort();
	struct Case {
		std::vector<std::string> argv;
		std::string says;
	} cases[] = {
		{ { kDetrun, "replicate", "--cluster", "nats://127.0.0.1:" + std::to_string(closed),
		    "--group", "g", "--", "/bin/true" },
		  "cannot reach the cluster" },
		{ { kDetrun, "replicate", "--status", "--cluster", cluster->urls, "--group",
		    "nosuchgroup" },
		  "no group nosuchgroup" },
		{ { kDetrun, "replicate", "--cluster", cluster->urls, "--group", "a.b", "--",
		    "/bin/true" },
		  "bad or missing group name" },
		{ { kDetrun, "replicate", "--group", "g", "--", "/bin/true" },
		  "--cluster URLS is needed" },
	};
	for (const auto &c : cases) {
		RunResult r = RunCommand(c.argv);
		EXPECT_NE(r.code, 0) << r.Describe();
		EXPECT_EQ(CountOf(r.err, "\n"), 1) << r.Describe();
		EXPECT_NE(r.err.find(c.says), std::string::npos) << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	}
}

// A replica started with another program, or other arguments, than the leader's refuses
// to follow.
TEST_F(Replicate, ReplicaMustRunWhatTheLeaderRuns)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	TempDir dir("repl-mismatch");
	int port = FreePort();
	std::string group = GroupName("mismatch");
	auto leader = Replica(dir, group, "a", { kKvServer, std::to_string(port), "data" });
	KillOnExit guard{ { leader.get() } };
	ASSERT_TRUE(leader->WaitForOutput("leads group", 90, true)) << leader->Finish().Describe();
	mkdir((dir / "b").c_str(), 0755);
	struct Case {
		std::vector<std::string> prog;
		std::string says;
	} cases[] = {
		{ { kKvClient, std::to_string(port), "data" },
		  "is another program than the leader's" },
		{ { kKvServer, std::to_string(port), "other" },
		  "the arguments differ from the leader's" },
	};
	for (const auto &c : cases) {
		std::vector<std::string> argv = { kDetrun,       "replicate", "--cluster",
						  cluster->urls, "--group",   group,
						  "--node",      "b",         "--" };
		argv.insert(argv.end(), c.prog.begin(), c.prog.end());
		RunResult r = RunCommand(argv);
		EXPECT_EQ(r.code, 125) << r.Describe();
		EXPECT_EQ(CountOf(r.err, "\n"), 1) << r.Describe();
		EXPECT_NE(r.err.find(c.says), std::string::npos) << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	}
	leader->Signal(SIGTERM);
	RunResult end = leader->Finish();
	EXPECT_TRUE(end.leftovers.empty()) << end.Describe();
}

namespace
{

// Which server (0..2) leads stream NAME now, from a live server's monitoring page; -1 if
// none is known.
int StreamLeader(const std::string &name, int ask)
{
	RunResult r = RunCommand({ "curl", "-s",
				   "http://127.0.0.1:" + std::to_string(cluster->base + 20 + ask) +
					   "/jsz?streams=true" });
	std::string page;
	for (char c : r.out)
		if (c != ' ' && c != '\n' && c != '\t')
			page += c;
	size_t at = page.find("\"name\":\"" + name + "\"");
	size_t leader = at == std::string::npos ? at : page.find("\"leader\":\"n", at);
	if (leader == std::string::npos)
		return -1;
	return page[leader + 11] - '1';
}

} // namespace

// The nats-server leading the group's stream is killed while a client writes: the stream
// elects another leader, the replicas go on, every write is acknowledged once and is
// there once on every replica (a lost or duplicated input would make the followers
// diverge, and the snapshots counts every key).
TEST_F(Replicate, StreamLeaderServerKilledDuringLoad)
{
	UseOwnCluster();
	TempDir dir("repl-stream");
	int port = FreePort();
	const int keys = 3000;
	std::string group = GroupName("stream");
	std::vector<std::string> prog = { kKvServer, std::to_string(port), "data" };
	std::unique_ptr<Child> r[3];
	KillReplicasOnExit guard{ r };
	// The lease is renewed through JetStream too, so it stalls with the election of the
	// stream's leader (4-10 s on a quiet machine, more beside a CPU hog): a lease of 60 s
	// outlasts it however busy the machine is, and no follower takes over.
	for (int n = 0; n < 3; n++) {
		r[n] = Replica(dir, group, std::string(1, 'a' + n), prog,
			       { "--lease-ms", "60000" });
		ASSERT_TRUE(r[n]->WaitForOutput(n ? "follows group" : "leads group", 90, true))
			<< r[n]->Finish().Describe();
	}
	Child client({ kClient, "kv", std::to_string(port), std::to_string(keys) },
		     ClientOptions());
	KillOnExit client_guard{ { &client } };
	ASSERT_TRUE(client.WaitForOutput("progress 500", 600)) << client.Finish().Describe();
	int victim = StreamLeader("DETRUN_" + group, 0);
	ASSERT_TRUE(victim >= 0 && victim < 3) << victim;
	cluster->Kill(victim);
	RunResult wrote = client.Finish();
	ASSERT_TRUE(cluster->Start(victim)); // for the tests after this one
	EXPECT_NE(wrote.out.find("acked " + std::to_string(keys) + " of"), std::string::npos)
		<< wrote.Describe();
	RunResult check = RunCommand({ kClient, "kv", std::to_string(port), std::to_string(keys),
				       "check" },
				     ClientOptions());
	EXPECT_NE(check.out.find("readable " + std::to_string(keys) + " of"), std::string::npos)
		<< check.Describe();
	EXPECT_EQ(RunCommand({ kKvClient, std::to_string(port), "1", "1", "8", "--shutdown" }).code,
		  0);
	RunResult end[3];
	for (int n = 0; n < 3; n++)
		end[n] = r[n]->Finish();
	for (int n = 0; n < 3; n++) {
		EXPECT_EQ(end[n].code, 0) << end[n].Describe();
		EXPECT_EQ(end[n].err.find("leads from"), std::string::npos) << end[n].Describe();
		EXPECT_EQ(end[n].err.find("diverged"), std::string::npos) << end[n].Describe();
	}
	std::string snap = ReadFile(dir / "a/data.snapshot");
	EXPECT_EQ(CountOf(snap, "\n"), keys + 1) << "k0_0 of the shutdown client, and every key";
	EXPECT_EQ(ReadFile(dir / "b/data.snapshot"), snap);
	EXPECT_EQ(ReadFile(dir / "c/data.snapshot"), snap);
}

namespace
{

const std::string kBigRead = std::string(GUEST_DIR) + "/repl_bigread";
// One read of more than twice NATS's default max_payload (1 MiB), of no round size.
const std::string kBigBytes = std::to_string(2 * 1024 * 1024 + 12345);

// repl_bigread's answer line for the BYTES the client sent: "first read N bytes, total N
// bytes, digest D" (one read of everything, with the client's digest).
std::string BigReadLine(const std::string &bytes, const RunResult &client)
{
	size_t at = client.out.find("digest ");
	if (at == std::string::npos)
		return "(the client printed no digest)";
	return "first read " + bytes + " bytes, total " + bytes + " bytes, " +
	       client.out.substr(at, 7 + 16) + "\n";
}

// Sends OUT to NATS server N as a client of its own, then reads until DONE holds for what
// came or TRIES polls of 100 ms pass, answering the server's PINGs: what came, or why
// nothing could be sent ("(cannot ...)").
std::string NatsExchange(int n, const std::string &out, int tries,
			 const std::function<bool(const std::string &)> &done)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)(cluster->base + n));
	if (inet_pton(AF_INET, cluster->host.c_str(), &a.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return "(cannot connect to " + cluster->host + ")";
	}
	if (write(fd, out.data(), out.size()) != (ssize_t)out.size()) {
		close(fd);
		return "(cannot send)";
	}
	std::string in;
	char buf[4096];
	for (int i = 0; i < tries && !done(in); i++) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r <= 0)
			break;
		in.append(buf, (size_t)r);
		if (in.find("PING\r\n") != std::string::npos && write(fd, "PONG\r\n", 6) != 6)
			break;
	}
	close(fd);
	return in;
}

// One message of the NATS protocol to SUBJECT on server N, published through JetStream
// (its acknowledgement is awaited, so the stream holds it): the stream's JSON answer.
std::string JetStreamPublish(int n, const std::string &subject, const std::string &payload,
			     const std::string &headers = "")
{
	std::string out = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true}\r\n"
			  "SUB _INBOX.bigin 1\r\n";
	if (headers.empty()) {
		out += "PUB " + subject + " _INBOX.bigin " + std::to_string(payload.size()) +
		       "\r\n" + payload + "\r\nPING\r\n";
	} else { // HPUB: the headers block, then the payload
		std::string block = "NATS/1.0\r\n" + headers + "\r\n";
		out += "HPUB " + subject + " _INBOX.bigin " + std::to_string(block.size()) + " " +
		       std::to_string(block.size() + payload.size()) + "\r\n" + block + payload +
		       "\r\nPING\r\n";
	}
	return NatsExchange(n, out, 300, [](const std::string &in) {
		return in.find("\"seq\"") != std::string::npos ||
		       in.find("\"error\"") != std::string::npos;
	});
}

// A group of repl_bigread replicas serving a free port, reading BYTES at once: a leads
// (lease 4 s), b and c follow. Whatever still runs when the test leaves is killed.
struct BigReadGroup {
	TempDir dir;
	std::string group, bytes;
	int port = FreePort();
	std::unique_ptr<Child> r[3];
	KillReplicasOnExit guard{ r };

	BigReadGroup(const std::string &name, const std::string &b = kBigBytes)
	    : dir("repl-" + name), group(GroupName(name)), bytes(b)
	{
	}
	bool Start(int replicas = 3)
	{
		std::vector<std::string> prog = { kBigRead, "serve", std::to_string(port), bytes };
		r[0] = Replica(dir, group, "a", prog, { "--lease-ms", "4000" });
		if (!r[0]->WaitForOutput("leads group", 90, true))
			return false;
		for (int n = 1; n < replicas; n++) {
			r[n] = Replica(dir, group, n == 1 ? "b" : "c", prog);
			if (!r[n]->WaitForOutput("follows group", 90, true))
				return false;
		}
		return true;
	}
	RunResult Send() const
	{
		RunOptions opt;
		opt.die_with_test = true;
		opt.timeout_s = 300;
		return RunCommand({ kBigRead, "send", std::to_string(port), bytes }, opt);
	}
	// Replica N ended as the program did, agreeing with the others, and its program
	// counted every byte the client sent once, with the client's digest.
	void ExpectEnd(int n, const RunResult &end, const RunResult &client) const
	{
		EXPECT_EQ(end.code, 0) << end.Describe();
		EXPECT_EQ(end.err.find("diverged"), std::string::npos) << end.Describe();
		EXPECT_TRUE(end.leftovers.empty()) << end.Describe();
		EXPECT_EQ(ReadFile(dir / (std::string(1, 'a' + n) + "/stdout.txt")),
			  "listening\n" + BigReadLine(bytes, client))
			<< end.Describe();
	}
};

} // namespace

// A client sends 2 MiB and a bit in one write; the leader's program reads it in one read:
// one input record over NATS's max_payload. It goes to the stream in parts and every
// follower acts on it whole: each replica's program counts the same bytes with the same
// digest as the client, and ends alike.
TEST_F(Replicate, InputLargerThanMaxPayloadReplicates)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	BigReadGroup g("big");
	ASSERT_TRUE(g.Start()) << g.r[0]->Err();
	RunResult client = g.Send();
	EXPECT_NE(client.out.find("match"), std::string::npos) << client.Describe();
	EXPECT_EQ(client.code, 0) << client.Describe();
	RunResult end[3];
	for (int n = 0; n < 3; n++)
		end[n] = g.r[n]->Finish();
	for (int n = 0; n < 3; n++)
		g.ExpectEnd(n, end[n], client);
	for (int n = 1; n < 3; n++)
		EXPECT_NE(end[n].err.find("a replicated end"), std::string::npos)
			<< end[n].Describe();
}

// The leader stops between the parts of a large record: it is stopped, the stream gets
// the first part of a three-part record (as the leader would have appended it), and the
// leader is killed. The record is torn: no replica acts on it. The follower that takes
// over drops it before its go-live mark, the other drops it at that mark (both say so),
// and the group goes on: a large input through the new leader reaches every replica
// whole, with the client's digest.
TEST_F(Replicate, LeaderKilledBetweenPartsLeavesNoTornRecord)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	BigReadGroup g("torn");
	ASSERT_TRUE(g.Start()) << g.r[0]->Err();
	g.r[0]->Signal(SIGSTOP); // no append and no renewal from now on
	// Framing (replicate/link.h): 8 bytes of logical time, kind 2 (a part), then part
	// index 0 and count 3 (4 bytes each, little-endian) and the part's bytes.
	std::string part(8, '\0');
	part += std::string("\x02", 1) + std::string("\0\0\0\0\x03\0\0\0", 8) +
		std::string(1000, 'x');
	std::string ack;
	for (int n = 0; n < 3 && ack.find("\"seq\"") == std::string::npos; n++)
		ack = JetStreamPublish(n, "detrun." + g.group + ".in", part);
	ASSERT_NE(ack.find("\"seq\""), std::string::npos) << ack;
	g.r[0]->Signal(SIGKILL);
	g.r[0]->Finish();
	int leader = 0;
	for (int i = 0; i < 120 && !leader; i++)
		for (int n = 1; n < 3 && !leader; n++)
			if (g.r[n]->WaitForOutput("leads from t=", 0.5, true))
				leader = n;
	ASSERT_NE(leader, 0) << g.r[1]->Err() << g.r[2]->Err();
	for (int n = 1; n < 3; n++)
		EXPECT_TRUE(g.r[n]->WaitForOutput("dropped a torn record (parts 1-1 of 3", 60, true))
			<< g.r[n]->Err();
	RunResult client = g.Send();
	EXPECT_NE(client.out.find("match"), std::string::npos) << client.Describe();
	for (int n = 1; n < 3; n++) {
		RunResult end = g.r[n]->Finish();
		g.ExpectEnd(n, end, client);
		EXPECT_EQ(CountOf(end.err, "dropped a torn record"), 1) << end.Describe();
	}
}

// A follower waiting for the next input of an idle leader stops at SIGTERM, with the
// group killed and one line, instead of when the next record comes.
TEST_F(Replicate, FollowerStopsOnSigtermWhileWaiting)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	BigReadGroup g("term");
	ASSERT_TRUE(g.Start()) << g.r[0]->Err();
	// b has every record the stream holds (its progress in the bucket): the leader waits
	// for a client, so b waits for the stream.
	auto b_caught_up = [&](std::string *status) {
		*status = RunCommand({ kDetrun, "replicate", "--status", "--cluster", cluster->urls,
				       "--group", g.group })
				  .out;
		for (const std::string &line : SplitLines(*status))
			if (line.rfind("replica b: follower", 0) == 0 && line.size() > 7 &&
			    line.substr(line.size() - 7) == ", lag 0")
				return true;
		return false;
	};
	std::string status;
	for (int i = 0; i < 300 && !b_caught_up(&status); i++)
		usleep(100 * 1000);
	ASSERT_TRUE(b_caught_up(&status)) << status;
	g.r[1]->Signal(SIGTERM);
	bool stopped = g.r[1]->WaitForOutput("from outside while waiting for the next input", 60,
					     true);
	if (!stopped)
		g.r[1]->Signal(SIGKILL); // failed already: no need to wait for its hard limit
	EXPECT_TRUE(stopped) << g.r[1]->Err();
	RunResult b = g.r[1]->Finish();
	EXPECT_EQ(b.code, 125) << b.Describe();
	EXPECT_EQ(CountOf(b.err, "from outside"), 1) << b.Describe();
	EXPECT_TRUE(b.leftovers.empty()) << b.Describe();
	for (int n : { 0, 2 }) // the others go on until the leader is asked to end
		EXPECT_FALSE(g.r[n]->WaitForOutput("from outside", 0, true)) << g.r[n]->Err();
	g.r[0]->Signal(SIGTERM);
	for (int n : { 0, 2 }) {
		RunResult e = g.r[n]->Finish();
		EXPECT_EQ(e.code, 128 + SIGTERM) << e.Describe();
		EXPECT_TRUE(e.leftovers.empty()) << e.Describe();
	}
}

// The leader waits for the stream to acknowledge appends (two of the three servers are
// down: no quorum) and is given SIGTERM: it stops with the group killed and one line,
// instead of after the minute it waits for a cluster. The servers come back afterwards.
TEST_F(Replicate, LeaderStopsOnSigtermWhileAppendsWait)
{
	UseOwnCluster();
	BigReadGroup g("noquorum", "1000");
	ASSERT_TRUE(g.Start(1)) << g.r[0]->Err();
	cluster->Kill(1);
	cluster->Kill(2);
	RunOptions copt;
	copt.die_with_test = true;
	copt.timeout_s = 120;
	Child client({ kBigRead, "send", std::to_string(g.port), g.bytes }, copt);
	KillOnExit client_guard{ { &client } };
	g.r[0]->Signal(SIGTERM);
	bool stopped = g.r[0]->WaitForOutput("from outside while the stream had not acknowledged",
					     90, true);
	if (!stopped)
		g.r[0]->Signal(SIGKILL);
	EXPECT_TRUE(stopped) << g.r[0]->Err();
	RunResult end = g.r[0]->Finish();
	client.Signal(SIGKILL);
	client.Finish();
	ASSERT_TRUE(cluster->Start(1)); // for the tests after this one
	ASSERT_TRUE(cluster->Start(2));
	EXPECT_EQ(end.code, 125) << end.Describe();
	EXPECT_EQ(CountOf(end.err, "from outside"), 1) << end.Describe();
	EXPECT_TRUE(end.leftovers.empty()) << end.Describe();
	EXPECT_EQ(end.err.find("did not acknowledge"), std::string::npos) << end.Describe();
}

namespace
{

// "replica NODE: ..." from --status, or "" when the status has no such line.
std::string StatusLine(const std::string &group, const std::string &node)
{
	std::string status = RunCommand({ kDetrun, "replicate", "--status", "--cluster",
					  cluster->urls, "--group", group })
				     .out;
	for (const std::string &line : SplitLines(status))
		if (line.rfind("replica " + node + ":", 0) == 0)
			return line;
	return "";
}

// A kvserver group of two replicas, in the test's namespace or each on a node of its own:
// a leads, b follows.
struct KvPair {
	Group g;
	explicit KvPair(bool own_nodes = false)
	    : g({ "kvpair", "kv", { kKvServer, "PORT", "data", "ADDR" }, 1, true, own_nodes })
	{
	}
	bool Start()
	{
		g.Start(0, { "--lease-ms", "4000" });
		if (!g.r[0]->WaitForOutput("leads group", 90, true))
			return false;
		g.Start(1);
		return g.r[1]->WaitForOutput("follows group", 90, true);
	}
	// Both end alike at the client's shutdown request.
	void End()
	{
		EXPECT_EQ(RunCommand({ kKvClient, g.At(0), "1", "1", "8", "--shutdown" }).code, 0);
		RunResult a = g.r[0]->Finish(), b = g.r[1]->Finish();
		EXPECT_EQ(a.code, 0) << a.Describe();
		EXPECT_EQ(b.code, 0) << b.Describe();
		EXPECT_EQ(b.err.find("diverged"), std::string::npos) << b.Describe();
		EXPECT_NE(b.err.find("a replicated end"), std::string::npos) << b.Describe();
		EXPECT_TRUE(a.leftovers.empty() && b.leftovers.empty())
			<< a.Describe() << b.Describe();
		EXPECT_EQ(ReadFile(g.dir / "b/data.snapshot"), ReadFile(g.dir / "a/data.snapshot"));
	}
};

} // namespace

// SIGUSR1, and SIGCONT after a pause (an operator resuming a replica), reach a follower
// only: the leader's program never got them. The follower ignores them, says so once
// each, shows them in --status, and goes on replicating to the same end. Before, either
// stopped it ("signal 18 from outside: replay stopped").
TEST_F(Replicate, FollowerIgnoresSignalsThatDoNotEndIt)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	KvPair p;
	ASSERT_TRUE(p.Start()) << p.g.r[0]->Err() << p.g.r[1]->Err();
	// b runs the program (its progress in the bucket): its signal handling is set up.
	std::string running;
	for (int i = 0; i < 300; i++) {
		running = StatusLine(p.g.name, "b");
		if (running.rfind("replica b: follower, logical time ", 0) == 0 &&
		    running.find("logical time 0,") == std::string::npos)
			break;
		usleep(100 * 1000);
	}
	ASSERT_EQ(running.find("logical time 0,"), std::string::npos) << running;
	p.g.r[1]->Signal(SIGUSR1);
	p.g.r[1]->Signal(SIGSTOP);
	p.g.r[1]->Signal(SIGCONT);
	RunResult client = RunCommand({ kKvClient, p.g.At(0), "1", "20", "8" });
	EXPECT_EQ(client.code, 0) << client.Describe();
	for (const char *said : { "User defined signal 1 (signal 10) from outside ignored",
				  "Continued (signal 18) from outside ignored" })
		EXPECT_TRUE(p.g.r[1]->WaitForOutput(said, 60, true)) << p.g.r[1]->Err();
	std::string line;
	for (int i = 0; i < 100; i++) {
		line = StatusLine(p.g.name, "b");
		if (line.find("ignored from outside: SIGUSR1, SIGCONT") != std::string::npos)
			break;
		usleep(100 * 1000);
	}
	EXPECT_NE(line.find("follower"), std::string::npos) << line;
	EXPECT_NE(line.find("ignored from outside: SIGUSR1, SIGCONT"), std::string::npos) << line;
	p.End();
	EXPECT_EQ(CountOf(p.g.r[1]->Err(), "from outside ignored"), 2) << p.g.r[1]->Err();
}

// A second replica started with the name of a live one would share its consumer of the
// stream (both stalled, and nobody took over when the leader died). It is refused at
// start with one line; the live one goes on. A replica of a dead one's name (restarted)
// takes the name over, and a replica without --node gets a name of its own (HOST-PID).
TEST_F(Replicate, DuplicateNodeNamesAreRefused)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	KvPair p;
	ASSERT_TRUE(p.Start()) << p.g.r[0]->Err() << p.g.r[1]->Err();
	for (const char *node : { "a", "b" }) {
		RunOptions o;
		o.timeout_s = 60;
		RunResult twin = RunCommand({ kDetrun, "replicate", "--cluster", cluster->urls,
					      "--group", p.g.name, "--node", node, "--", kKvServer,
					      std::to_string(p.g.port), "data", "127.0.0.1" },
					    o);
		EXPECT_EQ(twin.code, 125) << twin.Describe();
		EXPECT_EQ(twin.err,
			  std::string("detrun: replicate: node ") + node + " is live in group " +
				  p.g.name +
				  " already (a replica of that name updates its progress): "
				  "give this replica another --node\n")
			<< twin.Describe();
	}
	p.g.r[1]->Signal(SIGKILL); // b dies; a b started again takes its name over
	p.g.r[1]->Finish();
	p.g.Start(1);
	ASSERT_TRUE(p.g.r[1]->WaitForOutput("follows group", 90, true)) << p.g.r[1]->Err();
	RunOptions o;
	o.die_with_test = true;
	o.cwd = p.g.dir / "c";
	mkdir(o.cwd.c_str(), 0755);
	Child unnamed({ "sh", "-c", "exec \"$0\" \"$@\" > stdout.txt", kDetrun, "replicate",
			"--cluster", cluster->urls, "--group", p.g.name, "--", kKvServer,
			std::to_string(p.g.port), "data", "127.0.0.1" },
		      o);
	ASSERT_TRUE(unnamed.WaitForOutput("follows group", 90, true)) << unnamed.Err();
	char host[64] = "";
	gethostname(host, sizeof(host) - 1);
	EXPECT_NE(unnamed.Err().find(std::string("node ") + host + "-" +
				     std::to_string(unnamed.Pid()) + " follows group"),
		  std::string::npos)
		<< unnamed.Err();
	p.End();
	RunResult c = unnamed.Finish();
	EXPECT_EQ(c.code, 0) << c.Describe();
	EXPECT_NE(c.err.find("a replicated end"), std::string::npos) << c.Describe();
}

// The lease's entry vanishes while the leader runs, as when it expires during a loss of
// the cluster's quorum longer than the lease (a KV delete here, the same "no entry" to
// every reader): the leader takes it again by create (before, it went on serving without
// a lease, "leader: none" in --status, and the next hiccup stopped two replicas). The
// follower, which saw renewals all along, does not take over; the group goes on and ends
// alike.
TEST_F(Replicate, LapsedLeaseIsTakenAgainByTheLeader)
{
	ASSERT_NO_FATAL_FAILURE(UseSharedCluster());
	KvPair p;
	ASSERT_TRUE(p.Start()) << p.g.r[0]->Err() << p.g.r[1]->Err();
	std::string ack;
	for (int n = 0; n < 3 && ack.find("\"seq\"") == std::string::npos; n++)
		ack = JetStreamPublish(n, "$KV.DETRUN_LEASE_" + p.g.name + ".leader", "",
				       "KV-Operation: DEL\r\n");
	ASSERT_NE(ack.find("\"seq\""), std::string::npos) << ack;
	EXPECT_TRUE(p.g.r[0]->WaitForOutput("the lease had lapsed (nobody held it); taken again",
					    60, true))
		<< p.g.r[0]->Err();
	std::string status;
	for (int i = 0; i < 100 && status.find("leader: a ") == std::string::npos; i++) {
		status = RunCommand({ kDetrun, "replicate", "--status", "--cluster", cluster->urls,
				      "--group", p.g.name })
				 .out;
		usleep(100 * 1000);
	}
	EXPECT_NE(status.find("leader: a "), std::string::npos) << status;
	RunResult write = RunCommand({ kKvClient, p.g.At(0), "1", "20", "8" });
	EXPECT_EQ(write.code, 0) << write.Describe();
	p.End();
	EXPECT_EQ(p.g.r[1]->Err().find("leads from"), std::string::npos) << p.g.r[1]->Err();
}

// A leader paused for longer than its lease (SIGSTOP): the follower takes over. Resumed,
// the old leader finds it was deposed and stops, saying so in words ("another node
// leads"; before, an idle one said "cannot write the log …: Operation not permitted").
// It comes back as a follower of the new leader, and the group ends alike.
TEST_F(Replicate, PausedLeaderResumesDeposedAndSaysSo)
{
	UseOwnCluster(); // nodes of their own: the paused leader keeps its port bound
	ASSERT_EQ(cluster->nodes.size(), 3u) << cluster->nodes_why;
	KvPair p(true);
	ASSERT_TRUE(p.Start()) << p.g.r[0]->Err() << p.g.r[1]->Err();
	p.g.r[0]->Signal(SIGSTOP);
	bool b_leads = p.g.r[1]->WaitForOutput("node b leads from t=", 120, true);
	p.g.r[0]->Signal(SIGCONT);
	ASSERT_TRUE(b_leads) << p.g.r[1]->Err();
	RunResult a = p.g.r[0]->Finish();
	EXPECT_EQ(a.code, 125) << a.Describe();
	EXPECT_NE(a.err.find("another node leads"), std::string::npos) << a.Describe();
	EXPECT_EQ(a.err.find("Operation not permitted"), std::string::npos) << a.Describe();
	EXPECT_TRUE(a.leftovers.empty()) << a.Describe();
	p.g.Start(0);
	ASSERT_TRUE(p.g.r[0]->WaitForOutput("follows group", 90, true)) << p.g.r[0]->Err();
	EXPECT_EQ(RunCommand({ kKvClient, p.g.At(1), "1", "20", "8" }).code, 0);
	EXPECT_EQ(RunCommand({ kKvClient, p.g.At(1), "1", "1", "8", "--shutdown" }).code, 0);
	RunResult end[2] = { p.g.r[0]->Finish(), p.g.r[1]->Finish() };
	for (const RunResult &e : end) {
		EXPECT_EQ(e.code, 0) << e.Describe();
		EXPECT_EQ(e.err.find("diverged"), std::string::npos) << e.Describe();
	}
	EXPECT_EQ(ReadFile(p.g.dir / "b/data.snapshot"), ReadFile(p.g.dir / "a/data.snapshot"));
}

namespace
{

const std::string kReply = std::string(GUEST_DIR) + "/repl_reply";

// A connection to 127.0.0.1:PORT, tried again while nobody listens there yet (bounded).
int ConnectTo(int port)
{
	for (int tries = 0; tries < 1200; tries++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = {};
		a.sin_family = AF_INET;
		a.sin_port = htons((uint16_t)port);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		close(fd);
		usleep(50 * 1000);
	}
	return -1;
}

// One line from fd (up to its newline), waiting at most limit_s for it; what came when the
// peer closed or the limit passed otherwise.
std::string ReadLineFrom(int fd, int limit_s)
{
	std::string line;
	char c;
	struct pollfd p = { fd, POLLIN, 0 };
	while (line.empty() || line.back() != '\n') {
		if (poll(&p, 1, limit_s * 1000) <= 0 || read(fd, &c, 1) != 1)
			break;
		line += c;
	}
	return line;
}

// Sends LINE to repl_reply on fd and waits (bounded) until the file REPLIED says the server
// wrote its reply; then whether the reply is in fd's socket already.
bool ReplyThereOnceWritten(int fd, const std::string &line, const std::string &replied,
			   bool *written)
{
	*written = false;
	if (write(fd, line.data(), line.size()) != (ssize_t)line.size())
		return false;
	for (int i = 0; i < 1200 && !*written; i++) {
		*written = ReadFile(replied).find("replied " + line) != std::string::npos;
		if (!*written)
			usleep(50 * 1000);
	}
	char c;
	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

} // namespace

// Output commit: the leader's program goes on past an input the stream has not
// acknowledged, but its reply leaves only with the acknowledgement. Natively, once
// repl_reply notes (in a file: no output) that it wrote a reply, the reply is in the
// client's socket. Replicated with every NATS server stopped (SIGSTOP: nothing can be
// acknowledged), the program writes its reply and notes it, and the client has nothing;
// resumed, the client gets the reply — or, had the leader stopped meanwhile, never would.
TEST_F(Replicate, ReplyWaitsForItsInputsAcknowledgement)
{
	UseOwnCluster();
	TempDir dir("repl-held");
	RunOptions nopt;
	nopt.die_with_test = true;
	nopt.cwd = dir.path;
	int nport = FreePort();
	Child native({ kReply, std::to_string(nport) }, nopt);
	KillOnExit native_guard{ { &native } };
	int nfd = ConnectTo(nport);
	ASSERT_GE(nfd, 0);
	bool written;
	EXPECT_TRUE(ReplyThereOnceWritten(nfd, "one\n", dir / "replied.txt", &written));
	EXPECT_TRUE(written);
	close(nfd);
	EXPECT_EQ(native.Finish().code, 0);

	std::string group = GroupName("held");
	int port = FreePort();
	std::unique_ptr<Child> r[3];
	KillReplicasOnExit guard{ r };
	r[0] = Replica(dir, group, "a", { kReply, std::to_string(port) }, { "--lease-ms", "4000" });
	ASSERT_TRUE(r[0]->WaitForOutput("leads group", 90, true)) << r[0]->Err();
	int fd = ConnectTo(port);
	ASSERT_GE(fd, 0) << r[0]->Err();
	EXPECT_EQ(write(fd, "one\n", 4), 4);
	EXPECT_EQ(ReadLineFrom(fd, 120), "got one\n") << r[0]->Err();
	for (auto &s : cluster->servers)
		s->Signal(SIGSTOP);
	bool there = ReplyThereOnceWritten(fd, "two\n", dir / "a/replied.txt", &written);
	for (auto &s : cluster->servers)
		s->Signal(SIGCONT);
	EXPECT_TRUE(written) << "the program did not go on past its unacknowledged input: "
			     << r[0]->Err();
	EXPECT_FALSE(there) << "a reply left before its input was acknowledged";
	std::string answer = ReadLineFrom(fd, 240);
	close(fd);
	RunResult a = r[0]->Finish();
	if (answer.empty()) { // the leader stopped before the acknowledgement came
		EXPECT_EQ(a.code, 125) << a.Describe();
	} else {
		EXPECT_EQ(answer, "got two\n") << a.Describe();
		EXPECT_EQ(a.code, 0) << a.Describe();
	}
	EXPECT_TRUE(a.leftovers.empty()) << a.Describe();
}

namespace
{

// Whether --status's output OUT has a row for each of a (leading), b and c (following).
bool ListsEveryReplica(const std::string &out)
{
	return out.find("replica a: leader,") != std::string::npos &&
	       out.find("replica b: follower,") != std::string::npos &&
	       out.find("replica c: follower,") != std::string::npos;
}

RunResult Status(const std::string &group)
{
	return RunCommand(
		{ kDetrun, "replicate", "--status", "--cluster", cluster->urls, "--group", group });
}

} // namespace

// --status while one NATS server of the three is down. The server led the stream of the
// lease's bucket, which elects another leader (reads time out meanwhile); and afterwards
// the listing libnats offers (kvStore_Keys, a consumer of one replica, placed on any of the
// stream's servers) timed out whenever its consumer was placed on the dead server. Before,
// --status said "no group" during the election, and listed no replica at all when the
// listing failed. Now each run lists every replica, from what the remaining quorum answers.
TEST_F(Replicate, StatusListsEveryReplicaWhileAServerIsDown)
{
	UseOwnCluster();
	Group g({ "status", "kv", { kKvServer, "PORT", "data", "ADDR" }, 1, true, false });
	// A lease longer than any election here: the progress keys (which live as long as the
	// lease) outlast it, and no follower takes over.
	ASSERT_TRUE(g.StartLeaderAndFollowers("60000"));
	RunResult before;
	for (int i = 0; i < 300 && !ListsEveryReplica((before = Status(g.name)).out); i++)
		usleep(100 * 1000);
	ASSERT_TRUE(ListsEveryReplica(before.out)) << before.Describe();
	int victim = StreamLeader("KV_DETRUN_LEASE_" + g.name, 0);
	ASSERT_TRUE(victim >= 0 && victim < 3) << victim;
	cluster->Kill(victim);
	for (int run = 0; run < 4; run++) {
		RunResult r = Status(g.name);
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_TRUE(ListsEveryReplica(r.out))
			<< "run " << run << " with server " << victim + 1 << " down:\n"
			<< r.Describe();
		EXPECT_EQ(r.out.find("cannot"), std::string::npos) << r.Describe();
	}
	ASSERT_TRUE(cluster->Start(victim)); // for the tests after this one
	EXPECT_EQ(RunCommand({ kKvClient, g.At(0), "1", "1", "8", "--shutdown" }).code, 0);
	for (int n = 0; n < 3; n++) {
		RunResult e = g.r[n]->Finish();
		EXPECT_EQ(e.code, 0) << e.Describe();
		EXPECT_EQ(e.err.find("leads from"), std::string::npos) << e.Describe();
	}
}

namespace
{

// What server N answers to a direct get of the last message on SUBJECT in STREAM (any
// replica of the stream answers from its own copy, also without a quorum): the reply's
// headers and payload, "NATS/1.0 404 Message Not Found" when it has none.
std::string DirectGet(int n, const std::string &stream, const std::string &subject)
{
	std::string out = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true}\r\n"
			  "SUB _INBOX.dget 1\r\nPUB $JS.API.DIRECT.GET." +
			  stream + "." + subject + " _INBOX.dget 0\r\n\r\n";
	// The reply: "HMSG _INBOX.dget 1 HEADER_BYTES TOTAL_BYTES\r\n" and TOTAL_BYTES more;
	// where they begin in what came, once all have come.
	size_t total = 0;
	auto reply = [&total](const std::string &in) {
		size_t at = in.find("HMSG _INBOX.dget 1 ");
		size_t eol = at == std::string::npos ? at : in.find("\r\n", at);
		if (eol == std::string::npos)
			return std::string::npos;
		total = std::stoul(in.substr(in.rfind(' ', eol) + 1));
		return in.size() >= eol + 2 + total ? eol + 2 : std::string::npos;
	};
	std::string in = NatsExchange(n, out, 50, [&](const std::string &got) {
		return reply(got) != std::string::npos;
	});
	size_t at = reply(in);
	if (at != std::string::npos)
		return in.substr(at, total);
	return in.rfind("(cannot ", 0) == 0 ? in : "(no answer: " + in + ")";
}

// "leads from t=T (epoch E, after stream sequence S)" of NODE's own go-live line in ERR
// ("node NODE leads from t=...", not a go-live it replayed: "node x: node NODE leads ...");
// "" if there is none.
std::string OwnGoLiveFacts(const std::string &err, char node)
{
	size_t at = err.find(std::string("replicate: node ") + node + " leads from t=");
	return at == std::string::npos ? "" : GoLiveFacts(err.substr(at));
}

// The group ends at a SHUTDOWN request to LEADER; every replica ends alike, without
// divergence, with the same data file and snapshot as the leader's.
void EndWithEqualFiles(Group &g, int leader)
{
	EXPECT_EQ(RunCommand({ kKvClient, g.At(leader), "1", "1", "8", "--shutdown" }).code, 0);
	RunResult end[3];
	for (int n = 0; n < 3; n++)
		end[n] = g.r[n]->Finish();
	std::string node(1, 'a' + leader);
	std::string data = ReadFile(g.dir / (node + "/data"));
	std::string snap = ReadFile(g.dir / (node + "/data.snapshot"));
	EXPECT_FALSE(data.empty() || snap.empty());
	for (int n = 0; n < 3; n++) {
		std::string other(1, 'a' + n);
		EXPECT_EQ(end[n].code, 0) << end[n].Describe();
		EXPECT_EQ(end[n].err.find("diverged"), std::string::npos)
			<< end[n].Describe() << "\nthe others':\n"
			<< end[(n + 1) % 3].err << end[(n + 2) % 3].err;
		EXPECT_TRUE(end[n].leftovers.empty()) << end[n].Describe();
		EXPECT_EQ(ReadFile(g.dir / (other + "/data")), data)
			<< "node " << other << ": "
			<< CountOf(ReadFile(g.dir / (other + "/data")), "\n")
			<< " lines, the leader's " << CountOf(data, "\n");
		EXPECT_EQ(ReadFile(g.dir / (other + "/data.snapshot")), snap) << "node " << other;
	}
}

} // namespace

// The cluster loses its quorum for longer than the lease: two of the three NATS servers
// are killed while a client writes through the leader, until the lease's entry has
// expired on the server left (a direct get there finds none: the outage outlasted the
// lease, 4 s); then they are started again. Meanwhile nothing is appended or renewed and
// the client gets no acknowledgement. Afterwards either the old leader holds the lease
// again and goes on (taken again by create where the entry expired everywhere; renewed
// where the servers that came back still hold it, as every run here had it), or a
// follower took it first and the old leader stops at once (exit 125) and rejoins as a
// follower. A replica acknowledges a write only once the stream holds it, and the stream
// takes appends of one leader only (each names the sequence it expects): had two replicas
// acknowledged at once, the writes of the one refused would be lost. So: one leader, whom
// --status names; every write the client saw acknowledged is readable on it afterwards;
// every replica ends alike with the same files.
// Paused servers (SIGSTOP, then SIGCONT: a partition) are not tested: nats-server 2.9.10's
// copies of the stream then diverge (the one left running kept 4,026 messages, the two
// resumed 514, and consumers placed on them never went on).
TEST_F(Replicate, QuorumLossLongerThanTheLease)
{
	UseOwnCluster();
	ASSERT_EQ(cluster->nodes.size(), 3u) << cluster->nodes_why;
	const int keys = 2000;
	Group g({ "quorum", "kv", { kKvServer, "PORT", "data", "ADDR" }, keys, true, true });
	ASSERT_TRUE(g.StartLeaderAndFollowers("4000"));
	g.StartClient();
	ASSERT_TRUE(g.client->WaitForOutput("progress 500\n", 600))
		<< g.client->Finish().Describe();
	cluster->Kill(1);
	cluster->Kill(2);
	std::string bucket = "DETRUN_LEASE_" + g.name, lease;
	for (int i = 0; i < 1200; i++) {
		lease = DirectGet(0, "KV_" + bucket, "$KV." + bucket + ".leader");
		if (lease.find("404") != std::string::npos)
			break;
		usleep(100 * 1000);
	}
	bool restarted = cluster->Start(1) && cluster->Start(2);
	ASSERT_NE(lease.find("404"), std::string::npos) << "the lease never expired: " << lease;
	ASSERT_TRUE(restarted);
	RunResult wrote = g.client->Finish();
	EXPECT_NE(wrote.out.find("acked " + std::to_string(keys) + " of"), std::string::npos)
		<< wrote.Describe();
	// Who leads now, as --status says once the lease is held again ("leader: none" while
	// it has lapsed; before, for minutes, while the old leader served without it).
	std::string status;
	int leader = -1;
	for (int i = 0; i < 600 && leader < 0; i++) {
		status = Status(g.name).out;
		for (int n = 0; n < 3; n++)
			if (status.find(std::string("leader: ") + char('a' + n) + " (epoch") !=
			    std::string::npos)
				leader = n;
		if (leader < 0)
			usleep(100 * 1000);
	}
	ASSERT_GE(leader, 0) << status << g.r[0]->Err() << g.r[1]->Err() << g.r[2]->Err();
	std::string facts;
	if (leader == 0) {
		for (int n = 1; n < 3; n++)
			EXPECT_EQ(g.r[n]->Err().find("leads from"), std::string::npos)
				<< g.r[n]->Err();
	} else {
		facts = OwnGoLiveFacts(g.r[leader]->Err(), char('a' + leader));
		RunResult a = g.r[0]->Finish();
		EXPECT_EQ(a.code, 125) << a.Describe();
		EXPECT_NE(a.err.find("lost the lease"), std::string::npos) << a.Describe();
		EXPECT_EQ(a.err.find("taken again"), std::string::npos) << a.Describe();
		EXPECT_TRUE(a.leftovers.empty()) << a.Describe();
		g.Start(0);
		ASSERT_TRUE(g.r[0]->WaitForOutput("follows group", 90, true)) << g.r[0]->Err();
	}
	// Said for the README's fault table: which of the outcomes this run had, and whether a
	// follower won the lease too and followed on (the bucket's copies disagreed).
	int also_won = 0;
	for (int n = 1; n < 3; n++)
		also_won += g.r[n]->Err().find("this one follows on") != std::string::npos;
	fprintf(stderr,
		"quorum loss: node %c leads afterwards; the old leader %s; %d follower(s) also "
		"won the lease and followed on\n",
		'a' + leader,
		leader ? "stopped"
		: g.r[0]->Err().find("taken again") != std::string::npos
			? "took the lease again"
			: "renewed its lease (the servers that came back still held it)",
		also_won);
	RunResult check = RunCommand({ kClient, "kv", g.At(leader), std::to_string(keys), "check" },
				     ClientOptions());
	EXPECT_NE(check.out.find("readable " + std::to_string(keys) + " of"), std::string::npos)
		<< check.Describe();
	for (int n = 0; n < 3 && !facts.empty(); n++) {
		if (n != leader) {
			EXPECT_TRUE(g.r[n]->WaitForOutput(facts + ", here at the same logical time",
							  300, true))
				<< g.r[n]->Err();
		}
	}
	EndWithEqualFiles(g, leader);
}

// The seven-kill soak: while a client writes, the leader is killed with SIGKILL, a
// follower takes over, the killed replica is started again and rejoins (it has replayed
// the group up to the new leader's go-live mark, from the group's starting files) — seven
// times, each new leader killed in turn. No write the client saw acknowledged is lost,
// and the three replicas end with the same files. The takeover and rejoin times are
// printed (for the README's fault table), not asserted.
TEST_F(Replicate, SevenLeaderKillsLoseNoAcknowledgedWrite)
{
	UseOwnCluster();
	ASSERT_EQ(cluster->nodes.size(), 3u) << cluster->nodes_why;
	const int kills = 7, step = 500, keys = (kills + 1) * step;
	Group g({ "soak", "kv", { kKvServer, "PORT", "data", "ADDR" }, keys, true, true });
	ASSERT_TRUE(g.StartLeaderAndFollowers("4000"));
	g.StartClient();
	int leader = 0;
	std::string facts;
	for (int k = 1; k <= kills; k++) {
		ASSERT_TRUE(
			g.client->WaitForOutput("progress " + std::to_string(k * step) + "\n", 600))
			<< g.client->Finish().Describe();
		double killed_at = MonoNow();
		g.r[leader]->Signal(SIGKILL);
		g.r[leader]->Finish();
		int next = -1;
		for (int i = 0; i < 600 && next < 0; i++)
			for (int n = 0; n < 3 && next < 0; n++)
				if (n != leader &&
				    g.r[n]->WaitForOutput(std::string("replicate: node ") +
								  char('a' + n) + " leads from t=",
							  0.1, true))
					next = n;
		ASSERT_GE(next, 0) << "kill " << k << ": nobody took over\n"
				   << g.r[0]->Err() << g.r[1]->Err() << g.r[2]->Err();
		double takeover = MonoNow() - killed_at;
		facts = OwnGoLiveFacts(g.r[next]->Err(), char('a' + next));
		ASSERT_FALSE(facts.empty()) << g.r[next]->Err();
		int other = 3 - leader - next;
		EXPECT_EQ(OwnGoLiveFacts(g.r[other]->Err(), char('a' + other)), "")
			<< "two replicas took over\n"
			<< g.r[other]->Err();
		double restarted_at = MonoNow();
		g.Start(leader); // the killed replica comes back, follows, and catches up
		ASSERT_TRUE(g.r[leader]->WaitForOutput(facts + ", here at the same logical time",
						       300, true))
			<< g.r[leader]->Finish().Describe();
		fprintf(stderr,
			"kill %d: node %c killed, node %c took over in %.1f s, node %c rejoined "
			"(replayed up to the takeover) in %.1f s\n",
			k, 'a' + leader, 'a' + next, takeover, 'a' + leader,
			MonoNow() - restarted_at);
		leader = next;
	}
	RunResult wrote = g.client->Finish();
	EXPECT_NE(wrote.out.find("acked " + std::to_string(keys) + " of"), std::string::npos)
		<< wrote.Describe();
	RunResult check = RunCommand({ kClient, "kv", g.At(leader), std::to_string(keys), "check" },
				     ClientOptions());
	EXPECT_NE(check.out.find("readable " + std::to_string(keys) + " of"), std::string::npos)
		<< check.Describe();
	EndWithEqualFiles(g, leader);
}
