#include "algorithms.h"

#include <gtest/gtest.h>

#include <numeric>

#include "common.h"
#include "test_util.h"
#include "text_input.h"

namespace cave {
namespace {

// Random symmetric graph with a hub of 3000 neighbours (3 edge blocks).
std::vector<std::vector<uint32_t>> random_lists(uint32_t n, uint32_t m, uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<uint32_t>> l(n);
  auto add = [&](uint32_t u, uint32_t v) {
    l[u].push_back(v);
    l[v].push_back(u);
  };
  for (uint32_t i = 0; i < m; ++i) add(static_cast<uint32_t>(rng.below(n)), static_cast<uint32_t>(rng.below(n)));
  for (uint32_t i = 1; i <= 3000 && i < n; ++i) add(0, (i * 7) % n);
  for (auto& x : l) {
    std::sort(x.begin(), x.end());
    x.erase(std::unique(x.begin(), x.end()), x.end());
  }
  return l;
}

std::vector<int32_t> serial_bfs(const std::vector<std::vector<uint32_t>>& l, uint32_t s) {
  std::vector<int32_t> lv(l.size(), -1);
  std::vector<uint32_t> q{s};
  lv[s] = 0;
  for (size_t i = 0; i < q.size(); ++i)
    for (uint32_t w : l[q[i]])
      if (lv[w] < 0) {
        lv[w] = lv[q[i]] + 1;
        q.push_back(w);
      }
  return lv;
}

class Algorithms : public ::testing::Test {
 protected:
  void SetUp() override {
    lists_ = random_lists(20000, 15000, 7);  // sparse: many components
    dir_ = test::temp_dir("algo");
    path_ = (dir_ / "g.cave").string();
    write_graph(test::csr_from_lists(lists_, true), path_);
  }
  std::vector<std::vector<uint32_t>> lists_;
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(Algorithms, BfsMatchesSerialForAllVariantsThreadsAndCaches) {
  const auto want = serial_bfs(lists_, 0);
  for (Variant var : {Variant::NonBlocked, Variant::Blocked})
    for (unsigned threads : {1u, 8u})
      for (uint32_t cache : {8u, 100000u}) {
        Counters c;
        Graph g(path_, IoEngine::Threads, c);
        g.make_cache(cache);
        Pool pool(threads);
        auto r = bfs(g, pool, var, 0);
        EXPECT_EQ(r.level, want);
        EXPECT_EQ(r.reached, uint64_t(std::count_if(want.begin(), want.end(), [](int32_t x) { return x >= 0; })));
      }
}

TEST_F(Algorithms, BlockedReadsEachBlockAtMostOncePerLevel) {
  Counters c;
  Graph g(path_, IoEngine::Threads, c);
  g.make_cache(8);
  Pool pool(4);
  auto r = bfs(g, pool, Variant::Blocked, 0);
  EXPECT_LE(c.reads.load(), uint64_t(g.edge_blocks()) * r.levels);
}

TEST_F(Algorithms, WccLabelsAreSmallestIdsOfComponents) {
  std::vector<uint32_t> want(lists_.size(), UINT32_MAX);
  uint64_t comps = 0;
  for (uint32_t v = 0; v < lists_.size(); ++v)
    if (want[v] == UINT32_MAX) {
      ++comps;
      auto lv = serial_bfs(lists_, v);
      for (uint32_t w = 0; w < lists_.size(); ++w)
        if (lv[w] >= 0) want[w] = v;
    }
  for (Variant var : {Variant::NonBlocked, Variant::Blocked}) {
    Counters c;
    Graph g(path_, IoEngine::Threads, c);
    g.make_cache(16);
    Pool pool(4);
    auto r = wcc(g, pool, var);
    EXPECT_EQ(r.components, comps);
    EXPECT_EQ(r.label, want);
  }
}

TEST_F(Algorithms, PageRankIsBitIdenticalAcrossVariantsAndThreads) {
  std::vector<double> first;
  for (Variant var : {Variant::NonBlocked, Variant::Blocked})
    for (unsigned threads : {1u, 8u}) {
      Counters c;
      Graph g(path_, IoEngine::Threads, c);
      g.make_cache(threads == 1 ? 8 : 100000);
      Pool pool(threads);
      auto r = pagerank(g, pool, var, 5, 0.85);
      if (first.empty())
        first = r.score;
      else
        EXPECT_EQ(r.score, first);
    }
  // one iteration by hand
  Counters c;
  Graph g(path_, IoEngine::Threads, c);
  g.make_cache(64);
  Pool pool(2);
  auto r = pagerank(g, pool, Variant::NonBlocked, 1, 0.85);
  for (uint32_t v : {0u, 1u, 2u, 19999u}) {
    double s = 0;
    for (uint32_t u : lists_[v]) s += 1.0 / lists_[u].size();
    EXPECT_NEAR(r.score[v], 0.15 + 0.85 * s, 1e-12 * (0.15 + 0.85 * s)) << v;
  }
}

TEST_F(Algorithms, RandomWalksFollowEdgesAndDoNotDependOnThreads) {
  std::vector<std::vector<uint32_t>> first;
  for (Variant var : {Variant::NonBlocked, Variant::Blocked})
    for (unsigned threads : {1u, 8u}) {
      Counters c;
      Graph g(path_, IoEngine::Threads, c);
      g.make_cache(32);
      Pool pool(threads);
      auto r = random_walk(g, pool, var, 200, 30, 42, true);
      for (auto& p : r.paths)
        for (size_t k = 1; k < p.size(); ++k)
          EXPECT_TRUE(std::binary_search(lists_[p[k - 1]].begin(), lists_[p[k - 1]].end(), p[k]));
      uint64_t steps = 0;
      for (auto& p : r.paths) steps += p.size() - 1;
      EXPECT_EQ(steps, r.steps);
      if (first.empty())
        first = r.paths;
      else
        EXPECT_EQ(r.paths, first);
    }
}

TEST_F(Algorithms, PseudoDfsVisitsEveryReachableVertexOnce) {
  const auto want = serial_bfs(lists_, 0);
  for (unsigned threads : {1u, 2u, 8u}) {
    Counters c;
    Graph g(path_, IoEngine::Threads, c);
    g.make_cache(32);
    auto r = pseudo_dfs(g, threads, 0, 8);
    std::vector<int64_t> ranks;
    for (uint32_t v = 0; v < want.size(); ++v) {
      EXPECT_EQ(r.order[v] >= 0, want[v] >= 0) << v;
      if (r.order[v] >= 0) ranks.push_back(r.order[v]);
    }
    std::sort(ranks.begin(), ranks.end());
    for (size_t i = 0; i < ranks.size(); ++i) ASSERT_EQ(ranks[i], int64_t(i));  // each visited exactly once
    EXPECT_EQ(r.visited, ranks.size());
    if (threads > 1) {
      EXPECT_GT(r.splits, 0u);
    }
  }
}

}  // namespace
}  // namespace cave
