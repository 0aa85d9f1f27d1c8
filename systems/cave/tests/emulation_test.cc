// cave run --emulate: every block read charged to the in-process device model, which is started
// once and cannot be changed after. The runs that start it are in child processes (EXPECT_EXIT),
// since the model is once per process. No wall-clock bound: the counts, not the times.
#include "emulation.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "common.h"
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
  const int rc = cli_main(args, out, err);
  return {rc, out.str(), err.str()};
}

// The value of `column` in the CSV row of `out`.
std::string field(const std::string& out, const std::string& column) {
  std::istringstream lines(out);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  std::istringstream names(header), values(row);
  for (std::string name, value; std::getline(names, name, ',') && std::getline(values, value, ',');)
    if (name == column) return value;
  return "";
}

// The number after "key": in the op's object of emulation_stats().
uint64_t stat(const std::string& json, const std::string& op, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": ", json.find("\"" + op + "\": {"));
  return at == std::string::npos ? UINT64_MAX : std::strtoull(json.c_str() + at + key.size() + 4, nullptr, 10);
}

std::string small_graph(const std::string& name) {
  auto dir = test::temp_dir(name);
  const std::string e = (dir / "e.txt").string(), g = (dir / "g.cave").string();
  EXPECT_EQ(run({"generate", "--model", "ba", "--vertices", "3000", "--m", "8", "--output", e}).rc, 0);
  EXPECT_EQ(run({"convert", "--input", e, "--format", "snap", "--undirected", "--output", g}).rc, 0);
  return g;
}

TEST(Emulation, ABadSpecIsRefusedBeforeAnythingRuns) {
  const std::string g = small_graph("emulate-bad");
  for (const char* spec : {"read_latency_us=100", "read_latency_us=100,alpha=1,k_r=0,k_w=1", "k_r=4"}) {
    const Result r = run({"run", "--graph", g, "--algorithm", "bfs", "--emulate", spec});
    EXPECT_EQ(r.rc, 2) << spec;
    EXPECT_NE(r.err.find("cave: error: --emulate: "), std::string::npos) << r.err;
  }
  EXPECT_EQ(emulation_stats(), "");  // nothing started
}

TEST(Emulation, EveryBlockReadIsChargedAndKrBoundsTheWorkers) {
  const std::string g = small_graph("emulate-run");
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const Result r = run({"run", "--graph", g, "--algorithm", "bfs", "--io-threads", "4", "--cache-blocks", "8",
                              "--emulate", "read_latency_us=5,alpha=2,k_r=2,k_w=1"});
        const std::string stats = emulation_stats();
        const uint64_t reads = std::strtoull(field(r.out, "block_reads").c_str(), nullptr, 10);
        bool ok = r.rc == 0 && reads > 0 && stat(stats, "read", "count") == reads &&
                  stat(stats, "read", "max_in_service") == 2 && stat(stats, "write", "count") == 0;
        try {  // started once: a second start (a plug-in's, say) is refused
          start_emulation("read_latency_us=1,alpha=1,k_r=4096,k_w=1");
          ok = false;
        } catch (const RuntimeError&) {
        }
        if (!ok) std::cerr << r.err << "\nreads " << reads << "\n" << stats << "\n";
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Emulation, AStartBeforeTheCommandLineMakesTheRunFail) {
  const std::string g = small_graph("emulate-twice");
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        start_emulation("read_latency_us=1,alpha=1,k_r=4096,k_w=1");  // as a static initializer could
        const Result r =
            run({"run", "--graph", g, "--algorithm", "bfs", "--emulate", "read_latency_us=2000,alpha=1,k_r=2,k_w=1"});
        std::exit(r.rc == 1 && r.err.find("cannot be changed") != std::string::npos ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace cave
