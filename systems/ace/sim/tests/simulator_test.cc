// Algorithm 1 through the simulator: the pages written and evicted, prefetching, the
// virtual time, ExpCache, the predictors, and the PIO model's ideal speedup.
#include "simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "prefetch.h"
#include "workload.h"

namespace acesim {
namespace {

Config config(const std::string& policy, int pool, bool ace = false, int n_w = 8) {
  Config c;
  c.policy = policy;
  c.pool_pages = pool;
  c.ace = ace;
  c.n_w = n_w;
  return c;
}

// "W1 R2 ...": an access (R) or a dirtying access (W) to a page (block) of relation 0.
void run(Simulator& sim, const std::string& ops) {
  std::istringstream in(ops);
  std::string op;
  while (in >> op) sim.access(make_page(0, std::stoul(op.substr(1))), op[0] == 'W');
}

uint64_t P(uint32_t block) { return make_page(0, block); }

std::vector<uint32_t> from_tail(Simulator& sim) {
  std::vector<uint32_t> out;
  for (Frame f : dynamic_cast<ListPolicy&>(sim.policy()).order_from_tail())
    out.push_back(page_block(sim.frames()[f].page));
  return out;
}

// ------------------------------------------------------------------ Figure 4.6a

// Least recently used first: p6(100, D) p5(200) p4(300, D) p3(20) p2(21, D) p1(22). The
// last three are sequential misses, so that a miss on 23 is the fourth of a TaP run.
const char* kFigure46a = "W100 R200 W300 R20 W21 R22";

TEST(Figure46a, WithoutPrefetchingAceWritesP6P4P2AndEvictsP6) {
  Config c = config("lru", 6, true, 3);
  Simulator sim(c);
  run(sim, kFigure46a);
  run(sim, "R23");
  EXPECT_EQ(sim.last_batch(), (std::vector<uint64_t>{P(100), P(300), P(21)}));
  EXPECT_FALSE(sim.resident(P(100)));
  for (uint32_t b : {200, 300, 20, 21, 22, 23}) EXPECT_TRUE(sim.resident(P(b))) << b;
  EXPECT_FALSE(sim.frames()[sim.frame_of(P(300))].dirty);  // written, resident, clean
  EXPECT_EQ(from_tail(sim), (std::vector<uint32_t>{200, 300, 20, 21, 22, 23}));
  EXPECT_EQ(sim.counters().write_batches, 1u);
  EXPECT_EQ(sim.counters().pages_written, 3u);
}

TEST(Figure46a, WithPrefetchingAceEvictsP6P5P4AndPlacesThePrefetchedPagesLast) {
  Config c = config("lru", 6, true, 3);
  c.n_e = 3;
  c.prefetch = Prefetch::kSequential;
  Simulator sim(c);
  sim.set_nblocks({1000});
  run(sim, kFigure46a);
  EXPECT_EQ(sim.counters().prefetch_issued, 0u);  // runs of at most 3 while filling
  run(sim, "R23");
  EXPECT_EQ(sim.last_batch(), (std::vector<uint64_t>{P(100), P(300), P(21)}));
  for (uint32_t b : {100, 200, 300}) EXPECT_FALSE(sim.resident(P(b))) << b;
  // 24 and 25 were read with 23 and placed at the tail, the last placed evicted first
  EXPECT_EQ(from_tail(sim), (std::vector<uint32_t>{25, 24, 20, 21, 22, 23}));
  EXPECT_EQ(sim.counters().prefetch_issued, 2u);
  run(sim, "R24");
  EXPECT_EQ(sim.counters().prefetch_used, 1u);
  EXPECT_EQ(sim.counters().misses, 7u);
}

TEST(Prefetching, AfterACleanVictimThePageIsReadAlone) {
  Config c = config("lru", 6, true, 3);
  c.n_e = 3;
  c.prefetch = Prefetch::kSequential;
  Simulator sim(c);
  sim.set_nblocks({1000});
  run(sim, "R100 R200 R300 R20 R21 R22 R23");  // 23 ends a run of 4, but its victim is clean
  EXPECT_EQ(sim.counters().prefetch_issued, 0u);
  EXPECT_EQ(sim.counters().read_rounds, 7u);
}

// ------------------------------------------------------------------ virtual time

TEST(VirtualTime, HandComputedRuntimes) {
  // Pool of 2, read 10 us, alpha 3, 1 us per access. W1 W2 W3 W4: 4 reads; the misses on
  // 3 and 4 evict dirty pages 1 and 2. LRU: 4 * 1 + 4 * 10 + 2 * 30 = 104.
  Config c = config("lru", 2);
  c.device = Device{10, 3, 4, 2, 8192};
  c.cpu_us_per_access = 1;
  {
    Simulator sim(c);
    run(sim, "W1 W2 W3 W4");
    EXPECT_DOUBLE_EQ(sim.virtual_runtime_us(), 104);
  }
  // ACE with n_w = 2: the miss on 3 writes 1 and 2 together (k_w = 2: one write time), the
  // miss on 4 evicts the now clean 2: 4 + 40 + 30 = 74.
  c.ace = true;
  c.n_w = 2;
  {
    Simulator sim(c);
    run(sim, "W1 W2 W3 W4");
    EXPECT_DOUBLE_EQ(sim.virtual_runtime_us(), 74);
    EXPECT_EQ(sim.counters().dirty_evictions, 1u);
    EXPECT_EQ(sim.counters().pages_written, 2u);
  }
  // ... but a device with k_w = 1 writes them one after the other: 104 again.
  c.device.k_w = 1;
  {
    Simulator sim(c);
    run(sim, "W1 W2 W3 W4");
    EXPECT_DOUBLE_EQ(sim.virtual_runtime_us(), 104);
  }
}

TEST(VirtualTime, PrefetchedPagesAreReadTogetherWithTheRequestedOne) {
  // k_r = 2, n_e = 4. 0, 1, 2 are read alone (runs 1-3); 3 ends a run of 4 and is read with
  // 4, 5, 6 (two read times); 4, 5, 6 are hits; 7 continues the run and is read with 8, 9,
  // 10, whose victims are the clean 0, 1, 2. 3 * 10 + 20 + 20 = 70.
  Config c = config("lru", 8, true);
  c.prefetch = Prefetch::kSequential;
  c.n_e = 4;
  c.device = Device{10, 2, 2, 8, 8192};
  Simulator sim(c);
  sim.set_nblocks({100});
  run(sim, "R0 R1 R2 R3 R4 R5 R6 R7");
  EXPECT_DOUBLE_EQ(sim.virtual_runtime_us(), 70);
  EXPECT_EQ(sim.counters().misses, 5u);
  EXPECT_EQ(sim.counters().prefetch_issued, 6u);
  EXPECT_EQ(sim.counters().prefetch_used, 3u);
  for (uint32_t b : {0, 1, 2}) EXPECT_FALSE(sim.resident(P(b)));
}

TEST(VirtualTime, PrefetchStopsAtTheRelationsEnd) {
  Config c = config("lru", 8, true);
  c.prefetch = Prefetch::kSequential;
  c.n_e = 4;
  Simulator sim(c);
  sim.set_nblocks({5});
  run(sim, "R0 R1 R2 R3");
  EXPECT_EQ(sim.counters().prefetch_issued, 1u);  // only block 4 exists
}

// ------------------------------------------------------------------ ACE's invariants

Synthetic workload(double read_pct, double hot_ops, double hot_pages, uint64_t ops = 60000) {
  Synthetic w;
  w.ops = ops;
  w.pages = 5000;
  w.read_pct = read_pct;
  w.hot_ops_pct = hot_ops;
  w.hot_pages_pct = hot_pages;
  w.seed = 7;
  return w;
}

const char* const kAll[] = {"lru", "cflru", "lru_wsr", "clock", "expcache"};

void expect_same(const Simulator& a, const Simulator& b) {
  const Counters &x = a.counters(), &y = b.counters();
  EXPECT_EQ(x.hits, y.hits);
  EXPECT_EQ(x.misses, y.misses);
  EXPECT_EQ(x.dirty_evictions, y.dirty_evictions);
  EXPECT_EQ(x.pages_written, y.pages_written);
  EXPECT_EQ(x.write_batches, y.write_batches);
  EXPECT_EQ(a.virtual_runtime_us(), b.virtual_runtime_us());
}

TEST(Ace, WithNw1EveryPolicyIsExactlyItsBaseline) {
  for (const std::string p : kAll) {
    SCOPED_TRACE(p);
    Simulator base(config(p, 500)), ace(config(p, 500, true, 1));
    replay(base, workload(50, 90, 10));
    replay(ace, workload(50, 90, 10));
    expect_same(base, ace);
  }
}

TEST(Ace, WithAceOffNothingDependsOnNw) {
  for (const std::string p : kAll) {
    SCOPED_TRACE(p);
    Simulator a(config(p, 500, false, 1)), b(config(p, 500, false, 32));
    replay(a, workload(10, 90, 10));
    replay(b, workload(10, 90, 10));
    expect_same(a, b);
  }
}

// LRU's and Clock Sweep's victims do not depend on dirtiness and the Writer reorders
// nothing under them, so ACE without prefetching keeps exactly the same pages resident.
// (Under CFLRU, LRU-WSR and ExpCache it does change them: pages it cleans become
// clean-first candidates, or LRU-WSR's warm dirty pages move to the head.)
TEST(Ace, WithoutPrefetchingTheWriterNeverChangesWhatIsResidentUnderLruAndClock) {
  for (const std::string p : {"lru", "clock"}) {
    for (const Synthetic& w : {workload(50, 90, 10), workload(10, 90, 10), workload(50, 50, 50)}) {
      SCOPED_TRACE(p);
      Simulator base(config(p, 500)), ace(config(p, 500, true, 8));
      replay(base, w);
      replay(ace, w);
      EXPECT_EQ(base.counters().misses, ace.counters().misses);
      EXPECT_EQ(base.counters().hits, ace.counters().hits);
      EXPECT_LT(ace.virtual_runtime_us(), base.virtual_runtime_us());
    }
  }
}

// The PIO model (thesis Appendix A). Write-only, uniform over many more pages than the
// pool: every miss evicts a dirty page. LRU pays a write and a read per miss, 1 + alpha.
// ACE-LRU writes its victim with the next n_w - 1 dirty pages of the LRU order in
// ceil(n_w / k_w) write times; the next n_w - 1 misses evict exactly those pages (hits are
// too rare to reorder them), now clean. Per miss, 1 + alpha * ceil(n_w / k_w) / n_w, so
//   speedup = (1 + alpha) / (1 + alpha * ceil(n_w / k_w) / n_w),
// which for n_w = k_w is the PIO speedup k_w (f_r + f_w alpha) / (k_w f_r + f_w alpha)
// at f_r = f_w = 1/2 (one read and one write per miss).
TEST(Ace, SpeedupApproachesThePioModelOnAWriteOnlyWorkload) {
  struct Case {
    double alpha;
    int n_w, k_w;
  };
  for (Case k : {Case{2.8, 8, 8}, Case{1, 8, 8}, Case{8, 8, 8}, Case{4, 4, 8}, Case{2, 16, 8}, Case{3, 6, 4}}) {
    Synthetic w;
    w.ops = 200000;
    w.pages = 1000000;
    w.read_pct = 0;
    w.hot_ops_pct = 100;
    w.hot_pages_pct = 100;
    Config base = config("lru", 1000);
    base.device = Device{100, k.alpha, 80, k.k_w, 8192};
    Config ace = base;
    ace.ace = true;
    ace.n_w = k.n_w;
    Simulator b(base), a(ace);
    replay(b, w);
    replay(a, w);
    const double rounds = std::ceil(static_cast<double>(k.n_w) / k.k_w);
    const double model = (1 + k.alpha) / (1 + k.alpha * rounds / k.n_w);
    const double measured = b.virtual_runtime_us() / a.virtual_runtime_us();
    EXPECT_NEAR(measured, model, 0.01 * model) << "alpha " << k.alpha << " n_w " << k.n_w << " k_w " << k.k_w;
    if (k.n_w == k.k_w) {  // the same as thesis Appendix A's S_PIO at f_r = 0.5
      const double pio = k.k_w * (0.5 + 0.5 * k.alpha) / (k.k_w * 0.5 + 0.5 * k.alpha);
      EXPECT_DOUBLE_EQ(model, pio);
    }
  }
}

TEST(Ace, NonResidentWriteIsLoadedAndCountedApart) {
  Simulator sim(config("clock", 4));
  sim.access(P(1), false);
  sim.mark_dirty(P(1));
  sim.mark_dirty(P(2));  // not resident: only through interleaved processes
  EXPECT_EQ(sim.counters().accesses, 1u);
  EXPECT_EQ(sim.counters().misses, 1u);
  EXPECT_EQ(sim.counters().w_nonresident, 1u);
  EXPECT_TRUE(sim.frames()[sim.frame_of(P(2))].dirty);
  EXPECT_TRUE(sim.frames()[sim.frame_of(P(1))].dirty);
  EXPECT_EQ(sim.counters().read_rounds, 2u);
}

TEST(Clock, FreeFramesFirstThenTheHandFromFrameZero) {
  Simulator sim(config("clock", 3));
  run(sim, "R1 R2 R3 R1 R1 R4");
  auto& clock = dynamic_cast<ClockPolicy&>(sim.policy());
  // frames 0, 1, 2 hold 1, 2, 3; 1 has count 3; the sweep: 3 -> 2, 1 -> 0, 1 -> 0, 2 -> 1,
  // then frame 1 (page 2) goes
  EXPECT_EQ(sim.frame_of(P(4)), 1);
  EXPECT_EQ(clock.usage(0), 1);
  EXPECT_EQ(clock.usage(1), 1);
  EXPECT_EQ(clock.usage(2), 0);
  EXPECT_EQ(clock.hand(), 2);
}

// ------------------------------------------------------------------ ExpCache

ExpCachePolicy& expcache(Simulator& sim) { return dynamic_cast<ExpCachePolicy&>(sim.policy()); }

TEST(ExpCache, ReadWriteDiscriminatedEvictionAndGhostCaches) {
  // L = 4: tolerance L * TF = 0.4 accesses.
  Simulator sim(config("expcache", 4));
  run(sim, "R1 W2 R3 R1 R4");  // R: 1 (freq 2, t4), 3 (t3), 4 (t5); W: 2 (t2)
  EXPECT_TRUE(expcache(sim).in_write_cache(sim.frame_of(P(2))));
  EXPECT_EQ(expcache(sim).freq(sim.frame_of(P(1))), 2u);
  expcache(sim).force_expert(1);  // LRU: LRU(R) = 3 (t3) is newer than LRU(W) = 2 (t2) by 1 > 0.4
  run(sim, "R5");
  EXPECT_FALSE(sim.resident(P(2)));
  EXPECT_EQ(sim.counters().dirty_evictions, 1u);
  expcache(sim).force_expert(0);  // LFU, W empty: LFU(R) = 3 (freq 1, oldest)
  run(sim, "R6");
  EXPECT_FALSE(sim.resident(P(3)));
  expcache(sim).force_expert(1);  // 2 is in both ghosts; LRU(R) = 1 (t4) goes
  run(sim, "R2");
  EXPECT_FALSE(sim.resident(P(1)));
  EXPECT_EQ(expcache(sim).ghost_lru_hits(), 1u);
  EXPECT_EQ(expcache(sim).ghost_lfu_hits(), 1u);
  expcache(sim).force_expert(0);  // 1 comes back with its frequency from G_LFU
  run(sim, "R1");
  EXPECT_EQ(expcache(sim).freq(sim.frame_of(P(1))), 2u);
  EXPECT_FALSE(sim.resident(P(4)));              // LFU(R): 4 (freq 1, t5) before 5, 6, 2
  EXPECT_DOUBLE_EQ(expcache(sim).w_lru(), 0.5);  // both experts equally good so far
}

TEST(ExpCache, ToleranceKeepsASlightlyOlderDirtyPage) {
  // L = 10: tolerance 1 access. W1 (t1), then 2..10 clean. LRU: R's 2 (t2) is newer than
  // W's 1 (t1) by 1 <= 1: the clean 2 goes. Next: 3 (t3) vs 1 (t1): 2 > 1, the dirty 1 goes.
  Simulator sim(config("expcache", 10));
  run(sim, "W1 R2 R3 R4 R5 R6 R7 R8 R9 R10");
  expcache(sim).force_expert(1);
  run(sim, "R11");
  EXPECT_FALSE(sim.resident(P(2)));
  EXPECT_EQ(sim.counters().dirty_evictions, 0u);
  expcache(sim).force_expert(1);
  run(sim, "R12");
  EXPECT_FALSE(sim.resident(P(1)));
  EXPECT_EQ(sim.counters().dirty_evictions, 1u);
}

TEST(ExpCache, LfuEvictsTheLessFrequentCandidate) {
  Simulator sim(config("expcache", 4));
  run(sim, "W1 W1 R2 R3 R4");  // W: 1 (freq 2); R: 2, 3, 4 (freq 1)
  expcache(sim).force_expert(0);
  run(sim, "R5");
  EXPECT_FALSE(sim.resident(P(2)));
}

TEST(ExpCache, WeightsFollowTheGhostHits) {
  // L = 4, ghosts of 2. 1 reaches freq 3; LRU evicts 1, 4, 5 in turn; G_LRU then holds
  // 4, 5 and G_LFU 1 (freq 3), 5. The miss on 1 (access 10) is a G_LFU hit only.
  Simulator sim(config("expcache", 4));
  run(sim, "R1 R1 R1 R4 R5 R6");
  for (const char* op : {"R7", "R8", "R9"}) {
    expcache(sim).force_expert(1);
    run(sim, op);
  }
  run(sim, "R1");
  EXPECT_EQ(expcache(sim).ghost_lru_hits(), 0u);
  EXPECT_EQ(expcache(sim).ghost_lfu_hits(), 1u);
  EXPECT_EQ(expcache(sim).freq(sim.frame_of(P(1))), 3u);
  // Alg. 3 at t = 10: eta = sqrt(ln 20 / 10), eta_pre = sqrt(ln 18 / 9), losses 1 and 0.9,
  // equal weights before: v_LRU = 1 / (1 + e^(0.1 eta)) = 0.486320, w = 0.05 + 0.9 v
  EXPECT_NEAR(expcache(sim).w_lru(), 0.487688, 1e-6);
}

TEST(ExpCache, AceWritesTheWriteCachesLruPagesWhichBecomeClean) {
  Simulator sim(config("expcache", 4, true, 2));
  run(sim, "W1 W2 W3 R4");
  expcache(sim).force_expert(1);  // LRU(R) = 4 (t4), LRU(W) = 1 (t1): 1 goes, dirty
  run(sim, "R5");
  EXPECT_EQ(sim.last_batch(), (std::vector<uint64_t>{P(1), P(2)}));
  EXPECT_FALSE(expcache(sim).in_write_cache(sim.frame_of(P(2))));
  EXPECT_TRUE(expcache(sim).in_write_cache(sim.frame_of(P(3))));
}

// ------------------------------------------------------------------ predictors

TEST(Predictor, TapTriggersOnTheFourthSequentialMiss) {
  Predictor p;
  EXPECT_EQ(p.tap_observe(P(10)), 1);
  EXPECT_EQ(p.tap_observe(P(11)), 2);
  EXPECT_EQ(p.tap_observe(P(50)), 1);  // an unrelated miss does not break the run
  EXPECT_EQ(p.tap_observe(P(12)), 3);
  EXPECT_EQ(p.tap_observe(P(13)), 4);
  EXPECT_EQ(p.tap_observe(make_page(1, 14)), 1);  // another relation fork
}

TEST(Predictor, TapForgetsTheOldestOf256Entries) {
  Predictor p;
  p.tap_observe(P(0));                                                 // enters 1
  for (uint32_t i = 0; i < 256; i++) p.tap_observe(P(1000 + 10 * i));  // 256 more entries
  EXPECT_EQ(p.tap_observe(P(1)), 1);
}

TEST(Predictor, HistoryWeightsAndPrediction) {
  Predictor p;
  for (uint32_t b : {1, 2, 1, 2, 1, 3, 1, 4}) p.history_observe(P(b));
  // row 1: 2 (weight 2), 3 (1), 4 (1); a new successor, 5, lowers the weakest (3) to 0,
  // then takes its slot, and gains one more
  for (uint32_t b : {1, 5, 1, 5, 1, 5}) p.history_observe(P(b));
  EXPECT_EQ(p.history_predict(P(1), 7), (std::vector<uint32_t>{2, 5}));
  EXPECT_TRUE(p.history_predict(P(3), 7).empty());  // row 3: 1 once, below the threshold
}

TEST(Predictor, HistoryChainsFromTheMostLikelySuccessor) {
  Predictor p;
  for (int round = 0; round < 2; round++)
    for (uint32_t b : {10, 20, 30, 40}) p.history_observe(P(b));
  // 10 -> 20 (2), 20 -> 30 (2), 30 -> 40 (2), 40 -> 10 (1)
  EXPECT_EQ(p.history_predict(P(10), 7), (std::vector<uint32_t>{20, 30, 40}));
  EXPECT_EQ(p.history_predict(P(10), 2), (std::vector<uint32_t>{20, 30}));
}

// ------------------------------------------------------------------ determinism

TEST(Determinism, SyntheticWorkloadIsAFunctionOfItsSeed) {
  Synthetic w = workload(50, 90, 10, 1000);
  SyntheticGenerator a(w), b(w);
  int hot = 0, reads = 0;
  for (int i = 0; i < 1000; i++) {
    Op x = a.next(), y = b.next();
    ASSERT_EQ(x.page, y.page);
    ASSERT_EQ(x.kind, y.kind);
    hot += page_block(x.page) < 500;
    reads += x.kind == Op::kRead;
  }
  EXPECT_NEAR(hot, 900, 40);
  EXPECT_NEAR(reads, 500, 60);
  w.seed = 8;
  SyntheticGenerator c(w);
  SyntheticGenerator d(workload(50, 90, 10, 1000));
  int same = 0;
  for (int i = 0; i < 1000; i++) same += c.next().page == d.next().page;
  EXPECT_LT(same, 100);
}

}  // namespace
}  // namespace acesim

namespace acesim {
namespace {

// CFLRU finds its victims through stamps (policy.h); the walk of freelist.c must agree.
TEST(Cflru, FastVictimsEqualThoseOfTheWalk) {
  for (bool ace : {false, true}) {
    for (const Synthetic& w : {workload(50, 90, 10), workload(10, 90, 10), workload(90, 50, 50)}) {
      Config c = config("cflru", 300, ace, 8);
      c.prefetch = ace ? Prefetch::kHistory : Prefetch::kOff;
      Simulator fast(c), walk(c);
      dynamic_cast<ListPolicy&>(walk.policy()).set_reference_walk(true);
      replay(fast, w);
      replay(walk, w);
      expect_same(fast, walk);
      EXPECT_EQ(from_tail(fast), from_tail(walk));
    }
  }
}

}  // namespace
}  // namespace acesim
