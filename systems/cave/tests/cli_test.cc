#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli.h"
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
  EXPECT_NE(r.err.find("cave: error: --algorithm must be one of bfs|wcc|pagerank|randomwalk|dfs"), std::string::npos) << r.err;
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

}  // namespace
}  // namespace cave
