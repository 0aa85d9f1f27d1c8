#include "info.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common.h"
#include "format.h"

namespace cave {

GraphInfo graph_info(const std::string& path, uint32_t sweeps) {
  GraphInfo info;
  int fd = open_direct(path);
  GraphHeader h;
  std::vector<VertexRecord> vs;
  std::vector<uint32_t> edges;
  try {
    h = read_header(fd, path);
    vs = read_vertices(fd, h);
    EdgeCheck check(h, vs);
    if (sweeps > 0) {
      edges = read_edge_region(fd, h);
      for (uint32_t b = 0; b < uint32_t(h.meta.num_edge_blocks); ++b)
        check(b, edges.data() + uint64_t{b} * kEdgesPerBlock);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  const uint32_t n = static_cast<uint32_t>(vs.size());
  info.vertices = n;
  info.edges = h.meta.num_edges;
  info.blocks = static_cast<uint64_t>(h.meta.num_blocks);
  info.vertex_blocks = static_cast<uint64_t>(h.meta.num_vertex_blocks);
  info.edge_blocks = static_cast<uint64_t>(h.meta.num_edge_blocks);
  info.file_bytes = h.file_bytes;
  info.symmetric = (h.meta.flags & kFlagSymmetric) != 0;
  uint32_t start = 0;
  for (uint32_t v = 0; v < n; ++v) {
    const uint64_t d = vs[v].degree;
    if (d == 0) ++info.isolated_vertices;
    if (d > info.max_degree) {
      info.max_degree = d;
      start = v;
    }
  }
  info.sweeps = sweeps;
  if (sweeps == 0 || n == 0) return info;
  for (uint32_t v = 0; v < n; ++v)
    for (uint64_t i = 0; i < vs[v].degree; ++i)
      if (edges[vs[v].first_edge() + i] == v) ++info.self_loops;
  if (info.symmetric) info.undirected_edges = (info.edges - info.self_loops) / 2 + info.self_loops;
  std::vector<int32_t> level(n);
  std::vector<uint32_t> frontier, next;
  int64_t best = 0;
  for (uint32_t s = 0; s < sweeps; ++s) {
    std::fill(level.begin(), level.end(), -1);
    level[start] = 0;
    frontier.assign(1, start);
    int32_t depth = 0;
    uint32_t far = start;
    while (!frontier.empty()) {
      next.clear();
      for (uint32_t v : frontier) {
        const uint64_t g0 = vs[v].first_edge();
        for (uint64_t i = 0; i < vs[v].degree; ++i) {
          const uint32_t w = edges[g0 + i];
          if (level[w] < 0) {
            level[w] = depth + 1;
            next.push_back(w);
          }
        }
      }
      if (next.empty()) break;
      ++depth;
      far = *std::min_element(next.begin(), next.end());
      frontier.swap(next);
    }
    best = std::max<int64_t>(best, depth);
    start = far;
  }
  info.estimated_diameter = best;
  return info;
}

}  // namespace cave
