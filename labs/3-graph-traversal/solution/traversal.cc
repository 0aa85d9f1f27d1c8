// Lab 3, reference solution: CAVE's parallel BFS level loop and WCC, as a plug-in traversal of
// the engine (systems/cave/src/algorithms.h).
//
// BFS goes level by level. The frontier's vertices are handed out to the pool's workers
// (pool.parallel_for), one vertex at a time: each worker reads its vertex's adjacency list through
// the cache pool (Graph::for_each_chunk, a concurrent read when the block is not cached) and
// claims every neighbour not yet visited with a compare-and-swap on its level (-1 -> depth), so
// that exactly one worker adds it to the next frontier. Each worker has its own next-frontier
// list (no lock); the lists are joined between levels, when no worker runs. With k workers, up to
// k reads are in flight: the device's concurrency is used.
//
// WCC labels each component with its smallest vertex id: vertices in increasing order, a
// parallel BFS from every vertex not yet reached.
#include <atomic>
#include <vector>

#include "algorithms.h"

namespace {

using cave::Graph;
using cave::Pool;

// Parallel BFS levels from `frontier` (already marked in `level`); returns the vertices reached.
std::vector<uint32_t> levels_from(Graph& g, Pool& pool, std::vector<uint32_t> frontier,
                                  std::vector<std::atomic<int32_t>>& level, uint32_t& levels) {
  std::vector<uint32_t> reached;
  std::vector<std::vector<uint32_t>> next(pool.size());
  for (int32_t depth = 1; !frontier.empty(); ++depth) {
    ++levels;
    reached.insert(reached.end(), frontier.begin(), frontier.end());
    for (auto& list : next) list.clear();
    pool.parallel_for(frontier.size(), [&](size_t i, unsigned worker) {
      g.for_each_chunk(frontier[i], [&](const uint32_t* neighbours, uint32_t count, uint32_t) {
        for (uint32_t k = 0; k < count; ++k) {
          int32_t unvisited = -1;
          if (level[neighbours[k]].load(std::memory_order_relaxed) == -1 &&
              level[neighbours[k]].compare_exchange_strong(unvisited, depth, std::memory_order_relaxed))
            next[worker].push_back(neighbours[k]);
        }
      });
    });
    frontier.clear();
    for (auto& list : next) frontier.insert(frontier.end(), list.begin(), list.end());
  }
  return reached;
}

cave::BfsResult parallel_bfs(Graph& g, Pool& pool, cave::Variant, uint32_t source) {
  cave::BfsResult r;
  std::vector<std::atomic<int32_t>> level(g.n());
  for (auto& l : level) l.store(-1, std::memory_order_relaxed);
  level[source].store(0);
  r.reached = levels_from(g, pool, {source}, level, r.levels).size();
  r.level.resize(g.n());
  for (uint32_t v = 0; v < g.n(); ++v) r.level[v] = level[v].load(std::memory_order_relaxed);
  return r;
}

cave::WccResult components(Graph& g, Pool& pool, cave::Variant) {
  cave::WccResult r;
  std::vector<std::atomic<int32_t>> level(g.n());
  for (auto& l : level) l.store(-1, std::memory_order_relaxed);
  r.label.assign(g.n(), 0);
  for (uint32_t v = 0; v < g.n(); ++v) {
    if (level[v].load(std::memory_order_relaxed) != -1) continue;
    ++r.components;
    level[v].store(0);
    uint32_t levels = 0;
    for (uint32_t w : levels_from(g, pool, {v}, level, levels)) r.label[w] = v;
  }
  return r;
}

}  // namespace

CAVE_REGISTER_TRAVERSAL("student", parallel_bfs, components);
