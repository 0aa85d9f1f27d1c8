// CAVE's own traversal ("cave" in the registry, algorithms.h): parallel BFS by levels and WCC by
// one parallel BFS per component (thesis §5.4, Algorithms 2-3).
#include "algorithms.h"
#include "common.h"

namespace cave {

namespace {

// PBFS levels from `frontier` (already marked), shared by BFS and WCC. level[] is the
// visited array (CAS from -1); the component's vertices are appended to `seen` if given.
void pbfs(Graph& g, Pool& pool, Variant variant, std::vector<uint32_t> frontier,
          std::vector<std::atomic<int32_t>>& level, uint64_t& reached, uint32_t& levels, std::vector<uint32_t>* seen) {
  std::vector<std::vector<uint32_t>> next(pool.size());
  BlockTasks tasks;
  int32_t depth = 0;
  while (!frontier.empty()) {
    reached += frontier.size();
    ++levels;
    if (seen) seen->insert(seen->end(), frontier.begin(), frontier.end());
    ++depth;
    for (auto& q : next) q.clear();
    auto visit = [&](unsigned tid) {
      return [&, tid](const uint32_t* nbrs, uint32_t count, uint32_t) {
        for (uint32_t i = 0; i < count; ++i) {
          const uint32_t w = nbrs[i];
          int32_t expected = -1;
          if (level[w].load(std::memory_order_relaxed) == -1 &&
              level[w].compare_exchange_strong(expected, depth, std::memory_order_relaxed))
            next[tid].push_back(w);
        }
      };
    };
    if (variant == Variant::NonBlocked) {
      pool.parallel_for(frontier.size(), [&](size_t i, unsigned tid) { g.for_each_chunk(frontier[i], visit(tid)); });
    } else {
      tasks.keys.clear();
      for (uint32_t v : frontier) {
        if (g.degree(v) == 0) continue;
        for (uint64_t b = g.first_block(v), b1 = g.last_block(v); b <= b1; ++b) tasks.keys.push_back((b << 32) | v);
      }
      tasks.finish();
      pool.parallel_for(tasks.size(), [&](size_t t, unsigned tid) {
        const uint32_t b = tasks.block(t);
        Pinned p(g.cache(), b);  // the block is read once for all its frontier vertices
        for (size_t k = tasks.starts[t]; k < tasks.starts[t + 1]; ++k)
          g.chunk_in_block(static_cast<uint32_t>(tasks.keys[k]), b, p.data(), visit(tid));
      });
    }
    frontier.clear();
    for (auto& q : next) frontier.insert(frontier.end(), q.begin(), q.end());
  }
}

}  // namespace

BfsResult bfs(Graph& g, Pool& pool, Variant variant, uint32_t source) {
  BfsResult r;
  const uint32_t n = g.n();
  if (n == 0) return r;
  std::vector<std::atomic<int32_t>> level(n);
  for (auto& l : level) l.store(-1, std::memory_order_relaxed);
  level[source].store(0);
  pbfs(g, pool, variant, {source}, level, r.reached, r.levels, nullptr);
  r.level.resize(n);
  for (uint32_t v = 0; v < n; ++v) r.level[v] = level[v].load(std::memory_order_relaxed);
  return r;
}

WccResult wcc(Graph& g, Pool& pool, Variant variant) {
  if (!g.symmetric())
    throw UsageError(
        "--algorithm wcc needs a symmetric graph (weak connectivity follows edges both ways): "
        "convert the input with --undirected");
  WccResult r;
  const uint32_t n = g.n();
  std::vector<std::atomic<int32_t>> visited(n);
  for (auto& l : visited) l.store(-1, std::memory_order_relaxed);
  r.label.assign(n, 0);
  std::vector<uint32_t> members;
  for (uint32_t i = 0; i < n; ++i) {
    if (visited[i].load(std::memory_order_relaxed) != -1) continue;
    ++r.components;
    visited[i].store(0);
    if (g.degree(i) == 0) {  // isolated vertex: a component of its own, no I/O needed
      r.label[i] = i;
      continue;
    }
    members.clear();
    uint64_t reached = 0;
    uint32_t levels = 0;
    pbfs(g, pool, variant, {i}, visited, reached, levels, &members);
    for (uint32_t v : members) r.label[v] = i;  // i is the smallest id: every smaller one is already labelled
  }
  return r;
}

std::vector<NamedTraversal> builtin_traversals() { return {{"cave", Traversal{bfs, wcc}}}; }

}  // namespace cave
