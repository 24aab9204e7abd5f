// Page ownership (engine/page_share.h): under --jobs 2, processes sharing shmem (anonymous
// MAP_SHARED, memfd) stay in memory domains of their own and pages move between them at
// ordered faults (--page-owner); SysV shm and a file on another filesystem still merge the
// domains, as does shmem without --page-owner. Read from --trace: each mapping names its domain,
// each ordered fault says whether it moved a page, and the run ends with the totals.
#include <gtest/gtest.h>

#include <sys/vfs.h>

#include <regex>
#include <set>
#include <string>

#include "harness.h"

namespace
{

struct Seen {
	std::set<std::string> domains; // of the mappings
	bool owned = false;            // a mapping under page ownership
	int moved = 0;                 // faults that moved a page
};

Seen Look(const std::string &kind, bool off = false)
{
	std::vector<std::string> opts = { "--jobs", "2", "--trace" };
	if (!off)
		opts.push_back("--page-owner");
	std::vector<std::string> argv = UnderDetrun(opts,
						    { std::string(GUEST_DIR) + "/par_shared_race",
						      kind });
	RunResult r = RunCommand(argv);
	EXPECT_EQ(r.code, 0) << r.Describe();
	Seen s;
	std::regex mapped("shared memory: (pages owned, )?memory domain ([0-9]+)");
	for (std::sregex_iterator m(r.err.begin(), r.err.end(), mapped), end; m != end; ++m) {
		s.owned |= (*m)[1].matched;
		s.domains.insert((*m)[2]);
	}
	for (size_t at = 0; (at = r.err.find("): moved\n", at)) != std::string::npos; at++)
		s.moved++;
	return s;
}

TEST(PageOwnerDomains, MemfdSharersRunAsTwoDomainsAndMovePages)
{
	Seen s = Look("memfd"); // each process maps it after the fork: two mapping lines
	EXPECT_TRUE(s.owned);
	EXPECT_EQ(s.domains.size(), 2u);
	EXPECT_GT(s.moved, 0);
}

TEST(PageOwnerDomains, AnonymousRegionMovesPagesBetweenParentAndChild)
{
	Seen s = Look("anon"); // mapped before the fork: the child's domain is its own
	EXPECT_TRUE(s.owned);
	EXPECT_GT(s.moved, 0);
}

TEST(PageOwnerDomains, SysvAndOtherFilesStillMerge)
{
	struct statfs tmp;
	bool tmp_is_tmpfs = statfs("/tmp", &tmp) == 0 && tmp.f_type == 0x01021994; /* TMPFS_MAGIC */
	for (const char *kind : { "sysv", "file" }) {
		if (tmp_is_tmpfs && std::string(kind) == "file")
			continue; /* the guest's file is in /tmp: shmem, owned by pages */
		Seen s = Look(kind);
		EXPECT_FALSE(s.owned) << kind;
		EXPECT_EQ(s.domains.size(), 1u) << kind;
		EXPECT_EQ(s.moved, 0) << kind;
	}
}

TEST(PageOwnerDomains, OffMergesShmemToo)
{
	Seen s = Look("memfd", true);
	EXPECT_FALSE(s.owned);
	EXPECT_EQ(s.domains.size(), 1u);
	EXPECT_EQ(s.moved, 0);
}

// Pages that move all the time (DETRUN_PAGE_MERGE=16: after 16 moves) merge their sharers'
// domains at a point of the timeline: the output stays the same run after run.
TEST(PageOwnerDomains, PagesMovingAllTheTimeMergeTheirSharers)
{
	std::vector<std::string> argv = UnderDetrun({ "--jobs", "2", "--page-owner", "--trace" },
						    { std::string(GUEST_DIR) +
						      "/par_shared_pages" });
	argv.insert(argv.begin(), { "env", "DETRUN_PAGE_MERGE=16" });
	RunResult first = RunCommand(argv);
	ASSERT_EQ(first.code, 0) << first.Describe();
	EXPECT_NE(first.err.find(" merged (its pages moved all the time)"), std::string::npos)
		<< first.Describe();
	for (int i = 1; i < 5; i++) {
		RunResult again = RunCommand(argv);
		ASSERT_EQ(again.code, 0) << again.Describe();
		EXPECT_EQ(again.out, first.out) << "run " << i << "\n" << again.Describe();
	}
}

} // namespace
