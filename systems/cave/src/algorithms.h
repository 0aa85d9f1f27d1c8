// The five algorithms of thesis §5.4 [T:1219-1484], vertex-granular (ProcessQueue,
// "nonblocked") and block-granular (ProcessQueueBlock, "blocked").
//
// BFS and WCC are also a plug-in interface: a traversal (a BFS and a WCC over Graph and Pool) is
// found by name in one registry (cave run --traversal NAME). CAVE's own is "cave"
// (traversal.cc); a plug-in is a .cc file linked into cave (CMake's CAVE_PLUGINS; lab 3 of labs/
// builds students' traversals this way) that registers its functions with CAVE_REGISTER_TRAVERSAL.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine.h"

namespace cave {

enum class Variant { NonBlocked, Blocked };

struct BfsResult {
  uint64_t reached = 0;
  uint32_t levels = 0;         // number of BFS levels (max level + 1)
  std::vector<int32_t> level;  // -1 when unreached
};
BfsResult bfs(Graph& g, Pool& pool, Variant variant, uint32_t source);

struct WccResult {
  uint64_t components = 0;
  std::vector<uint32_t> label;  // smallest vertex id of the component
};
WccResult wcc(Graph& g, Pool& pool, Variant variant);

struct PageRankResult {
  std::vector<double> score;  // (1-d) + d * sum over neighbours u of score(u)/deg(u)
  double sum = 0;
};
PageRankResult pagerank(Graph& g, Pool& pool, Variant variant, uint32_t iterations, double damping);

struct WalkResult {
  uint64_t steps = 0;                        // steps taken by all walks
  uint64_t dead_ends = 0;                    // walks stopped at a vertex without neighbours
  std::vector<std::vector<uint32_t>> paths;  // when recorded: start vertex, then each step
};
WalkResult random_walk(Graph& g, Pool& pool, Variant variant, uint64_t walks, uint64_t length, uint64_t seed,
                       bool record);

struct DfsResult {
  uint64_t visited = 0;
  uint64_t splits = 0;         // stack splits (new tasks)
  std::vector<int64_t> order;  // visit rank (global, by time), -1 when not visited
};
DfsResult pseudo_dfs(Graph& g, unsigned threads, uint32_t source, uint32_t threshold);

// DFSTASK's loop body (Algorithm 7, lines 4-23), shared by pseudo_dfs's threads and by
// cave-trace's deterministic schedule (trace.cc): pops the top of `stack`, pushes its neighbours
// it claims in `visited`, and when the stack then holds more than `threshold` vertices offers its
// bottom half to `spawn`, which returns whether a new task took it (else the stack goes on
// whole). Returns the vertex visited.
template <typename Spawn>
uint32_t dfs_step(Graph& g, std::vector<uint32_t>& stack, std::vector<std::atomic<uint8_t>>& visited,
                  uint32_t threshold, Spawn&& spawn) {
  const uint32_t v = stack.back();
  stack.pop_back();
  g.for_each_chunk(v, [&](const uint32_t* nbrs, uint32_t count, uint32_t) {
    for (uint32_t i = 0; i < count; ++i) {
      uint8_t expected = 0;
      const uint32_t w = nbrs[i];
      if (visited[w].load(std::memory_order_relaxed) == 0 && visited[w].compare_exchange_strong(expected, 1))
        stack.push_back(w);
    }
  });
  if (stack.size() > threshold) {  // split evenly; the span is only copied when a task takes it
    const size_t half = stack.size() / 2;
    if (spawn(std::span<const uint32_t>(stack.data(), half)))
      stack.erase(stack.begin(), stack.begin() + static_cast<ptrdiff_t>(half));
  }
  return v;
}

struct Traversal {
  BfsResult (*bfs)(Graph& g, Pool& pool, Variant variant, uint32_t source);
  WccResult (*wcc)(Graph& g, Pool& pool, Variant variant);
};
struct NamedTraversal {
  std::string name;
  Traversal traversal;
};
// "cave": bfs() and wcc() above (traversal.cc); none in libcave_plugins_only.a.
std::vector<NamedTraversal> builtin_traversals();
// The registry (traversal_registry.cc): the built-in traversal, then those a plug-in adds before
// main() runs. A second traversal by a name already taken, or a name other than [a-z0-9_]+, stops
// the program.
bool register_traversal(const std::string& name, Traversal traversal);
std::vector<std::string> traversal_names();
// Throws UsageError for a name nobody registered.
const Traversal& traversal(const std::string& name);

}  // namespace cave

// In a plug-in's .cc, at namespace scope: BFS and WCC (functions with bfs()'s and wcc()'s
// signatures) become --traversal NAME.
#define CAVE_REGISTER_TRAVERSAL(NAME, BFS, WCC) \
  static const bool cave_registered_traversal = ::cave::register_traversal(NAME, ::cave::Traversal{BFS, WCC})
