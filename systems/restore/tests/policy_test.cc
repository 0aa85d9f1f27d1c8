// Each policy on small hand-made traces with a known outcome, and the invariants of all of them.
#include "policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "simulator.h"

using namespace restore;

namespace {

class NoQueue : public QueueProbe {
 public:
  uint64_t queued(int) override { return 0; }
};

std::vector<TierSpec> tiers(std::vector<uint64_t> caps) {
  std::vector<TierSpec> t;
  double lat = 30;
  for (uint64_t c : caps) {
    t.push_back(TierSpec{lat, 2, 1, 1, c, 4096});
    lat *= 5;
  }
  return t;
}

std::vector<uint8_t> fill(const std::vector<TierSpec>& ts, uint32_t pages) {
  std::vector<uint8_t> out(pages);
  uint32_t p = 0;
  for (size_t t = 0; t < ts.size(); t++)
    for (uint64_t k = 0; k < ts[t].capacity_pages && p < pages; k++) out[p++] = static_cast<uint8_t>(t);
  return out;
}

struct Harness {
  Harness(const std::string& kind, std::vector<uint64_t> caps, uint32_t pages, PolicyParams params = {}) {
    ts = tiers(caps);
    params.temp.timestep = params.temp.timestep == 1000 ? 1 : params.temp.timestep;
    policy = make_policy(kind, ts, pages, params);
    policy->place(fill(ts, pages));
  }
  std::vector<Move> access(uint32_t page, Op op = Op::kRead) {
    std::vector<Move> moves;
    policy->access(page, op, now++, probe, moves);
    return moves;
  }
  std::vector<TierSpec> ts;
  std::unique_ptr<Policy> policy;
  NoQueue probe;
  uint64_t now = 0;
};

}  // namespace

TEST(Tlfu, PromotesOnlyWhenStrictlyMoreFrequent) {
  // Tier 1 holds 2 pages (0 and 1 at first), tier 2 the rest.
  Harness h("tlfu", {2, 10}, 4);
  auto m = h.access(2);  // count 1 > tier 1's lowest (page 0, count 0): swap with page 0
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].page, 2u);
  EXPECT_EQ(m[0].to, 0);
  EXPECT_EQ(m[1].page, 0u);
  EXPECT_EQ(m[1].to, 1);
  h.access(3);  // count 1 > page 1's 0: swap
  EXPECT_EQ(h.policy->tier_of(3), 0);
  EXPECT_EQ(h.policy->tier_of(1), 1);
  EXPECT_TRUE(h.access(0).empty());  // count 1, tier 1's lowest is 1: not larger, stays
  EXPECT_EQ(h.policy->tier_of(0), 1);
  auto m2 = h.access(0);  // count 2 > 1: the older of the two count-1 pages (2) is demoted
  ASSERT_EQ(m2.size(), 2u);
  EXPECT_EQ(m2[1].page, 2u);
  EXPECT_TRUE(h.access(3).empty());  // already in tier 1
}

TEST(Tlru, DecidesOnTheRecencyBeforeTheRequest) {
  // Thesis L1924-1930: upgrade "if recency of page K is higher than the least recency in upper
  // tier", the metadata being updated after the operation (the original Run_tLRU.cpp updates it
  // "after decision"). A page's first request therefore does not promote it into a full tier
  // (its previous recency, never, is not higher than anyone's); a second request does if the
  // first one was more recent than the faster tier's least recent page.
  Harness h("tlru", {2, 2, 10}, 6);  // 0, 1 | 2, 3 | 4, 5
  h.access(0);                       // stamp 1
  h.access(1);                       // stamp 2
  EXPECT_TRUE(h.access(4).empty());  // first request of 4: stays in tier 3
  EXPECT_EQ(h.policy->tier_of(4), 2);
  EXPECT_TRUE(h.access(2).empty());  // 2 never requested before; tier 1's LRU is 0 (stamp 1)
  auto m = h.access(4);              // 4 was requested at stamp 3 > tier 2's LRU (page 3, never): swap with 3
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].page, 4u);
  EXPECT_EQ(m[0].from, 2);
  EXPECT_EQ(m[0].to, 1);
  EXPECT_EQ(m[1].page, 3u);
  m = h.access(4);  // 4's last request (stamp 5) > tier 1's LRU (page 0, stamp 1): swap with 0
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].page, 0u);
  EXPECT_EQ(h.policy->tier_of(4), 0);
  EXPECT_EQ(h.policy->tier_of(0), 1);
}

TEST(Tlru, AStaleSecondRequestDoesNotPromote) {
  // Tier 1 = {0, 1}. Page 2's previous request (stamp 1) is older than both tier-1 pages' last
  // requests (stamps 2 and 3), so its next request leaves it in tier 2.
  Harness h("tlru", {2, 10}, 4);
  h.access(2);  // stamp 1: 2 has no previous request, stays
  h.access(0);  // stamp 2
  h.access(1);  // stamp 3
  EXPECT_TRUE(h.access(2).empty());
  EXPECT_EQ(h.policy->tier_of(2), 1);
  h.access(3);           // stamp 5, stays
  auto m = h.access(2);  // previous request stamp 4 > tier 1's LRU (0, stamp 2)
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].page, 0u);
}

TEST(Lrfu, LambdaZeroCountsAndLargeLambdaIsRecency) {
  PolicyParams p;
  p.lrfu_lambda = 0;  // F(x) = 1: CRF = number of requests
  ScorePolicy lfu(ScoreKind::kLrfu, tiers({2, 10}), 4, p);
  lfu.place(fill(tiers({2, 10}), 4));
  NoQueue q;
  std::vector<Move> mv;
  for (uint64_t t = 0; t < 3; t++) lfu.access(1, Op::kRead, t, q, mv);
  EXPECT_NEAR(lfu.score(1, 10), 3.0, 1e-12);
  p.lrfu_lambda = 1;  // F(x) = 2^-x
  ScorePolicy crf(ScoreKind::kLrfu, tiers({2, 10}), 4, p);
  crf.place(fill(tiers({2, 10}), 4));
  crf.access(1, Op::kRead, 0, q, mv);
  crf.access(1, Op::kRead, 2, q, mv);  // C = 1 + 2^-2 = 1.25 at t = 2
  EXPECT_NEAR(crf.score(1, 2), 1.25, 1e-12);
  EXPECT_NEAR(crf.score(1, 3), 0.625, 1e-12);  // decays by 2^-1 per request
}

TEST(Exd, ScoreDecaysExponentially) {
  PolicyParams p;
  p.exd_alpha = 0.1;
  ScorePolicy exd(ScoreKind::kExd, tiers({2, 10}), 4, p);
  exd.place(fill(tiers({2, 10}), 4));
  NoQueue q;
  std::vector<Move> mv;
  exd.access(3, Op::kRead, 0, q, mv);
  exd.access(3, Op::kRead, 10, q, mv);  // S = 1 + 1 * e^{-0.1 * 10}
  EXPECT_NEAR(exd.score(3, 10), 1 + std::exp(-1.0), 1e-12);
  EXPECT_NEAR(exd.score(3, 20), (1 + std::exp(-1.0)) * std::exp(-1.0), 1e-12);
}

TEST(Temperature, IncreaseAndDecreaseRules) {
  TemperatureParams p;
  p.timestep = 1;
  TemperatureModel m(1, p, nullptr);
  m.advance(0);
  EXPECT_NEAR(m.touch(0, 0), 1 - 0.5 * std::exp(-0.2), 1e-12);  // 0.5906
  m.advance(1);
  EXPECT_NEAR(m.touch(0, 1), 1 - 0.5 * std::exp(-0.2 * 2), 1e-12);  // 2 requests in the window
  const double t2 = m.temperature(0);
  m.advance(5);
  EXPECT_DOUBLE_EQ(m.temperature(0), t2);  // 4 idle timesteps: unchanged
  m.advance(6);
  EXPECT_NEAR(m.temperature(0), t2 - 0.05, 1e-12);  // 5 idle timesteps: -0.05
  m.advance(11);
  EXPECT_NEAR(m.temperature(0), t2 - 0.10, 1e-12);
  m.advance(1000);
  EXPECT_EQ(m.temperature(0), 0.0);  // floor at 0
  m.touch(0, 1000);                  // the window has slid past the old requests
  EXPECT_NEAR(m.temperature(0), 1 - 0.5 * std::exp(-0.2), 1e-12);
}

TEST(TempPolicy, UpgradesAboveTheFasterTiersMeanTemperature) {
  PolicyParams p;
  p.temp.timestep = 1;
  TempPolicy h(tiers({2, 10}), 4, p);
  h.place(fill(tiers({2, 10}), 4));
  NoQueue q;
  std::vector<Move> mv;
  h.access(0, Op::kRead, 0, q, mv);  // tier 1 page: 0.5906
  h.access(1, Op::kRead, 1, q, mv);
  h.access(1, Op::kRead, 2, q, mv);  // 0.6648; tier 1 mean 0.6277
  EXPECT_NEAR(h.mean_temperature(0), (1 - 0.5 * std::exp(-0.2) + 1 - 0.5 * std::exp(-0.4)) / 2, 1e-9);
  mv.clear();
  h.access(2, Op::kRead, 3, q, mv);  // 0.5906 < mean: stays
  EXPECT_TRUE(mv.empty());
  h.access(2, Op::kRead, 4, q, mv);  // 0.6648 > 0.6277: swaps with the coldest (page 0)
  ASSERT_EQ(mv.size(), 2u);
  EXPECT_EQ(mv[1].page, 0u);
  EXPECT_EQ(h.tier_of(2), 0);
}

TEST(Static, OraclePlacementByAccessCount) {
  SimConfig c;
  c.tiers = tiers({1, 2, 10});
  c.policy = "static";
  // Page 5 most requested, then 3, then 4.
  std::vector<uint32_t> reqs;
  for (uint32_t p : {5, 5, 5, 5, 3, 3, 3, 4, 4, 0}) reqs.push_back(p << 1);
  auto data = std::make_shared<std::vector<uint32_t>>(reqs);
  TraceWorkload w(data, 6, reqs.size());
  auto placement = initial_placement(c, w);
  EXPECT_EQ(placement[5], 0);
  EXPECT_EQ(placement[3], 1);
  EXPECT_EQ(placement[4], 1);
  EXPECT_EQ(placement[0], 2);
  c.cpu_timing = false;
  RunStats s = simulate(c, w);
  EXPECT_EQ(s.accesses[0], 4u);
  EXPECT_EQ(s.accesses[1], 5u);
  EXPECT_EQ(s.accesses[2], 1u);
  EXPECT_EQ(s.promotions[0] + s.promotions[1], 0u);
}

// Invariants over a random trace, for every policy: capacities hold, the tiers' temperature sums
// and the demotion heaps agree with a brute-force recomputation.
class AllPolicies : public ::testing::TestWithParam<std::string> {};

TEST_P(AllPolicies, CapacitiesSumsAndHeapsStayConsistent) {
  PolicyParams p;
  p.temp.timestep = 7;
  auto ts = tiers({20, 60, 500});
  auto policy = make_policy(GetParam(), ts, 500, p);
  policy->place(fill(ts, 500));
  SyntheticWorkload w({Phase{Phase::kHot, 5, 90}, Phase{Phase::kHot, 10, 80, 3}}, 500, 20000, 50, 5);
  NoQueue q;
  std::vector<Move> mv;
  for (uint64_t r = 0; r < 20000; r++) {
    uint32_t page;
    Op op;
    w.next(&page, &op);
    const int before = policy->tier_of(page);
    mv.clear();
    policy->access(page, op, r, q, mv);
    for (const Move& m : mv) EXPECT_EQ(std::abs(int(m.from) - int(m.to)), 1);
    if (!mv.empty()) {
      EXPECT_EQ(policy->tier_of(page), before - 1);
    }
    for (int t = 0; t < 3; t++) ASSERT_LE(policy->size(t), ts[static_cast<size_t>(t)].capacity_pages);
    if (r % 997 == 0) {
      if (auto* tp = dynamic_cast<TempPolicy*>(policy.get())) {
        for (int t = 0; t < 3; t++) {
          double sum = 0, lowest = 2;
          for (uint32_t pg = 0; pg < 500; pg++)
            if (tp->tier_of(pg) == t) {
              sum += tp->temperature(pg);
              lowest = std::min(lowest, tp->temperature(pg));
            }
          EXPECT_NEAR(tp->total_temperature(t), sum, 1e-6);
          if (t < 2) {
            EXPECT_DOUBLE_EQ(tp->temperature(tp->lowest(t)), lowest);
          }
        }
      }
    }
  }
  uint64_t total = 0;
  for (int t = 0; t < 3; t++) total += policy->size(t);
  EXPECT_EQ(total, 500u);
  EXPECT_GT(policy->memory_bytes(), 500u);
}

INSTANTIATE_TEST_SUITE_P(Policies, AllPolicies, ::testing::ValuesIn(builtin_names()),
                         [](const auto& info) { return info.param; });

TEST(Restore, LearnsAndUsesTheFastTier) {
  // Formerly "LearnsAndMigratesLessThanTlru": that comparison held only while tLRU promoted on
  // every request (fixed, see the Tlru tests); whether ReStore migrates less than a baseline is a
  // thesis claim for the experiments to check, not an invariant of the implementation.
  SimConfig c;
  c.tiers = {TierSpec{30, 1.5, 8, 8, 30, 4096}, TierSpec{200, 2, 4, 4, 80, 4096}, TierSpec{500, 4, 2, 2, 1000, 4096}};
  c.params.temp.timestep = 100;
  c.cpu_timing = false;
  SyntheticWorkload w({Phase{Phase::kHot, 5, 90}}, 1000, 100000, 50, 2);
  c.policy = "restore";
  RunStats rl = simulate(c, w);
  EXPECT_GT(rl.accesses[0], 0u);
  EXPECT_GT(rl.promotions[0] + rl.promotions[1], 0u);
  // Not every request to a slower tier promotes.
  EXPECT_LT(rl.promotions[0] + rl.promotions[1], rl.accesses[1] + rl.accesses[2]);
}

TEST(Restore, Eq64WeightsEachTiersValueByItsMeanTemperature) {
  // L1877: "The average temperature of the tier s_1 can be considered as an estimation of the
  // number of requests ... the value function v(s) stands for the future cost. Hence, the sum of
  // their multiplication represents an average weighted cost signal": the weighted decision
  // compares sum_tier s1 * v(s), s1 the tier's MEAN temperature (the released code's
  // commented-out variant is cost * state[0] = cost * s1 too), not its total temperature.
  // With every rule parameter p = 1 every v(s) = 1, so the decision only compares the weights:
  //   mean:  s1_i + s1_j before vs after moving page K (tier 1 has room): 0.59/4 + 0 vs 0 + 0.59/3
  //          -> the weighted cost rises, no upgrade;
  //   total: sum of all temperatures, unchanged by a move -> a tie, which upgrades.
  auto run = [](RlParams::Decision d) {
    std::vector<TierSpec> ts = tiers({3, 4, 20});
    PolicyParams p;
    p.temp.timestep = 1;
    p.rl.td.p_init = 1.0;
    p.rl.epsilon = {0.0, 0.0};
    p.rl.decision = d;
    RestorePolicy policy(ts, 20, p);
    std::vector<uint8_t> place(20, 2);
    place[0] = place[1] = 0;                        // tier 1: 2 of 3 slots used
    for (uint32_t k = 2; k < 6; k++) place[k] = 1;  // tier 2: pages 2..5
    policy.place(place);
    NoQueue q;
    std::vector<Move> moves;
    policy.access(2, Op::kRead, 1, q, moves);  // index 1: no TD step (those run at multiples of 100)
    return moves;
  };
  EXPECT_TRUE(run(RlParams::Decision::kMean).empty());
  EXPECT_TRUE(RlParams().decision == RlParams::Decision::kMean) << "the default must be the mean weighting";
  EXPECT_EQ(run(RlParams::Decision::kTotal).size(), 1u);
  EXPECT_EQ(run(RlParams::Decision::kPlain).size(), 1u);
}

TEST(Restore, AResponseIssuedBeforeTheStateBeganCountsWholeNotAsZero) {
  // The reward R_n averages the responses observed in state s_n, each weighted by how long after
  // s_n began it was observed. A response stamped before s_n began (the emulator stamped
  // completions with their request's issue index) once wrapped in unsigned arithmetic to a weight
  // of 0 while still counting in X_n, biasing R_n low; it counts whole now.
  PolicyParams p;
  p.rl.epsilon = {0.0, 0.0};
  RestorePolicy policy(tiers({3, 4, 20}), 20, p);
  std::vector<uint8_t> place(20, 2);
  place[0] = 0;
  place[1] = 1;
  policy.place(place);
  NoQueue q;
  std::vector<Move> moves;
  const uint64_t step = p.rl.step;
  policy.access(5, Op::kRead, 0, q, moves);     // the first TD step: s_0 begins at 0
  policy.observe(1, 50.0, 10);                  // a response in s_0 (without one, s_0 goes on)
  policy.access(5, Op::kRead, step, q, moves);  // the TD update: s_1 begins at `step`
  ASSERT_EQ(policy.agent(1).since, step);
  policy.observe(1, 50.0, step - 1);  // issued (stamped) just before s_1 began
  policy.observe(1, 50.0, step);      // observed as s_1 began
  EXPECT_EQ(policy.agent(1).reward_n, 2u);
  EXPECT_DOUBLE_EQ(policy.agent(1).reward_sum, 100.0);
}

TEST(Restore, ExplorationFlipsACoinOrUpgradesAsTheOriginal) {
  // With epsilon 1 every decision explores: the original code then always upgrades
  // (`left <= right || rand < epsilon`); a coin flip upgrades about half the time.
  auto promotions = [](RlParams::Explore explore) {
    PolicyParams p;
    p.rl.epsilon = {1.0, 1.0};
    p.rl.explore = explore;
    p.rl.td.p_init = 1.0;
    RestorePolicy policy(tiers({50, 50, 200}), 200, p);
    std::vector<uint8_t> place(200, 2);
    policy.place(place);  // everything in the slowest tier
    NoQueue q;
    std::vector<Move> moves;
    for (uint64_t r = 1; r <= 100; r++) policy.access(static_cast<uint32_t>(r), Op::kRead, r, q, moves);
    return std::count_if(moves.begin(), moves.end(), [](const Move& m) { return m.to < m.from; });
  };
  EXPECT_EQ(promotions(RlParams::Explore::kUpgrade), 100);
  const auto coin = promotions(RlParams::Explore::kCoin);
  EXPECT_GT(coin, 30);
  EXPECT_LT(coin, 70);
}

TEST(Restore, TheWarmUpStepsAtEachRequestAfterTheFirstOutsideTierOne) {
  // The original's RL_init_rounds: TD updates at each of the first N requests after the first
  // access outside Tier 1, then every `step`; without it, only every `step`.
  auto updates = [](uint32_t init_rounds) {
    PolicyParams p;
    p.rl.init_rounds = init_rounds;
    p.rl.epsilon = {0.0, 0.0};
    RestorePolicy policy(tiers({3, 4, 20}), 20, p);
    std::vector<uint8_t> place(20, 2);
    place[0] = 0;
    policy.place(place);
    NoQueue q;
    std::vector<Move> moves;
    policy.access(0, Op::kRead, 0, q, moves);  // Tier 1: the warm-up has not begun
    for (uint64_t r = 1; r < 60; r++) {
      policy.access(0, Op::kRead, r, q, moves);
      policy.observe(2, 100.0, r);  // a response every request, so that every step updates
    }
    policy.access(9, Op::kRead, 60, q, moves);  // the first access outside Tier 1
    for (uint64_t r = 61; r < 100; r++) {
      policy.observe(2, 100.0, r);
      policy.access(0, Op::kRead, r, q, moves);
    }
    return policy.agent(2).updates;
  };
  EXPECT_EQ(updates(0), 0u);    // the step at 0 starts the agent; none other before 100
  EXPECT_EQ(updates(20), 20u);  // and with the warm-up an update at each of 60..79
}

namespace {
// ReStore on tiers of 3, 4 and 20 pages, pages 0-2 in Tier 1, 3-6 in Tier 2, the rest in Tier 3;
// no queues, a TD step at request 0 only (step 1000), no exploration.
struct RestoreHarness {
  explicit RestoreHarness(PolicyParams p) : ts(tiers({3, 4, 20})) {
    p.temp.timestep = 1;
    p.rl.step = 1000;
    policy = std::make_unique<RestorePolicy>(ts, 20, p);
    policy->place(fill(ts, 20));
  }
  std::vector<Move> access(uint32_t page) {
    std::vector<Move> moves;
    policy->access(page, Op::kRead, now++, probe, moves);
    return moves;
  }
  std::vector<TierSpec> ts;
  std::unique_ptr<RestorePolicy> policy;
  NoQueue probe;
  uint64_t now = 0;
};
}  // namespace

TEST(Restore, ObservesEveryTierEveryNRequestsAsTheOriginal) {
  // Requests to Tier 1 only (no decisions) and one TD step: an observation per tier at that step
  // (0), or one per tier every 4 requests (the original's a_b_update_freq, Run_RL.cpp L1445).
  auto observations = [](uint32_t observe_every) {
    PolicyParams p;
    p.rl.observe_every = observe_every;
    RestoreHarness h(p);
    for (int r = 0; r < 100; r++) h.access(0);
    return std::vector<uint64_t>{h.policy->agent(0).fit1.count(), h.policy->agent(1).fit1.count(),
                                 h.policy->agent(2).fit2.count()};
  };
  EXPECT_EQ(observations(0), (std::vector<uint64_t>{1, 1, 1}));
  EXPECT_EQ(observations(4), (std::vector<uint64_t>{25, 25, 25}));
}

TEST(Restore, TheFitCentresOnTheMeanOrTheMidrange) {
  // Tier 3's mean temperature rises unevenly as its pages are requested; the membership's centre
  // is the window's mean (the thesis's expected value) or its (max + min) / 2 (the original).
  auto fitted = [](RlParams::Centre centre) {
    PolicyParams p;
    p.rl.centre = centre;
    p.rl.observe_every = 1;
    p.rl.fit_every = 1;
    p.rl.epsilon = {0.0, 0.0};
    p.rl.td.p_init = 1.0;  // equal costs: every decision upgrades, Tier 3's pages leave one by one
    RestoreHarness h(p);
    for (uint32_t page : {7, 8, 9, 9, 10, 0, 0, 0, 0, 0, 0}) h.access(page);
    return h.policy->agent(2);
  };
  const auto mean = fitted(RlParams::Centre::kMean), mid = fitted(RlParams::Centre::kMidrange);
  ASSERT_GT(std::abs(mean.fit1.mean() - (mean.fit1.max() + mean.fit1.min()) / 2), 1e-4);  // a skewed window
  EXPECT_DOUBLE_EQ(mean.m1.xbar, mean.fit1.mean());
  EXPECT_DOUBLE_EQ(mid.m1.xbar, (mid.fit1.max() + mid.fit1.min()) / 2);
  EXPECT_DOUBLE_EQ(mid.fit1.mean(), mean.fit1.mean());  // the same observations
}

TEST(Restore, RangeFloorsSmallOrAsTheOriginal) {
  // Tier 3's state never changes (s1 = 0, no queue): its range is the floor, b = 10 / floor:
  // 1e-3 and 1e-3 queued tasks, or the original's 0.1 / pages and 2 queued tasks (Run_RL.cpp
  // L1562, L1570). Tier 3's mean processing time: 750 + 2 x 750 us.
  auto slopes = [](RlParams::Floor floor) {
    PolicyParams p;
    p.rl.floor = floor;
    p.rl.observe_every = 4;
    p.rl.fit_every = 1;
    RestoreHarness h(p);
    for (int r = 0; r < 8; r++) h.access(0);
    return std::pair<double, double>{h.policy->agent(2).m1.b, h.policy->agent(2).m2.b};
  };
  const auto small = slopes(RlParams::Floor::kSmall), original = slopes(RlParams::Floor::kOriginal);
  EXPECT_DOUBLE_EQ(small.first, 10 / 1e-3);
  EXPECT_DOUBLE_EQ(small.second, 10 / (1e-3 * 2250));
  EXPECT_DOUBLE_EQ(original.first, 10 / (0.1 / 20));
  EXPECT_DOUBLE_EQ(original.second, 10 / (2 * 2250.0));
}

TEST(Restore, TheOriginalFitStartsFromOneObservation) {
  // The original's windows start with s1 = 0.5 and the s2 of 1 queued task (Run_RL.cpp L816-821),
  // and its memberships are fitted there before any request (L774-785).
  PolicyParams p;
  p.rl.start = RlParams::Start::kOriginal;
  p.rl.floor = RlParams::Floor::kOriginal;
  const RestoreHarness original(p);
  const auto& a = original.policy->agent(2);
  EXPECT_EQ(a.fit1.count(), 1u);
  EXPECT_DOUBLE_EQ(a.m1.xbar, 0.5);
  EXPECT_DOUBLE_EQ(a.m1.b, 10 / (0.1 / 20));
  EXPECT_DOUBLE_EQ(a.m2.xbar, 2250.0);
  EXPECT_DOUBLE_EQ(a.m2.b, 10 / (2 * 2250.0));
  const RestoreHarness empty{PolicyParams{}};
  EXPECT_EQ(empty.policy->agent(2).fit1.count(), 0u);
  EXPECT_DOUBLE_EQ(empty.policy->agent(2).m1.b, 10.0);
  EXPECT_DOUBLE_EQ(empty.policy->agent(2).m2.xbar, 0.0);
}

TEST(Restore, TheBasisIsTheThesissRulesOrTheOriginalsMemberships) {
  // Tier 3 at s1 = 0 (centre 0.5, range 1: mu_L = 1 / (1 + e^5)) and s2 = 0 (centre 0: mu_L = 0.5).
  auto basis = [](Basis b) {
    PolicyParams p;
    p.rl.basis = b;
    RestoreHarness h(p);
    h.access(0);  // the TD step at request 0 records the basis of the state
    const double* phi = h.policy->agent(2).phi;
    return std::vector<double>(phi, phi + kRules);
  };
  const double l1 = 1 / (1 + std::exp(5.0));
  const auto product = basis(Basis::kProduct), independent = basis(Basis::kIndependent);
  EXPECT_NEAR(product[0], (1 - l1) * 0.5, 1e-12);  // (S, S)
  EXPECT_NEAR(product[3], l1 * 0.5, 1e-12);        // (L, L)
  EXPECT_NEAR(independent[0], l1 / 2, 1e-12);      // mu_L(s1), mu_S(s1), mu_L(s2), mu_S(s2), over 2
  EXPECT_NEAR(independent[1], (1 - l1) / 2, 1e-12);
  EXPECT_NEAR(independent[2], 0.25, 1e-12);
  EXPECT_NEAR(independent[3], 0.25, 1e-12);
}

TEST(Restore, TheVictimIsChosenBeforeOrAfterThePageEnters) {
  // Tier 1's pages are hot; a page requested once is upgraded (equal costs). Chosen before it
  // enters, the victim is Tier 1's coldest; after (the original, Run_RL.cpp L1101-1147), it is
  // the page itself, which goes straight back.
  auto upgrade = [](PolicyParams::Victim victim) {
    PolicyParams p;
    p.victim = victim;
    p.rl.epsilon = {0.0, 0.0};
    RestoreHarness h(p);
    for (int r = 0; r < 3; r++)
      for (uint32_t page : {0, 1, 2}) h.access(page);
    const std::vector<Move> moves = h.access(3);
    return std::make_pair(moves, h.policy->tier_of(3));
  };
  const auto [before, tier_before] = upgrade(PolicyParams::Victim::kBefore);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_NE(before[1].page, 3u);
  EXPECT_EQ(tier_before, 0);
  const auto [after, tier_after] = upgrade(PolicyParams::Victim::kAfter);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].page, 3u);
  EXPECT_EQ(after[1].page, 3u);
  EXPECT_EQ(after[1].to, 1);
  EXPECT_EQ(tier_after, 1);
}

TEST(TempPolicy, TheOriginalAdmitsAboveTheTemperatureOfNRequests) {
  // Tiers of 2, 2 and 10 pages, page 4 in Tier 3. Without thresholds it climbs a tier per request;
  // with the original's (3 requests for Tier 1, 1 for Tier 2: Run_TEMP.cpp L723, L820) it enters
  // Tier 2 at its 2nd request and Tier 1 at its 4th.
  auto tiers_after_each_request = [](std::vector<uint32_t> admit) {
    PolicyParams p;
    p.temp.timestep = 1;
    p.temp_admit = admit;
    TempPolicy h(tiers({2, 2, 10}), 6, p);
    h.place(fill(tiers({2, 2, 10}), 6));
    NoQueue q;
    std::vector<Move> mv;
    std::vector<int> out;
    for (uint64_t r = 0; r < 4; r++) {
      h.access(4, Op::kRead, r, q, mv);
      out.push_back(h.tier_of(4));
    }
    return out;
  };
  EXPECT_EQ(tiers_after_each_request({}), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(tiers_after_each_request({3, 1}), (std::vector<int>{2, 1, 1, 0}));
}

TEST(Temperature, PagesStartAtTheInitialTemperatureAndCool) {
  // The original's pages start at 0.5 as if requested at round 0 (Run_TEMP.cpp L541-551); ours at 0.
  TemperatureParams p;
  p.timestep = 1;
  p.initial = 0.5;
  TemperatureModel m(2, p, nullptr);
  EXPECT_EQ(m.temperature(1), 0.5);
  m.advance(4);
  EXPECT_EQ(m.temperature(1), 0.5);
  m.advance(5);  // 5 idle timesteps
  EXPECT_NEAR(m.temperature(1), 0.45, 1e-12);
  m.touch(0, 5);
  EXPECT_NEAR(m.temperature(0), 1 - 0.5 * std::exp(-0.2), 1e-12);  // a request sets it as usual
  m.advance(9);
  EXPECT_NEAR(m.temperature(1), 0.45, 1e-12);
  m.advance(10);  // both idle for 5 timesteps again
  EXPECT_NEAR(m.temperature(1), 0.40, 1e-12);
  EXPECT_NEAR(m.temperature(0), 1 - 0.5 * std::exp(-0.2) - 0.05, 1e-12);
  // TEMP's tier means start there too.
  PolicyParams pp;
  pp.temp = p;
  TempPolicy h(tiers({2, 10}), 4, pp);
  h.place(fill(tiers({2, 10}), 4));
  EXPECT_DOUBLE_EQ(h.mean_temperature(0), 0.5);
  EXPECT_DOUBLE_EQ(h.mean_temperature(1), 0.5);
}

TEST(Tlru, TheOriginalsMarginAsksForTheFasterTiersCapacityInRequests) {
  // Run_tLRU.cpp promotes only if the page's last request is more recent than the faster tier's
  // least recent page's by more than that tier's capacity (2 pages here: 2 requests).
  auto promoted = [](PolicyParams::TlruMargin margin, int idle) {
    PolicyParams p;
    p.tlru_margin = margin;
    Harness h("tlru", {2, 10}, 4, p);  // 0, 1 | 2, 3
    h.access(0);                       // stamp 1: Tier 1's least recent
    h.access(1);
    for (int k = 0; k < idle; k++) h.access(3);  // stays in Tier 2 (its recency before: never or old)
    h.access(2);                                 // 2's recency before the next request
    return !h.access(2).empty();
  };
  // 2's stamp is 3 + idle against page 0's 1: more recent by 2 + idle
  EXPECT_TRUE(promoted(PolicyParams::TlruMargin::kNone, 0));
  EXPECT_FALSE(promoted(PolicyParams::TlruMargin::kCapacity, 0));  // by 2: not more than 2
  EXPECT_TRUE(promoted(PolicyParams::TlruMargin::kCapacity, 1));   // by 3
}

TEST(Restore, TheModelRewardIsEq61AsReleased) {
  // (1 / pages) sum_t 0.5 (r_t + alpha_t r_t) |K_t| e^{(1 + s1_t) / 2}, every page at 0.5
  PolicyParams p;
  p.temp.initial = 0.5;
  std::vector<TierSpec> ts = tiers({3, 4, 20});  // 30, 150, 750 us, alpha 2
  RestorePolicy policy(ts, 20, p);
  policy.place(fill(ts, 20));
  const double e = std::exp(0.75);
  EXPECT_NEAR(policy.model_cost(), (0.5 * 90 * 3 * e + 0.5 * 450 * 4 * e + 0.5 * 2250 * 13 * e) / 20, 1e-9);
}

namespace {
// The released code's agent (decision, reward, transition) on tiers of 3, 8 and 20 pages: pages 0
// and 1 in Tier 1 (one slot free), 3-6 in Tier 2, the rest in Tier 3; no queues, a TD step at each
// request after the first outside Tier 1 (init_rounds), memberships never refitted.
PolicyParams released_params() {
  PolicyParams p;
  p.temp.timestep = 1;
  p.rl.decision = RlParams::Decision::kReleased;
  p.rl.reward = RlParams::Reward::kModel;
  p.rl.transition = RlParams::Transition::kRequest;
  p.rl.basis = Basis::kIndependent;
  p.rl.init_rounds = 1000;
  p.rl.observe_every = 1000;
  p.rl.epsilon = {0.0, 0.0};
  p.rl.td.lr0 = 1e-3;
  p.rl.td.lr_decay = 0;
  return p;
}
std::vector<uint8_t> released_placement() {
  std::vector<uint8_t> place(20, 2);
  place[0] = place[1] = 0;
  for (uint32_t k = 3; k <= 6; k++) place[k] = 1;
  return place;
}
}  // namespace

TEST(Restore, TheReleasedRuleComparesEachTiersChangeOfCost) {
  const PolicyParams p = released_params();
  const std::vector<TierSpec> ts = tiers({3, 8, 20});
  RestorePolicy policy(ts, 20, p);
  policy.place(released_placement());
  NoQueue q;
  std::vector<Move> moves;
  uint64_t now = 0;
  policy.access(3, Op::kRead, now++, q, moves);  // p = 0: every cost is 0, its zero rule upgrades
  EXPECT_EQ(policy.tier_of(3), 0);
  for (int k = 0; k < 30; k++) policy.access(k % 2, Op::kRead, now++, q, moves);  // learn from the model reward
  // A never-requested Tier 3 page (all of Tier 2 and 3 at temperature 0): the released rule on the
  // policy's own costs, with its post-upgrade states (the page moved alone, 2 more queued tasks)
  const double tk = TemperatureModel::heat(p.temp.increase, 1);
  const double n2 = static_cast<double>(policy.size(1)), n3 = static_cast<double>(policy.size(2));
  const double c2_not = policy.cost(1, 0, 0), c3_not = policy.cost(2, tk / n3, 0);
  const double c2_up = policy.cost(1, tk / (n2 + 1), 2 * ts[1].avg_process_time_us());
  const double c3_up = policy.cost(2, 0, 2 * ts[2].avg_process_time_us());
  const double margin = (c2_not + c3_up) - (c2_up + c3_not);
  ASSERT_GT(std::fabs(margin), 1e-6) << "the learnt costs must tell the two actions apart";
  moves.clear();
  policy.access(19, Op::kRead, now++, q, moves);
  EXPECT_EQ(!moves.empty(), margin >= 0);
}

TEST(Restore, TheReleasedTransitionStepsFromBeforeToAfterOneDueRequest) {
  // Due requests: the first `init_rounds` after the first access outside Tier 1, then those
  // `step` + 1, 2 step + 1, ... after it (Run_RL.cpp: (i - start) % freq == 1).
  PolicyParams p = released_params();
  p.rl.init_rounds = 3;
  p.rl.step = 10;
  const std::vector<TierSpec> ts = tiers({3, 8, 20});
  RestorePolicy policy(ts, 20, p);
  policy.place(released_placement());
  NoQueue q;
  std::vector<Move> moves;
  uint64_t now = 0;
  for (int k = 0; k < 5; k++) policy.access(0, Op::kRead, now++, q, moves);  // Tier 1: nothing due yet
  EXPECT_EQ(policy.agent(0).updates, 0u);
  for (int k = 0; k < 3; k++) policy.access(k == 0 ? 10 : 0, Op::kRead, now++, q, moves);  // the start and 2 more
  EXPECT_EQ(policy.agent(0).updates, 3u);
  for (int k = 3; k <= 11; k++) policy.access(0, Op::kRead, now++, q, moves);  // 11 = step + 1: due
  EXPECT_EQ(policy.agent(2).updates, 4u);
  // every agent learnt from the one model reward, a positive cost: p rose from 0
  EXPECT_GT(policy.agent(2).td.p()[0] + policy.agent(2).td.p()[1], 0.0);
}
