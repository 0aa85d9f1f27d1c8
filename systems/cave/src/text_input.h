// Text graph inputs: SNAP-style edge lists and adjacency lists, to CSR.
#pragma once

#include <string>

#include "format.h"

namespace cave {

enum class InputFormat { Snap, Adjacency };

struct ConvertOptions {
  InputFormat format = InputFormat::Snap;
  bool undirected = false;  // store every edge in both directions
  bool renumber = false;    // dense ids in first-seen order (the original parser's reorder_node_id)
};

struct ConvertStats {
  uint64_t lines = 0;
  uint64_t input_edges = 0;  // edges read from the file (before symmetrizing and de-duplication)
  uint64_t duplicates_removed = 0;
  uint64_t self_loops = 0;  // stored self-loops
};

// Edge list: one edge `u v` per line, whitespace separated, further columns ignored; lines
// starting with '#' or '%' and blank lines are skipped. Adjacency list: `v n1 n2 ...` per
// line. Ids are unsigned integers below 2^32-1. Without renumbering the graph has
// max id + 1 vertices (ids never mentioned are isolated vertices). Every adjacency list is
// sorted and duplicates are removed; self-loops are kept.
Csr read_text_graph(const std::string& path, const ConvertOptions& opt, ConvertStats* stats = nullptr);

// True when every (u,v) has a (v,u) (lists must be sorted).
bool is_symmetric(const Csr& g);

}  // namespace cave
