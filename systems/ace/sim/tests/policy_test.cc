// The policies' victims and ACE's written pages on the thesis's worked examples, with the
// pool set up by hand as the PostgreSQL tests do (systems/ace/tests/test_policies.py).
// Pages are listed least recently used first (Clock Sweep: frame order from the hand);
// D = dirty, W = LRU-WSR's cold flag, P = pinned, U<n> = usage count.
#include "policy.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace acesim {
namespace {

struct Pool {
  std::vector<FrameState> frames;
  std::vector<std::string> names;
  std::vector<Frame> pinned;
  std::unique_ptr<Policy> policy;

  Pool(const std::string& kind, const std::string& spec, double window = 1.0 / 3.0) {
    std::istringstream in(spec);
    std::string item;
    std::vector<std::string> flags;
    while (in >> item) {
      size_t colon = item.find(':');
      names.push_back(item.substr(0, colon));
      flags.push_back(colon == std::string::npos ? "" : item.substr(colon + 1));
    }
    frames.resize(names.size());
    policy = make_policy(kind, frames, PolicyOptions{window, 1});
    for (size_t i = 0; i < names.size(); i++) {
      Frame f = static_cast<Frame>(i);
      frames[i] = FrameState{i, true, flags[i].find('D') != std::string::npos, false};
      policy->on_load(f, i + 1);  // the first listed is the least recently used
      if (flags[i].find('W') != std::string::npos) list().set_cold(f, true);
      if (flags[i].find('P') != std::string::npos) pinned.push_back(f);
      if (size_t u = flags[i].find('U'); u != std::string::npos) clock().set_usage(f, flags[i][u + 1] - '0');
    }
  }
  ListPolicy& list() { return dynamic_cast<ListPolicy&>(*policy); }
  ClockPolicy& clock() { return dynamic_cast<ClockPolicy&>(*policy); }
  std::vector<std::string> named(const std::vector<Frame>& fs) {
    std::vector<std::string> out;
    for (Frame f : fs) out.push_back(names[f]);
    return out;
  }
  std::string victim() { return names[policy->victim(pinned)]; }
  std::vector<std::string> writeback(const std::string& victim_name, int n_w) {
    Frame v = 0;
    while (names[v] != victim_name) v++;
    return named(policy->writeback_candidates(v, n_w - 1, pinned));
  }
  // The list from the tail, a '*' after cold frames.
  std::vector<std::string> order() {
    std::vector<std::string> out;
    for (Frame f : list().order_from_tail()) out.push_back(names[f] + (list().cold(f) ? "*" : ""));
    return out;
  }
};

using V = std::vector<std::string>;

TEST(ListPolicy, Figure_4_6a_LruWritesThreeDirtyPagesInLruOrder) {
  Pool pool("lru", "p6:D p5 p4:D p3 p2:D p1");
  EXPECT_EQ(pool.victim(), "p6");
  EXPECT_EQ(pool.writeback("p6", 3), (V{"p4", "p2"}));
  EXPECT_EQ(pool.order(), (V{"p6", "p5", "p4", "p3", "p2", "p1"}));  // writing reorders nothing
}

TEST(ListPolicy, Figure_4_6b_LruWsrMovesTheWarmDirtyPageAndWritesTheColdOnes) {
  Pool pool("lru_wsr", "p6:DW p5 p4:DW p3:D p2 p1:DW");
  EXPECT_EQ(pool.victim(), "p6");
  EXPECT_EQ(pool.writeback("p6", 3), (V{"p4", "p1"}));
  EXPECT_EQ(pool.order(), (V{"p6*", "p5", "p4*", "p2", "p1*", "p3*"}));
}

TEST(ListPolicy, SummaryPaperFigure7b_CflruWritesFromItsCleanFirstRegion) {
  Pool pool("cflru", "p6:D p5:D p4:D p3 p2 p1", 0.5);
  EXPECT_EQ(pool.victim(), "p6");  // the window holds no clean page: LRU's victim, dirty
  EXPECT_EQ(pool.writeback("p6", 3), (V{"p5", "p4"}));
}

TEST(ListPolicy, CflruEvictsACleanPageOfItsWindowFirst) {
  EXPECT_EQ(Pool("cflru", "p6:D p5 p4:D p3 p2 p1", 0.5).victim(), "p5");
  // (int) (0.34 * 6) = 2 frames: p3 is clean but outside the window
  EXPECT_EQ(Pool("cflru", "p6:D p5:D p4:D p3 p2 p1", 0.34).victim(), "p6");
  // the default window, 1/3 of 9 frames = 3
  EXPECT_EQ(Pool("cflru", "a:D b:D c d e f g h i").victim(), "c");
  EXPECT_EQ(Pool("cflru", "a:D b:D c:D d e f g h i").victim(), "a");
}

TEST(ListPolicy, SlidesLruWsrExample1_WarmDirtyPageMovesAndTheCleanOneGoes) {
  Pool pool("lru_wsr", "p1:D p2 p3:D p4:D p5 p6:DW");
  EXPECT_EQ(pool.victim(), "p2");
  EXPECT_EQ(pool.order(), (V{"p2", "p3", "p4", "p5", "p6*", "p1*"}));
}

TEST(ListPolicy, SlidesLruWsrExample2_ColdDirtyPageIsEvicted) {
  EXPECT_EQ(Pool("lru_wsr", "p1:DW p2 p3:D p4:D p5 p6:DW").victim(), "p1");
}

TEST(ListPolicy, SlidesLruAceExample_WritesFourFiveTwoEvictsFour) {
  // LRU list 8 6 2 3 5 7 4 (most recent first), 4, 5, 2 dirty, k_w = 3
  Pool pool("lru", "4:D 7 5:D 3 2:D 6 8");
  EXPECT_EQ(pool.victim(), "4");
  EXPECT_EQ(pool.writeback("4", 3), (V{"5", "2"}));
}

TEST(ListPolicy, PinnedPagesAreNeitherEvictedNorWritten) {
  Pool pool("lru", "p6:DP p5:D p4:DP p3:D p2 p1:D");
  EXPECT_EQ(pool.victim(), "p5");
  EXPECT_EQ(pool.writeback("p5", 3), (V{"p3", "p1"}));
}

TEST(ListPolicy, FewerDirtyPagesThanNw) {
  Pool pool("lru", "p4:D p3 p2:D p1");
  EXPECT_EQ(pool.writeback("p4", 8), (V{"p2"}));
}

TEST(ListPolicy, LruWsrWithAllPagesWarmAndDirtyTakesTheFirstOneOnTheSecondPass) {
  Pool pool("lru_wsr", "a:D b:D c:D");
  EXPECT_EQ(pool.victim(), "a");
  EXPECT_EQ(pool.order(), (V{"a*", "b*", "c*"}));
}

TEST(ClockPolicy, WritesInTheOrderItWouldEvict) {
  // The hand is at b0: b0's count drops to 0 and b1 goes. Then, with no further
  // accesses, (usage count, distance from the hand): b4 (0), b0 (0), b5 (1), b3 (2).
  Pool pool("clock", "b0:DU1 b1:D b2 b3:DU2 b4:D b5:DU1");
  for (Frame f : {1, 2, 4}) pool.clock().set_usage(f, 0);
  EXPECT_EQ(pool.victim(), "b1");
  EXPECT_EQ(pool.clock().usage(0), 0);
  EXPECT_EQ(pool.clock().hand(), 2);
  EXPECT_EQ(pool.writeback("b1", 4), (V{"b4", "b0", "b5"}));
  EXPECT_EQ(pool.clock().usage(3), 2);  // the Writer decrements nothing
}

TEST(ClockPolicy, UsageCountsAsPostgreSqlKeepsThem) {
  Pool pool("clock", "a b c");
  for (Frame f = 0; f < 3; f++) EXPECT_EQ(pool.clock().usage(f), 1);  // a new page: 1
  for (int i = 0; i < 10; i++) pool.policy->on_hit(0, 10 + i);
  EXPECT_EQ(pool.clock().usage(0), 5);  // BM_MAX_USAGE_COUNT
  // the sweep: a 5 -> 4, b 1 -> 0, c 1 -> 0, a 4 -> 3, then b (count 0) goes
  EXPECT_EQ(pool.victim(), "b");
  EXPECT_EQ(pool.clock().usage(0), 3);
  EXPECT_EQ(pool.clock().usage(2), 0);
  EXPECT_EQ(pool.clock().hand(), 2);
  EXPECT_EQ(pool.victim(), "c");  // next: c, already at 0
}

TEST(ClockPolicy, PinnedFramesAreSkippedWithoutDecrement) {
  Pool pool("clock", "a:P b c");
  pool.clock().set_usage(0, 0);
  pool.clock().set_usage(1, 2);
  pool.clock().set_usage(2, 1);
  // a pinned (skipped), b 2 -> 1, c 1 -> 0, a skipped, b 1 -> 0, c goes
  EXPECT_EQ(pool.victim(), "c");
  EXPECT_EQ(pool.clock().usage(0), 0);
  EXPECT_EQ(pool.clock().usage(1), 0);
}

TEST(ClockPolicy, EveryFramePinnedGivesNoVictim) {
  Pool pool("clock", "a:P b:P");
  EXPECT_EQ(pool.policy->victim(pool.pinned), kNoFrame);
}

}  // namespace
}  // namespace acesim
