#include "cli.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "format.h"
#include "test_util.h"

namespace cave {
namespace {

struct Result {
  int rc;
  std::string out, err;
};

Result run(std::vector<std::string> args) {
  args.insert(args.begin(), "cave");
  std::ostringstream out, err;
  int rc = cli_main(args, out, err);
  return {rc, out.str(), err.str()};
}

TEST(Cli, BadArgumentsExit2AndNameTheOption) {
  auto r = run({"run", "--graph", "x", "--algorithm", "sssp"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("cave: error: --algorithm must be one of bfs|wcc|pagerank|randomwalk|dfs"), std::string::npos)
      << r.err;
  r = run({"run", "--graph", "x", "--algorithm", "bfs", "--io-threads", "0"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--io-threads must be in [1, 4096]"), std::string::npos) << r.err;
  r = run({"run", "--graph", "x", "--algorithm", "bfs", "--cache-blocks", "4", "--cache-fraction", "0.1"});
  EXPECT_EQ(r.rc, 2);
  r = run({"run", "--graph", "x", "--algorithm", "bfs", "--iterations", "3"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--iterations applies only to --algorithm pagerank"), std::string::npos) << r.err;
  r = run({"run", "--graph", "x", "--algorithm", "dfs", "--variant", "blocked"});
  EXPECT_EQ(r.rc, 2);
  r = run({"convert", "--input", "a", "--format", "csv", "--output", "b"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--format must be one of snap|adjacency"), std::string::npos);
  r = run({"generate", "--model", "ba", "--output", "x", "--scale", "3"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--scale applies only to --model rmat"), std::string::npos);
  r = run({"frobnicate"});
  EXPECT_EQ(r.rc, 2);
  r = run({"run", "--bogus", "1"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown option --bogus"), std::string::npos);
}

TEST(Cli, MissingFileExits1) {
  auto r = run({"run", "--graph", "/nonexistent/g.cave", "--algorithm", "bfs"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("cannot open /nonexistent/g.cave"), std::string::npos) << r.err;
}

TEST(Cli, GenerateConvertInfoRun) {
  auto dir = test::temp_dir("cli");
  const std::string e = (dir / "e.txt").string(), g = (dir / "g.cave").string();
  ASSERT_EQ(run({"generate", "--model", "road", "--rows", "30", "--cols", "30", "--output", e}).rc, 0);
  auto c = run({"convert", "--input", e, "--format", "snap", "--undirected", "--output", g});
  ASSERT_EQ(c.rc, 0) << c.err;
  auto i = run({"info", "--graph", g});
  ASSERT_EQ(i.rc, 0) << i.err;
  EXPECT_EQ(i.out.substr(0, i.out.find('\n')), kInfoColumns);
  auto r = run({"run", "--graph", g, "--algorithm", "bfs", "--io-threads", "2", "--cache-blocks", "4"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(header, kRunColumns);
  EXPECT_EQ(std::count(row.begin(), row.end(), ','), std::count(header.begin(), header.end(), ','));
}

// Overwrites bytes of a file in place.
void patch(const std::string& path, uint64_t offset, const std::string& bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

const std::vector<std::pair<std::string, std::string>> kAllRuns = {
    {"bfs", "nonblocked"},        {"bfs", "blocked"},         {"wcc", "nonblocked"},
    {"wcc", "blocked"},           {"pagerank", "nonblocked"}, {"pagerank", "blocked"},
    {"randomwalk", "nonblocked"}, {"randomwalk", "blocked"},  {"dfs", "nonblocked"}};

// Issue 18: `0 1`, `1 2` converted undirected, bytes 8192..8195 := 00 00 00 70. Every
// algorithm and `info` died with SIGSEGV; now each stops with exit 1 and names the place.
TEST(Cli, CorruptNeighbourIdIsAClearError) {
  auto dir = test::temp_dir("corrupt-id");
  const std::string e = (dir / "e.txt").string(), g = (dir / "g.cave").string();
  std::ofstream(e) << "0 1\n1 2\n";
  ASSERT_EQ(run({"convert", "--input", e, "--format", "snap", "--undirected", "--output", g}).rc, 0);
  patch(g, 8192, std::string("\x00\x00\x00\x70", 4));
  const std::string want =
      "cave: error: corrupt graph file " + g +
      ": edge block 0 (file block 2, byte 8192) holds neighbour id 1879048192 in the list of vertex 0, but "
      "the graph has 3 vertices (ids 0 to 2); convert the input again with `cave convert`\n";
  for (const auto& [algo, variant] : kAllRuns)
    for (const char* threads : {"1", "4"}) {
      auto r = run({"run", "--graph", g, "--algorithm", algo, "--variant", variant, "--io-threads", threads});
      EXPECT_EQ(r.rc, 1) << algo << " " << variant;
      EXPECT_EQ(r.err, want);
      EXPECT_EQ(r.out, "");
    }
  auto i = run({"info", "--graph", g});
  EXPECT_EQ(i.rc, 1);
  EXPECT_EQ(i.err, want);
}

// A bad block met by one worker while the others read and wait: the run stops with the
// error (no deadlock, no partial row), for every algorithm.
TEST(Cli, CorruptBlockFoundByAWorkerStopsTheRun) {
  auto dir = test::temp_dir("corrupt-worker");
  const std::string e = (dir / "e.txt").string(), g = (dir / "g.cave").string();
  ASSERT_EQ(run({"generate", "--model", "road", "--rows", "60", "--cols", "60", "--output", e}).rc, 0);
  ASSERT_EQ(run({"convert", "--input", e, "--format", "snap", "--undirected", "--output", g}).rc, 0);
  const uint64_t size = std::filesystem::file_size(g);
  patch(g, size - kBlockSize + 40, std::string("\xff\xff\xff\x7f", 4));  // slot 10 of the last edge block
  for (const auto& [algo, variant] : kAllRuns) {
    auto r = run(
        {"run", "--graph", g, "--algorithm", algo, "--variant", variant, "--io-threads", "8", "--cache-blocks", "2"});
    EXPECT_EQ(r.rc, 1) << algo << " " << variant;
    EXPECT_NE(r.err.find("holds neighbour id 2147483647 in the list of vertex"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(Cli, EmptyGraphHasNoStartVertex) {
  auto dir = test::temp_dir("empty");
  const std::string e = (dir / "e.txt").string(), g = (dir / "g.cave").string();
  std::ofstream(e) << "# nothing\n";
  ASSERT_EQ(run({"convert", "--input", e, "--format", "snap", "--output", g}).rc, 0);
  for (const char* algo : {"bfs", "dfs"}) {
    auto r = run({"run", "--graph", g, "--algorithm", algo, "--source", "0"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "cave: error: --algorithm " + std::string(algo) + " needs a start vertex, but " + g +
                         " has no vertices (--source 0)\n");
  }
  EXPECT_EQ(run({"run", "--graph", g, "--algorithm", "randomwalk"}).rc, 2);
  EXPECT_EQ(run({"run", "--graph", g, "--algorithm", "wcc"}).rc, 0);
  EXPECT_EQ(run({"run", "--graph", g, "--algorithm", "pagerank"}).rc, 0);
  EXPECT_EQ(run({"info", "--graph", g}).rc, 0);
}

}  // namespace
}  // namespace cave
