// The plug-in interface: a traversal registered from its own translation unit (as lab 3's
// students' traversal.cc is) is found by name beside CAVE's own and runs on a graph; an unknown
// name is refused with the names there are.
#include <gtest/gtest.h>

#include "algorithms.h"
#include "common.h"
#include "test_util.h"

namespace {

// One thread, one vertex at a time: the simplest correct traversal.
cave::BfsResult serial_bfs(cave::Graph& g, cave::Pool&, cave::Variant, uint32_t source) {
  cave::BfsResult r;
  r.level.assign(g.n(), -1);
  r.level[source] = 0;
  std::vector<uint32_t> queue{source};
  for (size_t i = 0; i < queue.size(); ++i)
    g.for_each_chunk(queue[i], [&](const uint32_t* nbrs, uint32_t count, uint32_t) {
      for (uint32_t k = 0; k < count; ++k)
        if (r.level[nbrs[k]] < 0) {
          r.level[nbrs[k]] = r.level[queue[i]] + 1;
          queue.push_back(nbrs[k]);
        }
    });
  r.reached = queue.size();
  for (int32_t l : r.level) r.levels = std::max<uint32_t>(r.levels, static_cast<uint32_t>(l + 1));
  return r;
}
cave::WccResult no_wcc(cave::Graph&, cave::Pool&, cave::Variant) { return {}; }

}  // namespace

CAVE_REGISTER_TRAVERSAL("test_serial", serial_bfs, no_wcc);

namespace cave {
namespace {

TEST(Plugin, ARegisteredTraversalIsFoundAfterCavesOwnAndAgreesWithIt) {
  const auto names = traversal_names();
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "cave");
  EXPECT_NE(std::find(names.begin(), names.end(), "test_serial"), names.end());
  const auto dir = test::temp_dir("plugin");
  const std::string path = (dir / "g.cave").string();
  std::vector<std::vector<uint32_t>> lists(3000);
  for (uint32_t v = 0; v + 1 < 3000; ++v) {  // a path with a hub at vertex 7
    lists[v].push_back(v + 1);
    lists[v + 1].push_back(v);
  }
  for (uint32_t v = 100; v < 2000; v += 3) {
    lists[7].push_back(v);
    lists[v].push_back(7);
  }
  for (auto& l : lists) {
    std::sort(l.begin(), l.end());
    l.erase(std::unique(l.begin(), l.end()), l.end());
  }
  write_graph(test::csr_from_lists(lists, true), path);
  Counters c;
  Graph g(path, IoEngine::Threads, c);
  g.make_cache(4);
  Pool pool(4);
  const BfsResult ours = traversal("cave").bfs(g, pool, Variant::NonBlocked, 0);
  const BfsResult theirs = traversal("test_serial").bfs(g, pool, Variant::NonBlocked, 0);
  EXPECT_EQ(ours.level, theirs.level);
  EXPECT_EQ(ours.levels, theirs.levels);
  EXPECT_THROW(traversal("nope"), UsageError);
}

// A plug-in's bad name, escaped (artifact/quote.h): a NUL cannot end the message early (issue 42).
TEST(Plugin, ABadNameIsShownEscaped) {
  EXPECT_EXIT(register_traversal(std::string("x\0y\n", 4), Traversal{serial_bfs, no_wcc}), ::testing::ExitedWithCode(2),
              "^cave: error: traversal 'x\\\\x00y\\\\n': a name is lowercase letters, digits and _\n$");
}

}  // namespace
}  // namespace cave
