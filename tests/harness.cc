// The test harness shared by the end-to-end suites: running a command in its own session
// with a hard timeout, collecting its output, and proving nothing was left behind.
#include "harness.h"

#include <sys/ioctl.h>

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifndef DETRUN_PATH
#error "DETRUN_PATH must be defined (path of build/detrun)"
#endif

// ---------------------------------------------------------------------------------------
// Running a command

namespace
{
// The test binary's own inherited descriptors beyond stdio (ctest's LastTest.log.tmp) are
// the runner's: a command a test starts would inherit them, and their file position, which
// other tests' output moves, showed in the command's /proc/PID/fdinfo. Descriptors a test
// opens itself are passed as before.
struct RunnerDescriptorsStayHere {
	RunnerDescriptorsStayHere()
	{
		DIR *d = opendir("/proc/self/fd");
		if (!d)
			return;
		for (struct dirent *e; (e = readdir(d));) {
			int fd = atoi(e->d_name);
			if (fd > 2 && fd != dirfd(d))
				fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
		}
		closedir(d);
	}
} runner_descriptors_stay_here;
} // namespace

double MonoNow()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

// A /proc file's text; empty when the process is gone meanwhile (libstdc++'s streams
// would throw on that read error).
std::string ReadProcFile(const std::string &path)
{
	std::string text;
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return text;
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		text.append(buf, (size_t)n);
	close(fd);
	return text;
}

std::vector<ProcInfo> ListProcesses()
{
	std::vector<ProcInfo> v;
	DIR *d = opendir("/proc");
	if (!d)
		return v;
	while (struct dirent *de = readdir(d)) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		std::string stat = ReadProcFile(std::string("/proc/") + de->d_name + "/stat");
		size_t open = stat.find('('), close = stat.rfind(')');
		if (open == std::string::npos || close == std::string::npos)
			continue;
		ProcInfo p{};
		p.pid = (pid_t)pid;
		p.comm = stat.substr(open + 1, close - open - 1);
		if (sscanf(stat.c_str() + close + 1, " %c %d %d %d", &p.state, &p.ppid, &p.pgrp,
			   &p.sid) != 4)
			continue;
		std::string cmd = ReadProcFile(std::string("/proc/") + de->d_name + "/cmdline");
		std::replace(cmd.begin(), cmd.end(), '\0', ' ');
		p.cmdline = cmd;
		v.push_back(p);
	}
	closedir(d);
	return v;
}

// Processes that belong to the run started as `leader` (its own session and group), or
// were re-parented to us, plus all their descendants.
// Commands started by Child that are still running: our children, but not left behind.
std::set<pid_t> g_running;

std::vector<ProcInfo> FindLeftovers(pid_t leader)
{
	pid_t self = getpid();
	std::vector<ProcInfo> all = ListProcesses();
	std::set<pid_t> mark;
	for (const auto &p : all)
		if (p.pid != self && (p.pgrp == leader || p.sid == leader || p.ppid == self) &&
		    !g_running.count(p.sid))
			mark.insert(p.pid);
	for (bool grew = true; grew;) {
		grew = false;
		for (const auto &p : all)
			if (!mark.count(p.pid) && mark.count(p.ppid) && p.pid != self) {
				mark.insert(p.pid);
				grew = true;
			}
	}
	std::vector<ProcInfo> out;
	for (const auto &p : all)
		if (mark.count(p.pid))
			out.push_back(p);
	return out;
}

bool ExitsWithin(pid_t pid, int seconds)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return true; /* already gone */
	struct pollfd p = { fd, POLLIN, 0 };
	int r;
	while ((r = poll(&p, 1, seconds * 1000)) < 0 && errno == EINTR) {
	}
	close(fd);
	return r > 0;
}

// waitpid(pid) for at most `seconds` (a killed process stuck in the kernel must not hang
// the test). Returns true if it was reaped.
bool WaitBounded(pid_t pid, int *status, int seconds)
{
	ExitsWithin(pid, seconds);
	return waitpid(pid, status, WNOHANG) == pid;
}

// Kills and reaps whatever FindLeftovers reports; returns their descriptions.
std::vector<std::string> KillLeftovers(pid_t leader)
{
	std::vector<std::string> desc;
	for (int round = 0; round < 50; round++) {
		std::vector<ProcInfo> left = FindLeftovers(leader);
		if (left.empty())
			break;
		for (const auto &p : left) {
			if (round == 0) {
				std::ostringstream s;
				s << "pid " << p.pid << " (" << p.comm << ") state " << p.state
				  << (p.state == 'Z' ? " (zombie, not reaped)" : "")
				  << (p.ppid == getpid()
					      ? " [re-parented to the test: its parent exited first]"
					      : "")
				  << " ppid " << p.ppid << " pgrp " << p.pgrp << " sid " << p.sid
				  << ": " << p.cmdline;
				desc.push_back(s.str());
			}
			kill(p.pid, SIGKILL);
		}
		// reap the ones that are our children (those that become ours meanwhile are
		// found by the next round); others are reaped by their parents, which are being
		// killed too. Never waitpid(-1): it reaps another command that ended meanwhile (a
		// client still to be finished), whose Finish then spun until its hard limit.
		for (const auto &p : left)
			if (p.ppid == getpid())
				WaitBounded(p.pid, nullptr, 10);
	}
	return desc;
}

namespace
{
int RemoveEntry(const char *path, const struct stat *, int, struct FTW *)
{
	return remove(path) < 0 ? -1 : 0;
}

// Every test process has a TMPDIR of its own. Groups run with the same seed, so two test
// processes running at once (ctest -j) would have `mktemp` pick the same name under /tmp at
// the same moment, and one of them would retry under another name and print other output.
struct PrivateTmpdir {
	std::string path;
	PrivateTmpdir()
	{
		char name[] = "/tmp/detrun-tmpdir-XXXXXX";
		if (mkdtemp(name)) {
			path = name;
			setenv("TMPDIR", name, 1);
		}
	}
	~PrivateTmpdir()
	{
		if (!path.empty())
			nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
	}
} private_tmpdir;
} // namespace

void EnsureSubreaper()
{
	static bool done = [] {
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		return true;
	}();
	(void)done;
}

Child::Child(const std::vector<std::string> &argv, const RunOptions &opt) : opt_(opt)
{
	EnsureSubreaper();
	r_.argv = argv;
	int outp[2], errp[2];
	if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		r_.err = std::string("pipe: ") + strerror(errno);
		return;
	}
	std::vector<char *> cargv;
	for (const auto &a : argv)
		cargv.push_back(const_cast<char *>(a.c_str()));
	cargv.push_back(nullptr);

	fflush(stdout);
	fflush(stderr);
	pid_t parent = getpid();
	pid_ = fork();
	if (pid_ < 0) {
		r_.err = std::string("fork: ") + strerror(errno);
		return;
	}
	if (pid_ == 0) {
		setsid(); // own session and process group: pgid == sid == pid
		if (opt.die_with_test && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
			_exit(126); // or the test process died before the death signal was set
		for (int s = 1; s < NSIG; s++)
			signal(s, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, nullptr);
		int in = opt.stdin_fd >= 0 ? opt.stdin_fd : open("/dev/null", O_RDONLY);
		if (in < 0 || dup2(in, 0) < 0 || dup2(outp[1], 1) < 0 || dup2(errp[1], 2) < 0)
			_exit(126);
		if (opt.controlling_tty && ioctl(0, TIOCSCTTY, 0) < 0)
			_exit(126);
		for (const auto &v : opt.unset_env)
			unsetenv(v.c_str());
		if (!opt.cwd.empty() && chdir(opt.cwd.c_str())) {
			dprintf(2, "e2e: chdir %s: %s\n", opt.cwd.c_str(), strerror(errno));
			_exit(126);
		}
		execvp(cargv[0], cargv.data());
		dprintf(2, "e2e: exec %s: %s\n", cargv[0], strerror(errno));
		_exit(127);
	}
	close(outp[1]);
	close(errp[1]);
	out_fd_ = outp[0];
	err_fd_ = errp[0];
	g_running.insert(pid_);
	pidfd_ = (int)syscall(SYS_pidfd_open, pid_, 0);
	started_ = MonoNow();
	deadline_ = started_ + opt.timeout_s;
}

Child::~Child()
{
	if (pid_ > 0 && !finished_)
		Finish();
}

// Collects output and the exit until `done` holds, everything is over, or `until`.
bool Child::Pump(double until, const std::function<bool()> &done)
{
	char buf[65536];
	while (out_fd_ >= 0 || err_fd_ >= 0 || !reaped_) {
		if (done && done())
			return true;
		double left = std::min(until, deadline_) - MonoNow();
		if (left <= 0) {
			r_.timed_out = MonoNow() >= deadline_;
			return false;
		}
		struct pollfd fds[3];
		int nf = 0, iout = -1, ierr = -1, ipid = -1;
		if (out_fd_ >= 0) {
			fds[nf] = { out_fd_, POLLIN, 0 };
			iout = nf++;
		}
		if (err_fd_ >= 0) {
			fds[nf] = { err_fd_, POLLIN, 0 };
			ierr = nf++;
		}
		if (!reaped_ && pidfd_ >= 0) {
			fds[nf] = { pidfd_, POLLIN, 0 };
			ipid = nf++;
		}
		int ms = (int)(left * 1000) + 1;
		if (!reaped_ && pidfd_ < 0)
			ms = std::min(ms, 50); // no pidfd: fall back to polling waitpid
		int n = poll(fds, (nfds_t)nf, ms);
		if (n < 0 && errno != EINTR)
			return false;
		int *fdp[2] = { &out_fd_, &err_fd_ };
		std::string *dst[2] = { &r_.out, &r_.err };
		int idx[2] = { iout, ierr };
		for (int k = 0; k < 2; k++) {
			if (idx[k] < 0 || !fds[idx[k]].revents)
				continue;
			ssize_t got = read(*fdp[k], buf, sizeof buf);
			if (got > 0) {
				dst[k]->append(buf, (size_t)got);
			} else if (got == 0 || errno != EINTR) {
				close(*fdp[k]);
				*fdp[k] = -1;
			}
		}
		if (!reaped_ && (pidfd_ < 0 || (ipid >= 0 && fds[ipid].revents))) {
			pid_t w = waitpid(pid_, &status_, WNOHANG);
			if (w == pid_) {
				reaped_ = true;
				g_running.erase(pid_);
				// The main process is gone: anything still in its group/session, or
				// re-parented to us, was left behind. Kill it, so the pipes reach EOF.
				std::vector<std::string> l = KillLeftovers(pid_);
				r_.leftovers.insert(r_.leftovers.end(), l.begin(), l.end());
			}
		}
	}
	return done && done();
}

bool Child::WaitForOutput(const std::string &text, double timeout_s, bool on_stderr)
{
	const std::string &where = on_stderr ? r_.err : r_.out;
	return Pump(MonoNow() + timeout_s, [&] { return where.find(text) != std::string::npos; });
}

void Child::Signal(int sig)
{
	if (pid_ > 0 && !reaped_)
		kill(pid_, sig);
}

RunResult Child::Finish()
{
	if (finished_ || pid_ <= 0)
		return r_;
	finished_ = true;
	Pump(deadline_, nullptr);
	if (r_.timed_out || !reaped_) {
		kill(-pid_, SIGKILL);
		kill(pid_, SIGKILL);
		if (!reaped_)
			reaped_ = WaitBounded(pid_, &status_, 30);
		g_running.erase(pid_);
		std::vector<std::string> l = KillLeftovers(pid_);
		r_.leftovers.insert(r_.leftovers.end(), l.begin(), l.end());
	}
	for (int *fd : { &pidfd_, &out_fd_, &err_fd_ })
		if (*fd >= 0) {
			close(*fd);
			*fd = -1;
		}
	r_.seconds = MonoNow() - started_;
	if (reaped_) {
		r_.status = status_;
		if (WIFEXITED(status_))
			r_.code = WEXITSTATUS(status_);
		else if (WIFSIGNALED(status_))
			r_.code = 128 + WTERMSIG(status_);
	}
	return r_;
}

RunResult RunCommand(const std::vector<std::string> &argv, const RunOptions &opt)
{
	return Child(argv, opt).Finish();
}

std::vector<std::string> UnderDetrun(const std::vector<std::string> &opts,
				     const std::vector<std::string> &argv)
{
	std::vector<std::string> v{ DETRUN_PATH };
	v.insert(v.end(), opts.begin(), opts.end());
	v.push_back("--");
	v.insert(v.end(), argv.begin(), argv.end());
	return v;
}

std::vector<std::string> SplitLines(const std::string &s)
{
	std::vector<std::string> v;
	std::string cur;
	for (char c : s) {
		if (c == '\n') {
			v.push_back(cur);
			cur.clear();
		} else {
			cur += c;
		}
	}
	if (!cur.empty())
		v.push_back(cur + "  [no newline at end]");
	return v;
}

std::string Clip(const std::string &s, size_t n)
{
	return s.size() > n ? s.substr(0, n) + "..." : s;
}

// A diff-friendly description of the first difference between two outputs.
std::string FirstDifference(const std::string &what_a, const std::string &a,
			    const std::string &what_b, const std::string &b)
{
	std::vector<std::string> la = SplitLines(a), lb = SplitLines(b);
	size_t i = 0;
	while (i < la.size() && i < lb.size() && la[i] == lb[i])
		i++;
	std::ostringstream s;
	s << what_b << " differs from " << what_a << " (" << b.size() << " vs " << a.size()
	  << " bytes, " << lb.size() << " vs " << la.size() << " lines); first difference at line "
	  << i + 1 << ":\n";
	if (i > 0)
		s << "    (line " << i << " both: " << Clip(la[i - 1]) << ")\n";
	s << "  " << what_a << ": " << (i < la.size() ? Clip(la[i]) : "<end of output>") << "\n";
	s << "  " << what_b << ": " << (i < lb.size() ? Clip(lb[i]) : "<end of output>") << "\n";
	return s.str();
}

std::string Head(const std::string &s, size_t lines)
{
	std::vector<std::string> l = SplitLines(s);
	std::ostringstream o;
	for (size_t i = 0; i < l.size() && i < lines; i++)
		o << "    " << Clip(l[i], 200) << "\n";
	if (l.size() > lines)
		o << "    ... (" << l.size() - lines << " more lines)\n";
	return o.str();
}

std::string Python()
{
	static std::string py = [] {
		RunResult r = RunCommand({ "python3", "-c", "import sys; print(sys.executable)" },
					 {});
		std::string p = r.out;
		while (!p.empty() && (p.back() == '\n' || p.back() == '\r'))
			p.pop_back();
		if (r.code != 0 || p.empty() || access(p.c_str(), X_OK))
			return std::string();
		return p;
	}();
	return py;
}

std::string Replace(std::string s, const std::string &from, const std::string &to)
{
	for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
		s.replace(pos, from.size(), to);
	return s;
}

std::string ReadFile(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string &path, const std::string &text)
{
	std::ofstream(path, std::ios::binary) << text;
}

TempDir::TempDir(const std::string &prefix)
{
	std::string tmpl = "/tmp/detrun-" + prefix + "-XXXXXX";
	std::vector<char> buf(tmpl.begin(), tmpl.end());
	buf.push_back(0);
	if (mkdtemp(buf.data()))
		path = buf.data();
}

TempDir::~TempDir()
{
	if (!path.empty())
		RunCommand({ "rm", "-rf", path });
}

// Ports: every test process owns a block of kBlockPorts ports below the kernel's ephemeral
// range (where outgoing connections take theirs), held through a lock on a file named after
// the block (released by the kernel when the process ends, however it ends). Two test
// processes run at once by `ctest -j` never pick the same port, which a port the kernel
// found free a moment ago cannot promise.
namespace
{
const int kFirstPort = 20000, kBlockPorts = 32, kBlocks = 350; // 20000..31199
const int kReservable = 24; // the head of the block, for ReservedPorts

int PortBlockBase()
{
	static int base = [] {
		for (int b = 0; b < kBlocks; b++) {
			std::string name = "/tmp/detrun-ports-" + std::to_string(b) + ".lock";
			int fd = open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
			if (fd < 0)
				continue;
			if (flock(fd, LOCK_EX | LOCK_NB) == 0)
				return kFirstPort +
				       b * kBlockPorts; // fd stays open: the lock is ours
			close(fd);
		}
		fprintf(stderr, "harness: every one of the %d port blocks is taken\n", kBlocks);
		abort();
	}();
	return base;
}

bool Bindable(int port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bool ok = s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (s >= 0)
		close(s);
	return ok;
}
} // namespace

int ReservedPorts(int n)
{
	static bool taken = false;
	if (taken || n > kReservable) {
		fprintf(stderr, "harness: ReservedPorts(%d) called twice or for more than %d\n", n,
			kReservable);
		abort();
	}
	taken = true;
	return PortBlockBase();
}

int FreePort()
{
	static int next = 0;
	const int tail = kBlockPorts - kReservable;
	for (int tries = 0; tries < tail; tries++) {
		int port = PortBlockBase() + kReservable + next;
		next = (next + 1) % tail;
		if (Bindable(port))
			return port;
	}
	return -1;
}

bool MakeNginxPrefix(const std::string &source_dir, const std::string &dir, int port)
{
	for (const char *sub : { "/logs", "/html", "/tmp" })
		if (mkdir((dir + sub).c_str(), 0755) != 0)
			return false;
	std::string conf = ReadFile(source_dir + "/bench/nginx.conf");
	if (conf.empty())
		return false;
	conf = Replace(Replace(conf, "@PREFIX@", dir), "@PORT@", std::to_string(port));
	conf = Replace(Replace(conf, "@WORKERS@", "2"), "@MASTER@", "on");
	conf = Replace(conf, "error_log " + dir + "/logs/error.log warn;",
		       "error_log stderr notice;");
	WriteFile(dir + "/nginx.conf", conf);
	return true;
}
