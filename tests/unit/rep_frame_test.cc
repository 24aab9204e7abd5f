// The payload framing of detrun replicate's messages (replicate/link.c, link.h): 8 bytes
// of logical time (little-endian), 1 byte of kind, then the body; a part of a record too
// large for one message adds 4 bytes of index and 4 of count. Pure byte work: no cluster.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

extern "C" {
#include "replicate/link.h"
}

namespace
{

std::vector<uint8_t> Bytes(const uint8_t *p, size_t n)
{
	return std::vector<uint8_t>(p, p + n);
}

TEST(RepFrame, LayoutIsTimeKindBody)
{
	uint8_t *out = nullptr;
	size_t len = 0;
	ASSERT_EQ(rep_frame(0x0102030405060708ull, REP_GOLIVE, "ab", 2, &out, &len), 0);
	std::vector<uint8_t> want = { 8, 7, 6, 5, 4, 3, 2, 1, REP_GOLIVE, 'a', 'b' };
	EXPECT_EQ(Bytes(out, len), want);
	free(out);
}

TEST(RepFrame, UnframeGivesBackWhatWasFramed)
{
	for (size_t body_len : { 0, 1, 100 }) {
		std::vector<uint8_t> body(body_len);
		for (size_t i = 0; i < body_len; i++)
			body[i] = (uint8_t)(i * 7);
		uint8_t *out = nullptr;
		size_t len = 0;
		ASSERT_EQ(rep_frame(~0ull - 5, REP_RECORD, body.data(), body.size(), &out, &len),
			  0);
		EXPECT_EQ(len, REP_FRAME_LEN + body_len);
		uint64_t time = 0;
		int kind = -1;
		const uint8_t *got = nullptr;
		size_t got_len = 0;
		ASSERT_EQ(rep_unframe(out, len, &time, &kind, &got, &got_len), 0);
		EXPECT_EQ(time, ~0ull - 5);
		EXPECT_EQ(kind, REP_RECORD);
		EXPECT_EQ(Bytes(got, got_len), body) << body_len << " bytes";
		free(out);
	}
}

TEST(RepFrame, ShortOrMissingPayloadIsNotOurs)
{
	uint8_t short_payload[REP_FRAME_LEN - 1] = {};
	uint64_t time;
	int kind;
	const uint8_t *body;
	size_t body_len;
	EXPECT_EQ(rep_unframe(short_payload, sizeof(short_payload), &time, &kind, &body, &body_len),
		  -1);
	EXPECT_EQ(rep_unframe(nullptr, 0, &time, &kind, &body, &body_len), -1);
}

// A record cut into parts and gathered back, as sink.c and source.c do.
TEST(RepFrame, PartsCarryIndexCountAndSlice)
{
	std::string record = "a record larger than one message may carry";
	const size_t room = 10;
	uint32_t count = (uint32_t)((record.size() + room - 1) / room);
	std::string gathered;
	for (uint32_t i = 0; i < count; i++) {
		size_t off = i * room, n = std::min(room, record.size() - off);
		uint8_t *out = nullptr;
		size_t len = 0;
		ASSERT_EQ(rep_frame_part(42, i, count, record.data() + off, n, &out, &len), 0);
		ASSERT_EQ(len, REP_FRAME_LEN + REP_PART_LEN + n);
		// index and count little-endian after the frame
		EXPECT_EQ(out[REP_FRAME_LEN], (uint8_t)i);
		EXPECT_EQ(out[REP_FRAME_LEN + 4], (uint8_t)count);
		uint64_t time;
		int kind;
		const uint8_t *body;
		size_t body_len;
		ASSERT_EQ(rep_unframe(out, len, &time, &kind, &body, &body_len), 0);
		EXPECT_EQ(time, 42u);
		EXPECT_EQ(kind, REP_PART);
		uint32_t index = 99, total = 99;
		const uint8_t *slice;
		size_t slice_len;
		ASSERT_EQ(rep_unframe_part(body, body_len, &index, &total, &slice, &slice_len), 0);
		EXPECT_EQ(index, i);
		EXPECT_EQ(total, count);
		gathered.append((const char *)slice, slice_len);
		free(out);
	}
	EXPECT_EQ(gathered, record);
}

TEST(RepFrame, PartIndexAndCountUseAllFourBytes)
{
	uint8_t *out = nullptr;
	size_t len = 0;
	ASSERT_EQ(rep_frame_part(1, 0x01020304u, 0xa0b0c0d0u, "x", 1, &out, &len), 0);
	std::vector<uint8_t> part(out + REP_FRAME_LEN, out + len);
	std::vector<uint8_t> want = { 4, 3, 2, 1, 0xd0, 0xc0, 0xb0, 0xa0, 'x' };
	EXPECT_EQ(part, want);
	uint32_t index, count;
	const uint8_t *slice;
	size_t slice_len;
	ASSERT_EQ(rep_unframe_part(part.data(), part.size(), &index, &count, &slice, &slice_len),
		  0);
	EXPECT_EQ(index, 0x01020304u);
	EXPECT_EQ(count, 0xa0b0c0d0u);
	EXPECT_EQ(slice_len, 1u);
	free(out);
}

TEST(RepFrame, PartBodyShorterThanItsHeaderIsRefused)
{
	uint8_t body[REP_PART_LEN - 1] = {};
	uint32_t index, count;
	const uint8_t *slice;
	size_t slice_len;
	EXPECT_EQ(rep_unframe_part(body, sizeof(body), &index, &count, &slice, &slice_len), -1);
	uint8_t empty_slice[REP_PART_LEN] = { 1, 0, 0, 0, 2, 0, 0, 0 };
	EXPECT_EQ(rep_unframe_part(empty_slice, sizeof(empty_slice), &index, &count, &slice,
				   &slice_len),
		  0);
	EXPECT_EQ(slice_len, 0u);
}

} // namespace
