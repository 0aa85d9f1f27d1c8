// The plug-in interface: a policy registered from its own translation unit (as lab 4's students'
// policy.cc is) is found by name beside the built-in ones and runs in the engine; the engine
// refuses every move and placement that cannot be, naming the policy, the page and the tiers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "policy.h"
#include "simulator.h"
#include "workload.h"

namespace {

using restore::Move;
using restore::Op;

// Promotes every requested page one tier, swapping with the faster tier's page 0-most when full.
class AlwaysUp : public restore::Policy {
 public:
  AlwaysUp(const std::vector<restore::TierSpec>& tiers, uint32_t pages, const restore::PolicyParams&)
      : Policy(tiers, pages) {}
  void access(uint32_t page, Op, uint64_t, restore::QueueProbe&, std::vector<Move>& moves) override {
    const int from = tier_of(page);
    if (from == 0) return;
    if (size(from - 1) >= tiers_[static_cast<size_t>(from - 1)].capacity_pages) {
      uint32_t victim = 0;
      while (tier_of(victim) != from - 1) victim++;
      move(page, from - 1, moves);
      move(victim, from, moves);
    } else {
      move(page, from - 1, moves);
    }
  }
};

// Wrong on purpose, one way per setting of `mistake`.
int mistake = 0;
class Broken : public AlwaysUp {
 public:
  using AlwaysUp::AlwaysUp;
  void access(uint32_t page, Op op, uint64_t now, restore::QueueProbe& probe, std::vector<Move>& moves) override {
    const uint8_t from = static_cast<uint8_t>(tier_of(page));
    if (mistake == 1)
      moves.push_back(Move{page, static_cast<uint8_t>(from == 0 ? 1 : 0), from});  // wrong source
    else if (mistake == 2 && from == 2)
      moves.push_back(Move{page, 2, 0});  // two tiers at once
    else if (mistake == 3 && from > 0)
      move(page, from - 1, moves);  // no swap: overfills
    else if (mistake == 4 && from > 0)
      tier_[page] = static_cast<uint8_t>(from - 1);  // not reported
    else
      AlwaysUp::access(page, op, now, probe, moves);
  }
};

}  // namespace

RESTORE_REGISTER_POLICY("test_always_up", AlwaysUp);
RESTORE_REGISTER_POLICY("test_broken", Broken);

namespace restore {
namespace {

SimConfig three_tiers() {
  SimConfig c;
  c.tiers.resize(3);
  c.tiers[0].capacity_pages = 2;
  c.tiers[1].capacity_pages = 4;
  c.tiers[2].capacity_pages = 100;
  c.cpu_timing = false;
  return c;
}

TEST(Plugin, ARegisteredPolicyIsKnownByNameAfterTheBuiltInOnes) {
  EXPECT_TRUE(known_policy("test_always_up") && known_policy("temp"));
  EXPECT_FALSE(known_policy("arc"));
  const std::vector<std::string> builtin = builtin_names();
  EXPECT_EQ(builtin.size(), 7u);
  const std::vector<std::string> all = policy_names();
  EXPECT_EQ(std::vector<std::string>(all.begin(), all.begin() + 7), builtin);
  EXPECT_THROW(make_policy("arc", three_tiers().tiers, 10), std::invalid_argument);
}

TEST(Plugin, APluginPolicyRunsInTheEngine) {
  SimConfig c = three_tiers();
  c.policy = "test_always_up";
  SyntheticWorkload w({Phase{Phase::kUniform}}, 50, 2000, 50, 3);
  RunStats s = simulate(c, w);
  EXPECT_EQ(s.requests, 2000u);
  EXPECT_GT(s.promotions[0] + s.promotions[1], 500u);
  EXPECT_EQ(s.promotions[0], s.demotions[0]);  // tier 1 is always full: every promotion swaps
}

TEST(Plugin, TheEngineRefusesMovesAndPlacementsThatCannotBe) {
  const std::pair<int, const char*> cases[] = {{1, "but it is in tier"},
                                               {2, "pages move to a neighbouring tier"},
                                               {3, "pages after a request, more than its capacity of"},
                                               {4, "by the policy's account, but its moves left it in tier"}};
  for (const auto& [which, message] : cases) {
    SCOPED_TRACE(message);
    mistake = which;
    SimConfig c = three_tiers();
    c.policy = "test_broken";
    SyntheticWorkload w({Phase{Phase::kUniform}}, 50, 2000, 50, 3);
    try {
      simulate(c, w);
      ADD_FAILURE() << "accepted";
    } catch (const PolicyError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("policy 'test_broken'"), std::string::npos) << e.what();
    }
  }
  mistake = 0;
}

}  // namespace
}  // namespace restore
