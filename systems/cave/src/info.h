// `cave info`: the numbers of Table 5.1 for a block file.
#pragma once

#include <cstdint>
#include <string>

namespace cave {

struct GraphInfo {
  uint64_t vertices = 0, edges = 0, undirected_edges = 0, self_loops = 0, isolated_vertices = 0, max_degree = 0;
  uint64_t blocks = 0, vertex_blocks = 0, edge_blocks = 0, file_bytes = 0;
  bool symmetric = false;
  int64_t estimated_diameter = -1;  // -1 when not computed
  uint32_t sweeps = 0;
};

// Reads the whole file into memory (O_DIRECT). The diameter estimate is the largest BFS
// eccentricity found by `sweeps` BFS sweeps, the first from the highest-degree vertex and
// each next one from the farthest vertex of the previous (2 = the double-sweep lower
// bound); it is a lower bound on the diameter of that vertex's component.
GraphInfo graph_info(const std::string& path, uint32_t sweeps);

}  // namespace cave
