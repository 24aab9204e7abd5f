// Replays meet the recording's starting files (recorder/file_image.h, engine/file_view.h):
// the recording keeps the before-image of every path its group changes, and a replay (and
// every run of `detrun debug`) runs on a private view that presents them, never changing
// the real files. The guest rep_filedb creates `db` with O_CREAT|O_EXCL, appends to
// `journal` (read before and after), renames `old`, removes `gone` and makes `sub/x`: run
// again on what it left, it fails at once.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string kDetrun = getenv("DETRUN_UNDER_TEST") ? getenv("DETRUN_UNDER_TEST") : DETRUN_PATH;
const std::string kGuest = std::string(GUEST_DIR) + "/rep_filedb";

void WriteFile(const std::string &path, const std::string &text)
{
	std::ofstream(path, std::ios::binary) << text;
}

// The files the guest starts with.
void StartingFiles(const TempDir &dir)
{
	WriteFile(dir / "journal", "start\n");
	WriteFile(dir / "old", "old\n");
	WriteFile(dir / "gone", "gone\n");
}

// Every name under dir with its type, mode, size, modification time (ns) and content
// digest: what a replay must leave exactly as it found it.
std::string Snapshot(const TempDir &dir)
{
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult r = RunCommand({ "sh", "-c",
				   "find . -printf '%p %y %m %s %T@\\n' | sort && "
				   "find . -type f -exec sha256sum {} + | sort" },
				 opt);
	EXPECT_EQ(r.code, 0) << r.Describe();
	return r.out;
}

RunResult InDir(const TempDir &dir, const std::vector<std::string> &argv)
{
	RunOptions opt;
	opt.cwd = dir.path;
	return RunCommand(argv, opt);
}

RunResult Replay(const TempDir &dir, const std::string &log,
		 const std::vector<std::string> &extra = {})
{
	std::vector<std::string> argv{ "unshare", "-n", kDetrun, "replay" };
	argv.insert(argv.end(), extra.begin(), extra.end());
	argv.push_back(log);
	return InDir(dir, argv);
}

struct Recorded {
	RunResult native, rec;
	std::string after; // the directory right after the recording
};

Recorded RecordFileDb(const TempDir &dir, const TempDir &logs)
{
	Recorded r;
	StartingFiles(dir);
	r.native = InDir(dir, { kGuest });
	RunCommand({ "sh", "-c", "rm -rf \"$0\"/* && ls -A \"$0\"", dir.path });
	StartingFiles(dir);
	r.rec = InDir(dir, { kDetrun, "record", "-o", logs / "f.dlog", "--", kGuest });
	r.after = Snapshot(dir);
	return r;
}

// A replay in the directory of the recording, twice: the program meets the files it
// started with (before, open(O_CREAT|O_EXCL) failed and the program took another path),
// prints what the recording printed, and the directory is byte for byte, name for name and
// time for time what the recording left.
TEST(FileImages, ReplayInTheRecordingsDirectoryStartsFromItsFilesAndChangesNone)
{
	TempDir dir("fileimg"), logs("fileimg-logs");
	Recorded r = RecordFileDb(dir, logs);
	ASSERT_EQ(r.native.code, 0) << r.native.Describe();
	ASSERT_EQ(r.rec.code, 0) << r.rec.Describe();
	ASSERT_EQ(r.rec.out, r.native.out) << r.rec.Describe();
	ASSERT_NE(r.rec.out.find("journal: start\nappended\n"), std::string::npos) << r.rec.out;

	// What the recording left makes the program fail natively: the replay must not meet it.
	RunResult again = InDir(dir, { kGuest });
	EXPECT_EQ(again.code, 1) << again.Describe();
	EXPECT_NE(again.out.find("open db: File exists"), std::string::npos) << again.out;
	EXPECT_EQ(Snapshot(dir), r.after);

	for (int i = 0; i < 2; i++) {
		RunResult rep = Replay(dir, logs / "f.dlog");
		EXPECT_EQ(rep.code, 0) << rep.Describe();
		EXPECT_EQ(rep.out, r.rec.out) << rep.Describe();
		EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
		EXPECT_EQ(Snapshot(dir), r.after) << "replay " << i << " changed the files";
	}
}

// The log says what it keeps: the absence of db and sub, journal's and old's bytes.
TEST(FileImages, TheLogListsTheBeforeImages)
{
	TempDir dir("fileimg"), logs("fileimg-logs");
	Recorded r = RecordFileDb(dir, logs);
	ASSERT_EQ(r.rec.code, 0) << r.rec.Describe();
	RunResult log = RunCommand({ kDetrun, "log", logs / "f.dlog" });
	ASSERT_EQ(log.code, 0) << log.Describe();
	EXPECT_NE(log.out.find(" db, before: absent\n"), std::string::npos) << log.out;
	EXPECT_NE(log.out.find(" journal, before: file of 6 bytes"), std::string::npos) << log.out;
	EXPECT_NE(log.out.find(" old, before: file of 4 bytes"), std::string::npos) << log.out;
	EXPECT_NE(log.out.find(" renamed, before: absent\n"), std::string::npos) << log.out;
	EXPECT_NE(log.out.find(" sub, before: absent\n"), std::string::npos) << log.out;
	// sub/x lies under sub, absent at the start: no image of its own.
	EXPECT_EQ(log.out.find("sub/x, before"), std::string::npos) << log.out;
}

// --in-place puts the starting files back for real and replays on them: the files end as
// the recording left them, whatever was there before.
TEST(FileImages, InPlaceReplayLeavesTheFilesAsTheRecordingDid)
{
	TempDir dir("fileimg"), logs("fileimg-logs");
	Recorded r = RecordFileDb(dir, logs);
	ASSERT_EQ(r.rec.code, 0) << r.rec.Describe();
	WriteFile(dir / "db", "something else\n");
	WriteFile(dir / "gone", "back\n");
	RunResult rep = Replay(dir, logs / "f.dlog", { "--in-place" });
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, r.rec.out) << rep.Describe();
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult files = RunCommand({ "sh", "-c", "ls -A; cat db journal renamed sub/x" }, opt);
	EXPECT_EQ(files.out, "db\njournal\nrenamed\nsub\nrow 1\nrow 2\nstart\nappended\nold\nx\n")
		<< files.Describe();
}

// A file the recording only read, changed since, is reported as before, and the replay
// that stops there has changed nothing either.
TEST(FileImages, AFileOnlyReadAndChangedSinceIsStillReported)
{
	TempDir dir("fileimg"), logs("fileimg-logs");
	StartingFiles(dir);
	WriteFile(dir / "input", "one\n");
	RunResult rec = InDir(dir, { kDetrun, "record", "-o", logs / "r.dlog", "--", "sh", "-c",
				     "cat input && exec \"$0\"", kGuest });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out.rfind("one\n", 0), 0u) << rec.out;
	WriteFile(dir / "input", "two\n");
	std::string before = Snapshot(dir);
	RunResult rep = Replay(dir, logs / "r.dlog");
	EXPECT_EQ(rep.code, 125) << rep.Describe();
	EXPECT_NE(rep.err.find(dir.path + "/input differs from the recording"), std::string::npos)
		<< rep.Describe();
	EXPECT_EQ(Snapshot(dir), before);
}

// A shell that appends to a file of 1.5 MiB (its image: three parts of at most 512 KiB),
// moves a directory away (imaged with what it holds) and replaces a symlink: replayed
// twice where it was recorded, the same output, and nothing changed.
TEST(FileImages, LargeFileMovedDirectoryAndSymlinkComeBackFromTheirImages)
{
	TempDir dir("fileimg"), logs("fileimg-logs");
	std::string big;
	for (int i = 0; big.size() < 1536 * 1024; i++)
		big += "line " + std::to_string(i) + "\n";
	WriteFile(dir / "big", big);
	RunCommand({ "sh", "-c",
		     "mkdir \"$0\"/d && echo a > \"$0\"/d/a && echo b > \"$0\"/d/b && "
		     "ln -s d/a \"$0\"/link",
		     dir.path });
	const std::string script =
		"wc -c < big && echo more >> big && tail -c 5 big && "
		"mv d e && cat e/a link 2>&1; rm link && ln -s e/b link && cat link";
	RunResult native = InDir(dir, { "sh", "-c", script });
	ASSERT_EQ(native.code, 0) << native.Describe();
	// The same starting files again for the recording.
	RunCommand({ "sh", "-c", "cd \"$0\" && mv e d && rm link && ln -s d/a link", dir.path });
	WriteFile(dir / "big", big);
	RunResult rec = InDir(dir, { kDetrun, "record", "-o", logs / "s.dlog", "--", "sh", "-c",
				     script });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out, native.out) << rec.Describe();
	std::string after = Snapshot(dir);
	RunResult stats = RunCommand({ kDetrun, "log", "--stats", logs / "s.dlog" });
	EXPECT_NE(stats.out.find(std::to_string(big.size() + 2 + 2 + 3) + " bytes of content"),
		  std::string::npos)
		<< stats.out;
	for (int i = 0; i < 2; i++) {
		RunResult rep = Replay(dir, logs / "s.dlog");
		EXPECT_EQ(rep.code, 0) << rep.Describe();
		EXPECT_EQ(rep.out, rec.out) << rep.Describe();
		EXPECT_EQ(Snapshot(dir), after) << "replay " << i << " changed the files";
	}
}

} // namespace
