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

// Issue 42: PageRank sums each vertex's list as its in-edges; a file converted without
// --undirected holds out-lists, on which that is not PageRank. Refused before the run, unless
// asked for the ranks over out-lists (--pagerank-directed).
TEST(Cli, PageRankRefusesADirectedFileUnlessAskedForOutDegreeRanks) {
  auto dir = test::temp_dir("pagerank-directed");
  const std::string e = (dir / "e.txt").string(), directed = (dir / "d.cave").string(),
                    symmetric = (dir / "s.cave").string();
  std::ofstream(e) << "0 1\n1 2\n";
  ASSERT_EQ(run({"convert", "--input", e, "--format", "snap", "--output", directed}).rc, 0);
  ASSERT_EQ(run({"convert", "--input", e, "--format", "snap", "--undirected", "--output", symmetric}).rc, 0);
  for (const char* variant : {"nonblocked", "blocked"}) {
    auto r = run({"run", "--graph", directed, "--algorithm", "pagerank", "--variant", variant});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "cave: error: --algorithm pagerank needs a graph converted with --undirected, and " + directed +
                         " is directed: PageRank sums over in-edges, and the file holds out-edges only. Convert the "
                         "input again with `cave convert ... --undirected`, or give --pagerank-directed for ranks over "
                         "the out-edges (each vertex scored from the vertices it points to, divided by their "
                         "out-degrees)\n");
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(run({"run", "--graph", directed, "--algorithm", "pagerank", "--pagerank-directed"}).rc, 0);
  EXPECT_EQ(run({"run", "--graph", symmetric, "--algorithm", "pagerank"}).rc, 0);
  EXPECT_EQ(run({"run", "--graph", symmetric, "--algorithm", "pagerank", "--pagerank-directed"}).rc, 0);
  auto r = run({"run", "--graph", directed, "--algorithm", "bfs", "--pagerank-directed"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "cave: error: --pagerank-directed applies only to --algorithm pagerank\n");
}

// Issue 42: a message quotes input escaped (artifact/quote.h), so a NUL cannot end it early and a
// control character cannot forge a line of it; a long value is cut.
TEST(Cli, MessagesEscapeWhatTheyQuote) {
  auto r = run({"run", "--graph", "g", "--algorithm", std::string("bf\0s", 4)});
  EXPECT_EQ(r.err, "cave: error: --algorithm must be one of bfs|wcc|pagerank|randomwalk|dfs, got 'bf\\x00s'\n");
  r = run({"run", "--graph", "g", "--algorithm", "bfs", "--io-threads", "1\nerror: forged"});
  EXPECT_EQ(r.err, "cave: error: --io-threads needs a whole number in [1, 4096], got '1\\nerror: forged'\n");
  r = run({"run", "--graph", "g", "--algorithm", "pagerank", "--damping", std::string(100, '9') + "\r"});
  EXPECT_EQ(r.err,
            "cave: error: --damping needs a number in [0, 1], got '" + std::string(60, '9') + "'... (101 bytes)\n");
  r = run({"run", "--graph", "g", "--algorithm", "bfs", "--traversal", std::string("x\0y", 3)});
  EXPECT_EQ(r.err, "cave: error: --traversal must be one of cave, test_serial, not 'x\\x00y'\n");  // plugin_test.cc's
  r = run({"run", "--graph", "g", "--algorithm", "bfs", "--emulate", "read_latency_us=1,al\x1bpha=1"});
  EXPECT_EQ(r.err,
            "cave: error: --emulate: unknown key 'al\\x1bpha' (known: read_latency_us, alpha, k_r, k_w, page_size, "
            "channels, time_dilation)\n");
  r = run({"run", "--graph", "g", std::string("x\0", 2)});
  EXPECT_EQ(r.err, "cave: error: unexpected argument 'x\\x00' for `cave run`\n");
  r = run({"run", "--b\tgus", "1"});
  EXPECT_NE(r.err.find("cave: error: unknown option --b\\tgus for `cave run` (allowed:"), std::string::npos) << r.err;
  r = run({std::string("fr\0b", 4)});
  EXPECT_EQ(r.err, "cave: error: unknown command 'fr\\x00b' (allowed: generate, convert, info, run)\n");
  for (auto& e : {run({"run", "--graph", "/nonexistent/g\n.cave", "--algorithm", "bfs"}),
                  run({"info", "--graph", "/nonexistent/g\n.cave"}),
                  run({"convert", "--input", "/nonexistent/g\n.cave", "--format", "snap", "--output", "x"})})
    EXPECT_EQ(e.err.substr(0, e.err.find(':', 20)), "cave: error: cannot open /nonexistent/g\\n.cave") << e.err;
}

TEST(Cli, EdgeListErrorsEscapeTheField) {
  auto dir = test::temp_dir("escape-edges");
  const std::string e = (dir / "e\x1b.txt").string(), shown = (dir / "e\\x1b.txt").string();
  std::ofstream(e) << std::string("0 1\n1 a\0b\n", 10);
  auto r = run({"convert", "--input", e, "--format", "snap", "--output", (dir / "g.cave").string()});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "cave: error: " + shown +
                       ":2: expected a vertex id (an unsigned integer below 4294967295), got 'a\\x00b'\n");
  std::ofstream(e) << "0 1\n2\n";
  r = run({"convert", "--input", e, "--format", "snap", "--output", (dir / "g.cave").string()});
  EXPECT_EQ(r.err, "cave: error: " + shown + ":2: an edge-list line needs two vertex ids `u v`\n");
  std::ofstream(e) << "0 " + std::string(5000, '1') + "\n";
  r = run({"convert", "--input", e, "--format", "snap", "--output", (dir / "g.cave").string()});
  EXPECT_EQ(r.err, "cave: error: " + shown + ":1: expected a vertex id (an unsigned integer below 4294967295), got '" +
                       std::string(60, '1') + "'... (5000 bytes)\n");
}

TEST(Cli, GraphFileErrorsEscapeTheName) {
  auto dir = test::temp_dir("escape-graph");
  const std::string e = (dir / "e.txt").string(), g = (dir / "g\n.cave").string(), shown = (dir / "g\\n.cave").string();
  std::ofstream(e) << "0 1\n1 2\n";
  ASSERT_EQ(run({"convert", "--input", e, "--format", "snap", "--undirected", "--output", g}).rc, 0);
  patch(g, 8192, std::string("\x00\x00\x00\x70", 4));
  for (auto& r : {run({"run", "--graph", g, "--algorithm", "bfs"}), run({"info", "--graph", g})})
    EXPECT_EQ(r.err, "cave: error: corrupt graph file " + shown +
                         ": edge block 0 (file block 2, byte 8192) holds neighbour id 1879048192 in the list of vertex "
                         "0, but the graph has 3 vertices (ids 0 to 2); convert the input again with `cave convert`\n");
  patch(g, 16, "CAVEGRPX");
  EXPECT_EQ(run({"info", "--graph", g}).err,
            "cave: error: " + shown + " is not a CAVE graph file (bad magic); convert it with `cave convert`\n");
  std::ofstream(e) << "0 1\n";
  ASSERT_EQ(run({"convert", "--input", e, "--format", "snap", "--output", g}).rc, 0);
  EXPECT_EQ(run({"run", "--graph", g, "--algorithm", "bfs", "--values-out", (dir / "no\x7f/v.csv").string()}).err,
            "cave: error: cannot write " + (dir / "no\\x7f/v.csv").string() + "\n");
}

}  // namespace
}  // namespace cave
