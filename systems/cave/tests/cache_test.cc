#include "cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "common.h"
#include "engine.h"
#include "format.h"
#include "test_util.h"

namespace cave {
namespace {

// A graph whose edge block b holds the value b in every used slot: vertex v has 1024
// neighbours all equal to v, so it fills edge block v exactly.
std::string block_graph(const std::string& name, uint32_t blocks) {
  auto dir = test::temp_dir(name);
  std::vector<std::vector<uint32_t>> lists(blocks);
  for (uint32_t v = 0; v < blocks; ++v) lists[v].assign(kEdgesPerBlock, v);
  const std::string path = (dir / "g.cave").string();
  write_graph(test::csr_from_lists(lists), path);
  return path;
}

TEST(ClockCache, HitsMissesAndEviction) {
  const std::string path = block_graph("cache1", 8);
  Counters c;
  Graph g(path, IoEngine::Threads, c);
  ASSERT_EQ(g.edge_blocks(), 8u);
  g.make_cache(2);
  for (uint32_t b : {0u, 1u, 0u, 1u}) {
    Pinned p(g.cache(), b);
    EXPECT_EQ(p.data()[5], b);
  }
  EXPECT_EQ(c.misses.load(), 2u);
  EXPECT_EQ(c.hits.load(), 2u);
  EXPECT_EQ(c.reads.load(), 2u);
  {
    Pinned p(g.cache(), 2);
    EXPECT_EQ(p.data()[0], 2u);
  }  // evicts one of 0, 1
  EXPECT_EQ(c.misses.load(), 3u);
  { Pinned p(g.cache(), 2); }
  EXPECT_EQ(c.hits.load(), 3u);
  EXPECT_EQ(c.bytes_read.load(), 3u * kBlockSize);
}

TEST(ClockCache, PinnedSlotsAreNotEvicted) {
  const std::string path = block_graph("cache2", 8);
  Counters c;
  Graph g(path, IoEngine::Threads, c);
  g.make_cache(2);
  Pinned keep(g.cache(), 3);
  for (uint32_t b = 0; b < 8; ++b) {
    Pinned p(g.cache(), b);
    EXPECT_EQ(p.data()[1023], b);
    EXPECT_EQ(keep.data()[0], 3u);  // never overwritten while pinned
  }
}

TEST(ClockCache, ConcurrentReadersSeeTheRightBlocks) {
  const uint32_t blocks = 64;
  const std::string path = block_graph("cache3", blocks);
  Counters c;
  Graph g(path, IoEngine::Threads, c);
  g.make_cache(8);  // much smaller than the working set: constant eviction
  std::atomic<uint64_t> wrong{0}, done{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t) {
    ts.emplace_back([&, t] {
      Rng rng(t + 1);
      for (int i = 0; i < 3000; ++i) {
        const uint32_t b = static_cast<uint32_t>(rng.below(blocks));
        Pinned p(g.cache(), b);
        for (uint32_t k = 0; k < kEdgesPerBlock; k += 97)
          if (p.data()[k] != b) wrong.fetch_add(1);
        done.fetch_add(1);
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(c.hits.load() + c.misses.load(), done.load());
  EXPECT_EQ(c.misses.load(), c.reads.load());
  EXPECT_GT(c.misses.load(), 0u);
  EXPECT_GT(c.lock_acquisitions.load(), 0u);
}

TEST(ClockCache, EveryBlockReadOnceWhenTheCacheHoldsAll) {
  const uint32_t blocks = 32;
  const std::string path = block_graph("cache4", blocks);
  Counters c;
  Graph g(path, IoEngine::Threads, c);
  g.make_cache(blocks);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int r = 0; r < 20; ++r)
        for (uint32_t b = 0; b < blocks; ++b) Pinned p(g.cache(), b);
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(c.reads.load(), blocks);  // concurrent misses on one block are read once
}

// A block whose check fails: every thread that pins it gets the error (also threads that
// were waiting for the read), nobody keeps a pin, and other blocks still go through.
TEST(ClockCache, FailedCheckIsThrownToEveryReaderAndLeavesNoPin) {
  const uint32_t blocks = 8;
  const std::string path = block_graph("cache5", blocks);
  Counters c;
  auto device = open_device(path, IoEngine::Threads, c);
  ClockCache cache(2, blocks, *device, 2, c, [](uint32_t b, const uint32_t*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // others arrive while block 3 is being read
    if (b == 3) throw RuntimeError("bad block 3");
  });
  std::atomic<int> errors{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 6; ++t)
    ts.emplace_back([&] {
      try {
        Pinned p(cache, 3);
      } catch (const RuntimeError& e) {
        if (std::string(e.what()) == "bad block 3") errors.fetch_add(1);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(errors.load(), 6);
  for (uint32_t b : {0u, 1u, 2u, 4u}) {  // both slots are free again
    Pinned p(cache, b);
    EXPECT_EQ(p.data()[7], b);
  }
  EXPECT_THROW(Pinned(cache, 3), RuntimeError);  // evicted by now: read and checked again
}

}  // namespace
}  // namespace cave
