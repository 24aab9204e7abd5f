// The test harness shared by the end-to-end suites (e2e_test.cc, record_test.cc).
//
// Every command runs in its own session (so its process group id is its pid) with stdin
// from /dev/null unless told otherwise, stdout and stderr captured through pipes, and a
// hard timeout after which the whole group is killed and the test fails. The test process
// is a child subreaper, so a process left behind by a run is re-parented to it; after each
// run nothing may remain in the run's process group or session or among our children.
#ifndef DETRUN_TESTS_HARNESS_H
#define DETRUN_TESTS_HARNESS_H

#include <sys/types.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

struct RunOptions {
	std::string cwd;                    // empty: inherit
	int timeout_s = 120;                // hard limit; the group is killed after it
	std::vector<std::string> unset_env; // variables removed in the child
	int stdin_fd = -1;                  // the child's stdin (e.g. a pty slave); -1: /dev/null
	bool controlling_tty = false;       // make stdin_fd (a terminal) the controlling tty
	// SIGKILL to the command when the test process dies (Ctrl-C'd or killed ctest): for
	// servers and clients in sessions of their own, which would outlive it otherwise.
	bool die_with_test = false;
};

struct RunResult {
	std::vector<std::string> argv;
	std::string out, err;
	int status = -1; // raw wait status
	int code = -1;   // exit code, or 128 + N if killed by signal N
	bool timed_out = false;
	double seconds = 0;                 // wall time, for information only
	std::vector<std::string> leftovers; // processes left behind by the run

	std::string Describe() const
	{
		std::ostringstream s;
		s << "command:";
		for (const auto &a : argv)
			s << " '" << a << "'";
		s << "\n  exit code " << code << " after " << seconds << " s";
		if (timed_out)
			s << " (TIMED OUT, group killed)";
		s << ", stdout " << out.size() << " bytes";
		std::string e = err.size() > 3000 ? err.substr(0, 3000) + "\n...[truncated]" : err;
		s << "\n  stderr (" << err.size() << " bytes):\n" << e;
		for (const auto &l : leftovers)
			s << "\n  LEFT BEHIND: " << l;
		return s.str();
	}
};

double MonoNow();

// A command running in the background (a server): its output can be awaited while it runs.
class Child
{
      public:
	Child(const std::vector<std::string> &argv, const RunOptions &opt = RunOptions());
	~Child(); // finishes (kills at the timeout) if Finish was not called
	Child(const Child &) = delete;
	Child &operator=(const Child &) = delete;
	// Collects output until stdout (or stderr) contains `text` (true), the command ends or
	// the time is up.
	bool WaitForOutput(const std::string &text, double timeout_s, bool on_stderr = false);
	const std::string &Out() const
	{
		return r_.out;
	}
	const std::string &Err() const
	{
		return r_.err;
	}
	void Signal(int sig); // to the command's own process
	pid_t Pid() const     // the command's own process (detrun, for a run under it)
	{
		return pid_;
	}
	// Waits for the end (killing the group at the run's timeout) and returns everything.
	RunResult Finish();

      private:
	bool Pump(double until, const std::function<bool()> &done);
	RunOptions opt_;
	RunResult r_;
	pid_t pid_ = -1;
	int pidfd_ = -1, out_fd_ = -1, err_fd_ = -1, status_ = 0;
	bool reaped_ = false, finished_ = false;
	double started_ = 0, deadline_ = 0;
};

RunResult RunCommand(const std::vector<std::string> &argv, const RunOptions &opt = RunOptions());
std::vector<std::string> UnderDetrun(const std::vector<std::string> &opts,
				     const std::vector<std::string> &argv);
struct ProcInfo {
	pid_t pid;
	char state;
	pid_t ppid, pgrp, sid;
	std::string comm, cmdline;
};
// Processes of the run led by `leader` (its session or group), or re-parented to us.
std::vector<ProcInfo> FindLeftovers(pid_t leader);
// Kills and reaps whatever the run led by `leader` left behind; their descriptions.
std::vector<std::string> KillLeftovers(pid_t leader);
bool WaitBounded(pid_t pid, int *status, int seconds);
// Whether pid exits (or is already gone) within `seconds`; any process, not only a child.
bool ExitsWithin(pid_t pid, int seconds);
void EnsureSubreaper();

std::vector<std::string> SplitLines(const std::string &s);
std::string Clip(const std::string &s, size_t n = 300);
// A diff-friendly description of the first difference between two outputs.
std::string FirstDifference(const std::string &what_a, const std::string &a,
			    const std::string &what_b, const std::string &b);
std::string Head(const std::string &s, size_t lines = 20);
// The python interpreter itself, not a wrapper script (pyenv shims run several processes).
std::string Python();
std::string Replace(std::string s, const std::string &from, const std::string &to);
std::string ReadFile(const std::string &path); // whole file; empty if unreadable
void WriteFile(const std::string &path, const std::string &text);
// A TCP port free on 127.0.0.1 now, from this test process's own block of ports (no other
// test process picks it); the block's ports are handed out in turn, skipping busy ones.
int FreePort();
// The first of N consecutive ports (N <= 24) of this process's block, which FreePort never
// hands out: for a cluster whose ports are laid out from a base. Once per process.
int ReservedPorts(int n);
// An nginx prefix in `dir` (logs/, html/, tmp/ and nginx.conf from bench/nginx.conf: a
// master and two workers listening on 127.0.0.1:port, notices on stderr); false if it
// could not be made. Start it with `nginx -e stderr -c DIR/nginx.conf -p DIR/`.
bool MakeNginxPrefix(const std::string &source_dir, const std::string &dir, int port);

// A fresh directory per test (/tmp/detrun-PREFIX-XXXXXX), removed with everything in it.
struct TempDir {
	std::string path;
	explicit TempDir(const std::string &prefix = "test");
	~TempDir();
	TempDir(const TempDir &) = delete;
	TempDir &operator=(const TempDir &) = delete;
	std::string operator/(const std::string &name) const
	{
		return path + "/" + name;
	}
};

#endif
