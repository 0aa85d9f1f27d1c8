// Lab 3: CAVE's parallel BFS and WCC, as a plug-in traversal of the out-of-core graph engine.
//
// The engine (systems/cave) keeps the vertex array in memory and the adjacency lists on the SSD,
// in 4 KiB blocks read through a small cache pool. The interface is in systems/cave/src/:
//   Graph (engine.h)   g.n() vertices; g.degree(v); g.for_each_chunk(v, f) calls
//                      f(neighbours, count, chunk) for each block of v's list, reading the block
//                      from the device when it is not cached (it may be called from any thread)
//   Pool (engine.h)    pool.size() workers; pool.parallel_for(count, fn) calls fn(i, worker) for
//                      i = 0 .. count-1 on the workers and returns when all are done; the engine
//                      gives it as many workers as --io-threads: that many reads can be in flight
//   BfsResult, WccResult (algorithms.h)  what the engine prints and the grader checks
// This starter compiles and runs, but finds nothing: fill in the TODOs.
#include <atomic>
#include <vector>

#include "algorithms.h"

namespace {

using cave::Graph;
using cave::Pool;

cave::BfsResult parallel_bfs(Graph& g, Pool& pool, cave::Variant, uint32_t source) {
  cave::BfsResult r;
  r.level.assign(g.n(), -1);  // level[v]: BFS distance from source, -1 when not reached
  r.level[source] = 0;
  std::vector<uint32_t> frontier{source};
  // TODO: the level loop. While the frontier is not empty: count its vertices in r.reached and
  // the level in r.levels; visit its vertices' neighbours in parallel (pool.parallel_for over the
  // frontier, g.for_each_chunk for the neighbours); every neighbour not yet visited gets the next
  // level and goes into the next frontier, exactly once, whichever worker finds it first (a
  // compare-and-swap on a std::atomic<int32_t> level avoids a lock; one next-frontier list per
  // worker avoids another). Then the next frontier becomes the frontier.
  (void)pool;
  r.reached = frontier.size();
  r.levels = 1;
  return r;
}

cave::WccResult components(Graph& g, Pool& pool, cave::Variant) {
  cave::WccResult r;
  r.label.assign(g.n(), 0);
  // TODO: label every vertex with the smallest vertex id of its component and count the
  // components in r.components: a parallel BFS from each vertex not yet reached, in increasing
  // order (reuse your level loop).
  (void)pool;
  for (uint32_t v = 0; v < g.n(); ++v) r.label[v] = v;
  r.components = g.n();
  return r;
}

}  // namespace

// --traversal student
CAVE_REGISTER_TRAVERSAL("student", parallel_bfs, components);
