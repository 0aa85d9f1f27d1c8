// The generators' sequences: every checksummed output depends on them, bit for bit.
#include "artifact/rng.h"

#include <gtest/gtest.h>

namespace artifact {
namespace {

TEST(CommonRng, SplitMix64MatchesTheReferenceOutputs) {
  SplitMix64 rng(1234567);  // reference values of Vigna's splitmix64.c for this seed
  EXPECT_EQ(rng.next(), 6457827717110365317ULL);
  EXPECT_EQ(rng.next(), 3203168211198807973ULL);
  EXPECT_EQ(rng.next(), 9817491932198370423ULL);
}

TEST(CommonRng, SplitMix64StepAdvancesTheState) {
  uint64_t state = 99;
  EXPECT_EQ(splitmix64(state), 4824385676517010403ULL);
  EXPECT_EQ(state, 99 + 0x9e3779b97f4a7c15ULL);
}

// The values the simulators drew before their generators moved here (systems/common).
TEST(CommonRng, SplitMix64DistributionsAreUnchanged) {
  SplitMix64 rng(42);
  EXPECT_EQ(rng.uniform(), 0.74156487877182331);
  EXPECT_EQ(rng.below(1000), 159u);
  EXPECT_EQ(rng.exponential(5.0), 1.6328153863313331);
  EXPECT_EQ(derive_seed(1, 7), 10043205694874202455ULL);
  EXPECT_EQ(derive_seed(42, 0), 14473931205035997723ULL);
}

TEST(CommonRng, Xoshiro256IsUnchanged) {
  Xoshiro256 rng(42);
  EXPECT_EQ(rng.next(), 1546998764402558742ULL);
  EXPECT_EQ(rng.next(), 6990951692964543102ULL);
  EXPECT_EQ(rng.next(), 12544586762248559009ULL);
  Xoshiro256 other(7);
  EXPECT_EQ(other.uniform(), 0.7005764821796896);
  EXPECT_EQ(other.below(1000003), 278752u);
  EXPECT_EQ(other.below(3), 2u);
}

TEST(CommonRng, BelowStaysBelow) {
  SplitMix64 a(3);
  Xoshiro256 b(3);
  for (uint64_t n : {1ULL, 2ULL, 3ULL, 1000ULL, 1ULL << 63}) {
    for (int i = 0; i < 1000; i++) {
      ASSERT_LT(a.below(n), n);
      ASSERT_LT(b.below(n), n);
    }
  }
}

}  // namespace
}  // namespace artifact
