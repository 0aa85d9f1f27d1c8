// The plug-in interface: a policy registered from its own translation unit (as lab 2's students'
// policy.cc is) is found by name beside the built-in ones and runs in the pool; the pool refuses
// every answer it cannot carry out, naming the policy and the frame; the I/O log holds each phase.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "policy.h"
#include "simulator.h"
#include "workload.h"

namespace {

using acesim::Frame;
using acesim::FrameState;

// FIFO: evicts in load order, writes back nothing. Small, and unlike every built-in policy.
class Fifo : public acesim::Policy {
 public:
  explicit Fifo(const std::vector<FrameState>& frames) : Policy(frames) {}
  void on_hit(Frame, uint64_t) override {}
  void on_load(Frame f, uint64_t) override { order_.push_back(f); }
  void make_evict_first(Frame f) override {
    std::erase(order_, f);
    order_.insert(order_.begin(), f);
  }
  Frame victim(const std::vector<Frame>& pinned) override {
    for (Frame f : order_)
      if (std::find(pinned.begin(), pinned.end(), f) == pinned.end()) return f;
    return acesim::kNoFrame;
  }
  void on_evict(Frame f) override { std::erase(order_, f); }
  std::vector<Frame> writeback_candidates(Frame, int, const std::vector<Frame>&) override { return {}; }

 protected:
  std::vector<Frame> order_;
};

// Wrong on purpose, one way per setting of `mistake`.
int mistake = 0;
class Broken : public Fifo {
 public:
  using Fifo::Fifo;
  Frame victim(const std::vector<Frame>& pinned) override {
    if (mistake == 1) return acesim::kNoFrame;
    if (mistake == 2) return static_cast<Frame>(frames_.size());
    return Fifo::victim(pinned);
  }
  std::vector<Frame> writeback_candidates(Frame victim, int max, const std::vector<Frame>&) override {
    if (mistake == 3) return {victim};
    if (mistake == 4) {  // a clean frame
      for (Frame f = 0; f < static_cast<Frame>(frames_.size()); f++)
        if (!frames_[f].dirty) return {f};
    }
    if (mistake == 5) return std::vector<Frame>(static_cast<size_t>(max) + 1, victim == 0 ? 1 : 0);
    return {};
  }
};

}  // namespace

ACESIM_REGISTER_POLICY("test_fifo", Fifo);
ACESIM_REGISTER_POLICY("test_broken", Broken);

namespace acesim {
namespace {

TEST(Plugin, ARegisteredPolicyIsKnownByNameAfterTheBuiltInOnes) {
  EXPECT_TRUE(known_policy("test_fifo"));
  EXPECT_TRUE(known_policy("lru_wsr"));
  EXPECT_FALSE(known_policy("arc"));
  EXPECT_EQ(policy_names().rfind("lru, cflru, lru_wsr, clock, expcache", 0), 0u) << policy_names();
  EXPECT_THROW(make_policy("arc", std::vector<FrameState>(3)), std::invalid_argument);
}

TEST(Plugin, APluginPolicyRunsInThePool) {
  Config c;
  c.policy = "test_fifo";
  c.pool_pages = 2;
  Simulator sim(c);
  for (uint32_t block : {1, 2, 1, 3, 1}) sim.access(make_page(0, block), false);
  // FIFO: 3 evicts 1 (loaded first) although 1 was just used; LRU would have evicted 2.
  EXPECT_EQ(sim.counters().misses, 4u);
  EXPECT_TRUE(sim.resident(make_page(0, 1)) && sim.resident(make_page(0, 3)));
}

TEST(Plugin, ThePoolRefusesAnswersItCannotCarryOut) {
  const std::pair<int, const char*> cases[] = {{1, "victim() returned no frame"},
                                               {2, "not a frame of the pool"},
                                               {3, "the victim itself"},
                                               {4, "which is not dirty"},
                                               {5, "more than the 3 asked for"}};
  for (const auto& [which, message] : cases) {
    SCOPED_TRACE(message);
    mistake = which;
    Config c;
    c.policy = "test_broken";
    c.pool_pages = 4;
    c.ace = true;
    c.n_w = 4;
    Simulator sim(c);
    try {
      for (uint32_t block = 0; block < 12; block++) sim.access(make_page(0, block), block % 2 == 0);
      ADD_FAILURE() << "accepted";
    } catch (const PolicyError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("policy 'test_broken'"), std::string::npos) << e.what();
    }
  }
  mistake = 0;
}

TEST(Plugin, TheIoLogHoldsEveryPhaseInOrder) {
  Config c;
  c.policy = "lru";
  c.pool_pages = 2;
  c.ace = true;
  c.n_w = 2;
  Simulator sim(c);
  std::ostringstream log;
  sim.set_io_log(&log);
  // W1 W2 fill the pool; R3 evicts dirty 1 with dirty 2 (one batch), then reads 3.
  sim.access(make_page(0, 1), true);
  sim.access(make_page(0, 2), true);
  sim.access(make_page(0, 3), false);
  const std::string p1 = std::to_string(make_page(0, 1)), p2 = std::to_string(make_page(0, 2)),
                    p3 = std::to_string(make_page(0, 3));
  EXPECT_EQ(log.str(), "R " + p1 + "\nR " + p2 + "\nW " + p1 + " " + p2 + "\nR " + p3 + "\n");
}

}  // namespace
}  // namespace acesim
