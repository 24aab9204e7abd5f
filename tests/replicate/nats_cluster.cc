// The NATS cluster the replicate tests share (ctest's fixture ReplicateCluster, set in
// tests/suite_properties.cmake): `replicate_nats_cluster setup DIR` starts a 3-node
// JetStream cluster on loopback with its files under DIR and returns once JetStream answers;
// the tests read DIR/cluster (`urls=...`, `base=...`) through DETRUN_NATS_CLUSTER.
// `replicate_nats_cluster cleanup DIR` stops it and removes DIR.
//
// The servers are the children of a watchdog that setup leaves running (its pid in
// DIR/watchdog.pid), in a session of its own: it holds the cluster's block of ports (the
// harness's port lock, so no test process takes them), stops the servers at cleanup's
// SIGTERM, and also when the process that ran setup (ctest) is gone without a cleanup: a
// Ctrl-C'd or killed ctest. The servers get SIGTERM if the watchdog itself dies
// (PR_SET_PDEATHSIG). A setup first clears whatever an earlier run left in DIR.
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "harness.h"

namespace
{

const int kServers = 3;

int PidfdOpen(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

// Whether the process behind PIDFD ends within SECONDS.
bool EndsWithin(int pidfd, int seconds)
{
	struct pollfd p = { pidfd, POLLIN, 0 };
	return poll(&p, 1, seconds * 1000) == 1;
}

int RemoveEntry(const char *path, const struct stat *, int, struct FTW *)
{
	return remove(path) < 0 ? -1 : 0;
}

void RemoveTree(const std::string &dir)
{
	nftw(dir.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

// The process whose pid DIR/NAME holds, if it still runs with DIR or a file of DIR among its
// arguments (pids are reused: a stale file may name anything); -1 otherwise.
pid_t OursFromPidFile(const std::string &dir, const std::string &name)
{
	pid_t pid = atoi(ReadFile(dir + "/" + name).c_str());
	if (pid <= 0)
		return -1;
	std::string args = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
	bool ours = args.find(dir + '/') != std::string::npos ||
		    args.find(dir + '\0') != std::string::npos;
	return ours ? pid : -1;
}

// Ends the process DIR/NAME names: SIGTERM, then SIGKILL after 20 s.
void EndFromPidFile(const std::string &dir, const std::string &name)
{
	pid_t pid = OursFromPidFile(dir, name);
	int pidfd = pid > 0 ? PidfdOpen(pid) : -1;
	if (pidfd < 0)
		return;
	kill(pid, SIGTERM);
	if (!EndsWithin(pidfd, 20)) {
		fprintf(stderr, "nats_cluster: %s (pid %d) ignored SIGTERM for 20 s: killed\n",
			name.c_str(), pid);
		kill(pid, SIGKILL);
		EndsWithin(pidfd, 20);
	}
	close(pidfd);
}

// Stops what a run left in DIR (the watchdog, and servers that outlived it) and removes it.
void Clear(const std::string &dir)
{
	EndFromPidFile(dir, "watchdog.pid");
	for (int n = 1; n <= kServers; n++)
		EndFromPidFile(dir, "n" + std::to_string(n) + ".pid");
	RemoveTree(dir);
}

// Server N's configuration (the layout of replicate/cluster.sh: clients on BASE+N-1,
// routes on BASE+10.., monitoring on BASE+20..).
std::string Conf(const std::string &dir, int base, int n)
{
	auto port = [&](int off) { return std::to_string(base + off + n - 1); };
	std::string routes;
	for (int r = 0; r < kServers; r++)
		routes += (r ? ", " : "") + std::string("nats://127.0.0.1:") +
			  std::to_string(base + 10 + r);
	return "server_name: n" + std::to_string(n) + "\nlisten: 127.0.0.1:" + port(0) +
	       "\nhttp: 127.0.0.1:" + port(20) + "\njetstream { store_dir: \"" + dir + "/n" +
	       std::to_string(n) + "\" }\ncluster { name: detrun, listen: 127.0.0.1:" + port(10) +
	       ", routes: [" + routes + "] }\n";
}

// Starts server N as a child that gets SIGTERM when this process dies; its pid.
pid_t StartServer(const std::string &dir, int base, int n)
{
	std::string name = dir + "/n" + std::to_string(n);
	WriteFile(name + ".conf", Conf(dir, base, n));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127); // the watchdog died before the line above
		int log = open((name + ".log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(log, 1);
		dup2(log, 2);
		std::string conf = name + ".conf";
		execlp("nats-server", "nats-server", "-c", conf.c_str(), (char *)nullptr);
		_exit(127);
	}
	if (pid > 0)
		WriteFile(name + ".pid", std::to_string(pid) + "\n");
	return pid;
}

// A page of server 1's monitoring port ("" if it does not answer).
std::string Monitor(int base, const std::string &page)
{
	std::string cmd = "curl -sf http://127.0.0.1:" + std::to_string(base + 20) + page;
	FILE *f = popen(cmd.c_str(), "r");
	if (!f)
		return "";
	std::string out;
	char buf[4096];
	for (size_t got; (got = fread(buf, 1, sizeof(buf), f)) > 0;)
		out.append(buf, got);
	pclose(f);
	return out;
}

// Whether JetStream has a meta leader within 60 s (the cluster's servers found each other
// and elected it); false as soon as a server ends (reaped: its pid becomes -1).
bool WaitForJetStream(int base, pid_t *servers)
{
	for (int i = 0; i < 600; i++) {
		for (int n = 0; n < kServers; n++)
			if (servers[n] < 0 || waitpid(servers[n], nullptr, WNOHANG) != 0) {
				servers[n] = -1;
				return false;
			}
		if (Monitor(base, "/jsz").find("\"leader\"") != std::string::npos)
			return true;
		usleep(100 * 1000);
	}
	return false;
}

void StopServers(const pid_t *servers)
{
	for (int n = 0; n < kServers; n++)
		if (servers[n] > 0)
			kill(servers[n], SIGTERM);
	for (int n = 0; n < kServers; n++) {
		int pidfd = servers[n] > 0 ? PidfdOpen(servers[n]) : -1;
		if (pidfd >= 0 && !EndsWithin(pidfd, 20))
			kill(servers[n], SIGKILL);
		if (pidfd >= 0)
			close(pidfd);
		if (servers[n] > 0)
			waitpid(servers[n], nullptr, 0);
	}
}

// Until SIGTERM (cleanup) or the end of OWNER (the ctest that ran setup), whichever comes
// first.
void WaitForTheEnd(pid_t owner)
{
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, nullptr);
	struct pollfd p[2] = { { signalfd(-1, &term, SFD_CLOEXEC), POLLIN, 0 },
			       { PidfdOpen(owner), POLLIN, 0 } };
	if (p[0].fd < 0 || p[1].fd < 0)
		return;
	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
}

// The watchdog: starts the servers, says "ready" (or why not) on REPORT, then waits for the
// end and stops them. Output goes to DIR/watchdog.log: ctest waits for the end of the
// setup's own output, which this process must not hold.
[[noreturn]] void Watchdog(const std::string &dir, pid_t owner, int report)
{
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	int log = open((dir + "/watchdog.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int null = open("/dev/null", O_RDONLY);
	dup2(null, 0);
	dup2(log, 1);
	dup2(log, 2);
	dup3(report, 3, O_CLOEXEC);
	syscall(SYS_close_range, 4, ~0U, 0); // descriptors of ctest's (its logs)
	report = 3;
	WriteFile(dir + "/watchdog.pid", std::to_string(getpid()) + "\n");

	int base = ReservedPorts(2 * 10 + kServers); // held until this process ends
	pid_t servers[kServers] = {};
	for (int n = 0; n < kServers; n++)
		servers[n] = StartServer(dir, base, n + 1);
	std::string urls;
	for (int n = 0; n < kServers; n++)
		urls += (n ? "," : "") + std::string("nats://127.0.0.1:") +
			std::to_string(base + n);
	bool up = WaitForJetStream(base, servers);
	std::string said = up ? "ready " + urls
			      : "no JetStream meta leader within 60 s: see " + dir + "/n*.log\n";
	if (up)
		WriteFile(dir + "/cluster",
			  "urls=" + urls + "\nbase=" + std::to_string(base) + "\n");
	if (write(report, said.data(), said.size()) < 0)
		up = false; // setup is gone: nobody will use the cluster
	close(report);
	if (up)
		WaitForTheEnd(owner);
	StopServers(servers);
	RemoveTree(dir);
	_exit(0);
}

int Setup(const std::string &dir)
{
	Clear(dir);
	if (mkdir(dir.c_str(), 0755)) {
		fprintf(stderr, "nats_cluster: cannot make %s: %s\n", dir.c_str(), strerror(errno));
		return 1;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		perror("nats_cluster: pipe");
		return 1;
	}
	pid_t owner = getppid();
	pid_t pid = fork();
	if (pid < 0) {
		perror("nats_cluster: fork");
		return 1;
	}
	if (pid == 0) {
		close(p[0]);
		Watchdog(dir, owner, p[1]);
	}
	close(p[1]);
	std::string said;
	char buf[512];
	for (ssize_t got; (got = read(p[0], buf, sizeof(buf))) != 0;)
		if (got > 0)
			said.append(buf, (size_t)got);
		else if (errno != EINTR)
			break;
	if (said.rfind("ready ", 0) == 0) {
		printf("NATS cluster %s, files under %s\n", said.substr(6).c_str(), dir.c_str());
		return 0;
	}
	fprintf(stderr, "nats_cluster: %s", said.empty() ? "the watchdog died\n" : said.c_str());
	Clear(dir);
	return 1;
}

} // namespace

int main(int argc, char **argv)
{
	std::string cmd = argc == 3 ? argv[1] : "", dir = argc == 3 ? argv[2] : "";
	if (cmd == "setup" && dir[0] == '/')
		return Setup(dir);
	if (cmd == "cleanup" && dir[0] == '/') {
		Clear(dir);
		return 0;
	}
	fprintf(stderr, "usage: %s setup|cleanup /ABSOLUTE/DIR\n", argv[0]);
	return 2;
}
