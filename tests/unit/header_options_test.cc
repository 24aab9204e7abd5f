// The run options and the log header: record writes them, replay reads them back, a
// replicate follower compares its own with the leader's. One mapping serves the three
// (recorder/header_options.c); these tests hold it to every option of the list the
// options struct is generated from (common/options.h).
#include <gtest/gtest.h>

#include <set>
#include <string>

extern "C" {
#include "recorder/header_options.h"
}

// Options with every field set to a value of its own, none the default.
static tracer_options Distinct()
{
	tracer_options o{};
	int i = 0;
#define SET(type, name, comment) o.name = (type)(++i + 1);
	TRACER_OPTIONS(SET)
#undef SET
	return o;
}

TEST(HeaderOptions, EveryOptionSurvivesTheLog)
{
	const tracer_options o = Distinct();
	Detrun__Log__Header h = DETRUN__LOG__HEADER__INIT;
	header_options_to(&h, &o);
	tracer_options back{};
	header_options_from(&h, &back);
#define SAME(type, name, comment) EXPECT_EQ(back.name, o.name) << #name;
	TRACER_OPTIONS(SAME)
#undef SAME
	EXPECT_TRUE(header_options_equal(&h, &o));
}

TEST(HeaderOptions, EqualNoticesEachOption)
{
	// A follower whose options differ in any one from the leader's must be refused:
	// keep_vdso was once left out of the comparison.
	const tracer_options o = Distinct();
	Detrun__Log__Header h = DETRUN__LOG__HEADER__INIT;
	header_options_to(&h, &o);
#define DIFFERS(type, name, comment) \
	{ \
		tracer_options other = o; \
		other.name = (type)0; \
		EXPECT_FALSE(header_options_equal(&h, &other)) << #name " is not compared"; \
	}
	TRACER_OPTIONS(DIFFERS)
#undef DIFFERS
}

TEST(HeaderOptions, TheSeedKeepsItsHighBit)
{
	// The header's seed is signed (int64): a seed past INT64_MAX comes back whole.
	tracer_options o = Distinct(), back{};
	o.seed = ~0ULL - 5;
	Detrun__Log__Header h = DETRUN__LOG__HEADER__INIT;
	header_options_to(&h, &o);
	header_options_from(&h, &back);
	EXPECT_EQ(back.seed, o.seed);
	EXPECT_TRUE(header_options_equal(&h, &o));
}

TEST(HeaderOptions, EveryHeaderFieldIsAnOptionOrTheRunsOwn)
{
	// A header field that is neither an option of the list nor a fact of the run (its
	// program, environment, descriptors) is an option kept by hand somewhere: the list
	// must grow instead.
	std::set<std::string> options;
#define NAME(type, name, comment) options.insert(#name);
	TRACER_OPTIONS(NAME)
#undef NAME
	const std::set<std::string> run = { "format_version",
					    "detrun_version",
					    "argv",
					    "program",
					    "program_hash",
					    "program_size",
					    "env",
					    "cwd",
					    "outside_fds",
					    "std_kinds",
					    "stdin_file",
					    "stdin_hash",
					    "stdin_offset",
					    "std_flags",
					    "ignored_signals",
					    "exec_path",
					    "controlling_terminal" };
	const ProtobufCMessageDescriptor &d = detrun__log__header__descriptor;
	size_t found = 0;
	for (unsigned i = 0; i < d.n_fields; i++) {
		std::string name = d.fields[i].name;
		EXPECT_TRUE(options.count(name) || run.count(name))
			<< "header field " << name << " is not mapped to an option";
		found += options.count(name);
	}
	EXPECT_EQ(found, options.size());
}

TEST(HeaderOptions, JobsComeBackAndOldLogsRanOneAtATime)
{
	// --jobs changes the order of events: a replay must run with the recording's. A log
	// written before the option has no such field (proto3: 0) and ran one task at a time.
	tracer_options o = Distinct(), back{};
	o.jobs = 2;
	Detrun__Log__Header h = DETRUN__LOG__HEADER__INIT;
	header_options_to(&h, &o);
	EXPECT_EQ(h.jobs, 2);
	header_options_from(&h, &back);
	EXPECT_EQ(back.jobs, 2);

	h.jobs = 0; // as parsed from an old log
	header_options_from(&h, &back);
	EXPECT_EQ(back.jobs, 1);
	o.jobs = 1;
	EXPECT_TRUE(header_options_equal(&h, &o)) << "an old log equals a --jobs 1 run";
}
