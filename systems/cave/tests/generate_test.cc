#include "generate.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "test_util.h"
#include "text_input.h"

namespace cave {
namespace {

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class Generators : public ::testing::TestWithParam<Model> {};

TEST_P(Generators, SameSeedSameBytesOtherSeedOtherBytes) {
  auto dir = test::temp_dir("gen");
  GenerateOptions o;
  o.model = GetParam();
  o.vertices = 2000;
  o.ba_m = 4;
  o.scale = 10;
  o.edge_factor = 8;
  o.rows = o.cols = 40;
  const std::string a = (dir / "a.txt").string(), b = (dir / "b.txt").string(), c = (dir / "c.txt").string();
  auto ra = generate(o, a);
  generate(o, b);
  o.seed = 43;
  generate(o, c);
  EXPECT_GT(ra.edges, 0u);
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_NE(slurp(a), slurp(c));
}

INSTANTIATE_TEST_SUITE_P(AllModels, Generators, ::testing::Values(Model::BA, Model::RMAT, Model::Road));

TEST(Generators, BarabasiAlbertShape) {
  auto dir = test::temp_dir("ba");
  GenerateOptions o;
  o.model = Model::BA;
  o.vertices = 5000;
  o.ba_m = 5;
  const std::string p = (dir / "ba.txt").string();
  auto r = generate(o, p);
  EXPECT_EQ(r.edges, (5000u - 5u) * 5u);
  ConvertOptions co;
  co.undirected = true;
  Csr g = read_text_graph(p, co);
  EXPECT_EQ(g.n, 5000u);
  EXPECT_EQ(g.adj.size(), 2u * r.edges);  // m distinct targets: no duplicate edges
  uint64_t max_deg = 0;
  for (uint32_t v = 0; v < g.n; ++v) {
    EXPECT_GE(g.degree(v), 5u);
    max_deg = std::max(max_deg, g.degree(v));
  }
  EXPECT_GT(max_deg, 100u);  // preferential attachment: hubs far above the mean of 10
}

TEST(Generators, RoadIsSparseAndLocal) {
  auto dir = test::temp_dir("road");
  GenerateOptions o;
  o.model = Model::Road;
  o.rows = 100;
  o.cols = 100;
  const std::string p = (dir / "road.txt").string();
  generate(o, p);
  ConvertOptions co;
  co.undirected = true;
  Csr g = read_text_graph(p, co);
  const double mean = double(g.adj.size()) / g.n;
  EXPECT_GT(mean, 2.0);
  EXPECT_LT(mean, 3.6);
  for (uint32_t v = 0; v < g.n; ++v)
    for (uint64_t i = g.offsets[v]; i < g.offsets[v + 1]; ++i) {
      const int64_t dr = int64_t(v / 100) - int64_t(g.adj[i] / 100), dc = int64_t(v % 100) - int64_t(g.adj[i] % 100);
      EXPECT_LE(std::abs(dr), 8);
      EXPECT_LE(std::abs(dc), 8);
    }
}

TEST(Generators, RmatIsSkewed) {
  auto dir = test::temp_dir("rmat");
  GenerateOptions o;
  o.model = Model::RMAT;
  o.scale = 12;
  o.edge_factor = 8;
  const std::string p = (dir / "r.txt").string();
  auto r = generate(o, p);
  EXPECT_GT(r.edges, 4096u * 8u * 9u / 10u);  // self-loops dropped only
  Csr g = read_text_graph(p, ConvertOptions{});
  uint64_t max_deg = 0;
  for (uint32_t v = 0; v < g.n; ++v) max_deg = std::max(max_deg, g.degree(v));
  EXPECT_GT(max_deg, 100u);  // mean out-degree is about 8
}

}  // namespace
}  // namespace cave
