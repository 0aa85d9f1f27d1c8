// Seeded graph generators; they write SNAP-style edge lists (one `u v` per line).
#pragma once

#include <cstdint>
#include <string>

namespace cave {

enum class Model { BA, RMAT, Road };

struct GenerateOptions {
  Model model = Model::BA;
  uint64_t seed = 42;
  // ba: Barabási–Albert, `vertices` vertices, each new one attached to `ba_m` distinct existing
  // vertices chosen proportionally to degree (the thesis's SD: 50M vertices, m = 25).
  uint64_t vertices = 100000;
  uint32_t ba_m = 25;
  // rmat: 2^scale vertices, edge_factor * 2^scale edges, quadrant probabilities a, b, c
  // (d = 1 - a - b - c); vertex ids are permuted at random; self-loops are dropped.
  uint32_t scale = 16;
  uint32_t edge_factor = 16;
  double a = 0.57, b = 0.19, c = 0.19;
  // road: rows x cols grid (4-neighbour); a random spanning tree of the grid is kept (the
  // graph is connected) and every other grid edge is removed with probability `removal`
  // (mean degree about 2 + 2 (1 - removal)); each vertex gets a shortcut with probability `shortcuts` to a random
  // vertex at most `shortcut_span` rows and columns away.
  uint32_t rows = 300, cols = 300;
  double removal = 0.6;
  double shortcuts = 0.01;
  uint32_t shortcut_span = 8;
};

struct GenerateResult {
  uint64_t vertices = 0;
  uint64_t edges = 0;  // lines written
};

// Same options and seed -> same bytes.
GenerateResult generate(const GenerateOptions& opt, const std::string& output);

}  // namespace cave
