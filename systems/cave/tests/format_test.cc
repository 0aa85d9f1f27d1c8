#include "format.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "common.h"
#include "test_util.h"
#include "text_input.h"

namespace cave {
namespace {

std::vector<std::vector<uint32_t>> read_back(const std::string& path, GraphHeader* hdr = nullptr) {
  int fd = open_direct(path);
  GraphHeader h = read_header(fd, path);
  auto vs = read_vertices(fd, h);
  auto edges = read_edge_region(fd, h);
  ::close(fd);
  if (hdr) *hdr = h;
  std::vector<std::vector<uint32_t>> out(vs.size());
  for (size_t v = 0; v < vs.size(); ++v)
    for (uint64_t i = 0; i < vs[v].degree; ++i) out[v].push_back(edges[vs[v].first_edge() + i]);
  return out;
}

TEST(Format, RoundTripWithAVertexSpanningSeveralBlocks) {
  auto dir = test::temp_dir("format");
  // vertex 1 has 2500 neighbours (3 blocks); small lists around it; one empty vertex.
  std::vector<std::vector<uint32_t>> lists(3000);
  for (uint32_t i = 0; i < 2500; ++i) lists[1].push_back(i + 3);
  lists[0] = {1, 2};
  lists[2] = {};
  for (uint32_t v = 3; v < 3000; ++v) lists[v] = {1, v % 7, (v * 13) % 3000};
  Csr g = test::csr_from_lists(lists);
  const std::string path = (dir / "g.cave").string();
  write_graph(g, path);
  GraphHeader h;
  auto back = read_back(path, &h);
  EXPECT_EQ(back, lists);
  EXPECT_EQ(h.meta.num_vertices, 3000);
  EXPECT_EQ(h.meta.num_vertex_blocks, 6);  // ceil(3000 / 512)
  EXPECT_EQ(h.meta.num_edges, g.adj.size());
  EXPECT_EQ(h.file_bytes, uint64_t(h.meta.num_blocks) * kBlockSize);
  EXPECT_EQ(h.meta.num_blocks, 1 + h.meta.num_vertex_blocks + h.meta.num_edge_blocks);
}

TEST(Format, PackingRules) {
  std::vector<std::vector<uint32_t>> lists(6);
  lists[0].assign(1000, 7);  // block 0 [0,1000)
  lists[1].assign(30, 7);    // does not fit in block 0 (24 left): block 1 [0,30)
  lists[2].assign(20, 7);    // first fit: block 0 [1000,1020)
  lists[3].assign(2100, 7);  // large: 3 new consecutive blocks 2,3,4 from offset 0; 972 free in block 4
  lists[4].assign(900, 7);   // first fit: block 1 (994 free) [30,930)
  lists[5].assign(500, 7);   // block 4's tail [52,552)
  Packed p = pack(test::csr_from_lists(lists));
  auto at = [&](int v) { return std::make_pair(p.vertices[v].eb_idx(), p.vertices[v].eb_offset()); };
  EXPECT_EQ(at(0), std::make_pair(0u, 0u));
  EXPECT_EQ(at(1), std::make_pair(1u, 0u));
  EXPECT_EQ(at(2), std::make_pair(0u, 1000u));
  EXPECT_EQ(at(3), std::make_pair(2u, 0u));
  EXPECT_EQ(at(4), std::make_pair(1u, 30u));
  EXPECT_EQ(at(5), std::make_pair(4u, 52u));
  EXPECT_EQ(p.num_edge_blocks, 5u);
  EXPECT_EQ(p.vertices[3].degree, 2100u);
  // eb_addr layout: high 22 bits block, low 10 bits offset
  EXPECT_EQ(p.vertices[5].eb_addr, (4u << 10) | 52u);
}

TEST(Format, ExactlyOneFullBlock) {
  std::vector<std::vector<uint32_t>> lists(2);
  lists[0].assign(1024, 1);
  lists[1].assign(1, 0);
  Packed p = pack(test::csr_from_lists(lists));
  EXPECT_EQ(p.vertices[0].eb_addr, 0u);
  EXPECT_EQ(p.vertices[1].eb_idx(), 1u);
}

TEST(Format, RejectsForeignFiles) {
  auto dir = test::temp_dir("foreign");
  const std::string path = (dir / "x.cave").string();
  {
    std::ofstream f(path, std::ios::binary);
    std::string junk(8192, 'x');
    f << junk;
  }
  int fd = open_direct(path);
  EXPECT_THROW(read_header(fd, path), RuntimeError);
  ::close(fd);
}

TEST(TextInput, SnapUndirectedDedupAndComments) {
  auto dir = test::temp_dir("snap");
  const std::string path = (dir / "g.txt").string();
  {
    std::ofstream f(path);
    f << "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n1 2\n\n2 1\n0 1 7.5\n4 4\n";
  }
  ConvertOptions o;
  o.undirected = true;
  ConvertStats st;
  Csr g = read_text_graph(path, o, &st);
  EXPECT_EQ(g.n, 5u);  // max id + 1: vertex 3 is isolated
  EXPECT_TRUE(g.symmetric);
  EXPECT_EQ(st.input_edges, 5u);
  EXPECT_EQ(st.self_loops, 1u);
  std::vector<std::vector<uint32_t>> want = {{1}, {0, 2}, {1}, {}, {4}};
  for (uint32_t v = 0; v < g.n; ++v)
    EXPECT_EQ(std::vector<uint32_t>(g.adj.begin() + g.offsets[v], g.adj.begin() + g.offsets[v + 1]), want[v]) << v;
}

TEST(TextInput, AdjacencyDirectedAndRenumber) {
  auto dir = test::temp_dir("adj");
  const std::string path = (dir / "g.adj").string();
  {
    std::ofstream f(path);
    f << "10 20 30\n20 10\n30\n";
  }
  ConvertOptions o;
  o.format = InputFormat::Adjacency;
  o.renumber = true;
  Csr g = read_text_graph(path, o);
  EXPECT_EQ(g.n, 3u);  // 10->0, 20->1, 30->2
  EXPECT_FALSE(g.symmetric);
  EXPECT_EQ(g.degree(0), 2u);
  EXPECT_EQ(g.degree(1), 1u);
  EXPECT_EQ(g.degree(2), 0u);
}

TEST(TextInput, BadTokenNamesTheLine) {
  auto dir = test::temp_dir("bad");
  const std::string path = (dir / "g.txt").string();
  {
    std::ofstream f(path);
    f << "0 1\n1 x2\n";
  }
  try {
    read_text_graph(path, ConvertOptions{});
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(":2:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cave
