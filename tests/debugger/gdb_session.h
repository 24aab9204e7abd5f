// Driving Debian's real gdb in batch mode against detrun's gdb server: the helpers the
// debugging suites share (debug_test.cc, debug_fork_test.cc).
#ifndef DETRUN_TESTS_HARDENING_GDB_SESSION_H
#define DETRUN_TESTS_HARDENING_GDB_SESSION_H

#include <stdlib.h>

#include <regex>
#include <string>
#include <vector>

#include "harness.h"

// The number written right after `key` in `text`, -1 if key is absent.
inline long NumberAfter(const std::string &text, const std::string &key)
{
	size_t at = text.find(key);
	return at == std::string::npos ? -1 : strtol(text.c_str() + at + key.size(), nullptr, 10);
}

// gdb -batch with one -ex per command.
inline std::vector<std::string> Batch(const std::vector<std::string> &commands)
{
	std::vector<std::string> argv{ "-batch" };
	for (const std::string &c : commands) {
		argv.push_back("-ex");
		argv.push_back(c);
	}
	return argv;
}

// `detrun record -o LOG -- PROG ARGS...`, run in `dir` (the log is dir/LOG).
inline RunResult RecordInto(const TempDir &dir, const std::string &log,
			    const std::vector<std::string> &prog)
{
	std::vector<std::string> argv{ DETRUN_PATH, "record", "-o", dir / log, "--" };
	argv.insert(argv.end(), prog.begin(), prog.end());
	RunOptions opt;
	opt.cwd = dir.path;
	return RunCommand(argv, opt);
}

// `detrun debug LOG` driving gdb with `commands`, run in `dir`.
inline RunResult Debug(const TempDir &dir, const std::string &log,
		       const std::vector<std::string> &commands)
{
	std::vector<std::string> argv{ DETRUN_PATH, "debug", log };
	for (const std::string &a : Batch(commands))
		argv.push_back(a);
	RunOptions opt;
	opt.cwd = dir.path;
	opt.timeout_s = 240;
	return RunCommand(argv, opt);
}

// The address a `detrun --gdb` server says it waits on (a unix socket's path by default,
// host:port on TCP), "" if it ended or said nothing within 60 s.
inline std::string GdbAddress(Child &server)
{
	const std::string key = "waiting for gdb on ";
	if (!server.WaitForOutput(" (in gdb: set sysroot / then target", 60, true))
		return "";
	size_t at = server.Err().find(key);
	if (at == std::string::npos)
		return "";
	at += key.size();
	return server.Err().substr(at, server.Err().find(" (in gdb", at) - at);
}

// The lines of gdb's output that match `pattern`.
inline std::vector<std::string> Matching(const std::string &out, const std::string &pattern)
{
	std::vector<std::string> lines;
	std::regex re(pattern);
	for (const std::string &l : SplitLines(out))
		if (std::regex_search(l, re))
			lines.push_back(l);
	return lines;
}

#endif
