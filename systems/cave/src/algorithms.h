// The five algorithms of thesis §5.4 (spec cave.md §2), vertex-granular (ProcessQueue,
// "nonblocked") and block-granular (ProcessQueueBlock, "blocked").
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "engine.h"

namespace cave {

enum class Variant { NonBlocked, Blocked };

struct BfsResult {
  uint64_t reached = 0;
  uint32_t levels = 0;             // number of BFS levels (max level + 1)
  std::vector<int32_t> level;      // -1 when unreached
};
BfsResult bfs(Graph& g, Pool& pool, Variant variant, uint32_t source);

struct WccResult {
  uint64_t components = 0;
  std::vector<uint32_t> label;     // smallest vertex id of the component
};
WccResult wcc(Graph& g, Pool& pool, Variant variant);

struct PageRankResult {
  std::vector<double> score;       // (1-d) + d * sum over neighbours u of score(u)/deg(u)
  double sum = 0;
};
PageRankResult pagerank(Graph& g, Pool& pool, Variant variant, uint32_t iterations, double damping);

struct WalkResult {
  uint64_t steps = 0;              // steps taken by all walks
  uint64_t dead_ends = 0;          // walks stopped at a vertex without neighbours
  std::vector<std::vector<uint32_t>> paths;  // when recorded: start vertex, then each step
};
WalkResult random_walk(Graph& g, Pool& pool, Variant variant, uint64_t walks, uint64_t length, uint64_t seed, bool record);

struct DfsResult {
  uint64_t visited = 0;
  uint64_t splits = 0;             // stack splits (new tasks)
  std::vector<int64_t> order;      // visit rank (global, by time), -1 when not visited
};
DfsResult pseudo_dfs(Graph& g, unsigned threads, uint32_t source, uint32_t threshold);

}  // namespace cave
