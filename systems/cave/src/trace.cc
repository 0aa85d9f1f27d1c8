// cave-trace: the engine's own traversals on a toy graph, on a schedule fixed for a picture (thesis
// Figures 5.2, 5.3 and 5.4; README.md, "Traces for the figures").
//
//   cave-trace SCENE --workdir DIR [--out FILE]
//
// Scene lines (# starts a comment):
//   vertex NAME             ids in listed order, so a vertex's neighbours are stored, and pushed on
//                           a DFS stack, in listed order
//   edge NAME NAME          an undirected edge
//   bfs_source NAME   bfs_threads N        parallel BFS (traversal.cc) from NAME
//   dfs_source NAME   dfs_threads N   dfs_threshold T     parallel pseudo-DFS (dfs_step)
//   cache_scale S   cache_edge_factor F   cache_seed X   cache_slots N
//                           a generated R-MAT graph (undirected) whose WCC runs with one thread
//                           through a cache pool of N slots; the pool's state afterwards
// The graphs are written to DIR (which must support O_DIRECT) and removed afterwards.
//
// Output CSV (kind,time,thread,vertex,value,stack):
//   edge    `vertex` -- `stack`, each edge once, as the engine reads it from the toy graph's file
//   level   the BFS level (value) of each reached vertex; thread: its place in its level, round
//           robin over bfs_threads (the order parallel_for hands a level's vertices out)
//   start   at `time` a task starts on `thread` with `stack` (bottom first, names separated by spaces)
//   split   at `time` `thread`'s stack gave `stack` (its bottom half) to a new task
//   visit   at `time` `thread` popped `vertex`; `stack` afterwards
//   slot    cache slot `thread` holds edge block `vertex` (-1: empty), reference bit `value`
//   hand    the clock hand is at slot `value`
//   count   `vertex` (edge_blocks, hits, misses) of the cache graph's run is `value`
// The pseudo-DFS runs in rounds: in each, every thread with a stack makes one step (dfs_step, as
// pseudo_dfs's threads do), in thread order; a task split off waits for the next round and the
// first idle thread.
#include <atomic>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "algorithms.h"
#include "artifact/command_line.h"
#include "artifact/quote.h"
#include "common.h"
#include "generate.h"
#include "text_input.h"

namespace cave {
namespace {

using artifact::escaped;
using artifact::excerpt;
using artifact::InputError;

struct Scene {
  std::vector<std::string> names;
  std::map<std::string, uint32_t> ids;
  std::vector<std::set<uint32_t>> adjacency;
  std::map<std::string, std::string> settings;
};

Scene read_scene(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the scene " + escaped(path));
  Scene s;
  std::string line;
  for (int number = 1; std::getline(in, line); number++) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string key, a, b;
    if (!(words >> key)) continue;
    const std::string where = escaped(path) + ":" + std::to_string(number);
    if (!(words >> a)) throw InputError(where + ": " + excerpt(key) + " needs a value");
    if (key == "vertex") {
      if (!s.ids.emplace(a, static_cast<uint32_t>(s.names.size())).second)
        throw InputError(where + ": vertex " + escaped(a) + " is listed twice");
      s.names.push_back(a);
      s.adjacency.emplace_back();
    } else if (key == "edge") {
      if (!(words >> b)) throw InputError(where + ": an edge needs two vertices");
      for (const auto& v : {a, b})
        if (!s.ids.count(v)) throw InputError(where + ": vertex " + escaped(v) + " is not listed before its edges");
      s.adjacency[s.ids[a]].insert(s.ids[b]);
      s.adjacency[s.ids[b]].insert(s.ids[a]);
    } else if (key.rfind("bfs_", 0) == 0 || key.rfind("dfs_", 0) == 0 || key.rfind("cache_", 0) == 0) {
      s.settings[key] = a;
    } else {
      throw InputError(where + ": unknown key " + excerpt(key));
    }
  }
  if (s.names.empty()) throw InputError(escaped(path) + ": a scene needs vertices");
  return s;
}

std::string setting(const Scene& s, const std::string& key) {
  auto it = s.settings.find(key);
  if (it == s.settings.end()) throw InputError("the scene needs '" + key + "'");
  return it->second;
}

uint32_t number(const Scene& s, const std::string& key, uint32_t lo, uint32_t hi) {
  return artifact::in_range(key, artifact::parse_number<uint32_t>(key, setting(s, key)), lo, hi);
}

uint32_t vertex(const Scene& s, const std::string& key) {
  auto it = s.ids.find(setting(s, key));
  if (it == s.ids.end()) throw InputError(key + ": no vertex " + excerpt(setting(s, key)));
  return it->second;
}

Csr toy_csr(const Scene& s) {
  Csr g;
  g.n = static_cast<uint32_t>(s.names.size());
  g.symmetric = true;
  for (const auto& neighbours : s.adjacency) {
    g.adj.insert(g.adj.end(), neighbours.begin(), neighbours.end());
    g.offsets.push_back(g.adj.size());
  }
  return g;
}

std::string names(const Scene& s, std::span<const uint32_t> stack) {
  std::string out;
  for (uint32_t v : stack) out += (out.empty() ? "" : " ") + s.names[v];
  return out;
}

void trace_edges(Graph& g, const Scene& s, std::ostream& out) {
  for (uint32_t v = 0; v < g.n(); v++)
    g.for_each_chunk(v, [&](const uint32_t* nbrs, uint32_t count, uint32_t) {
      for (uint32_t i = 0; i < count; i++)
        if (v < nbrs[i]) out << "edge,,," << s.names[v] << ",," << s.names[nbrs[i]] << '\n';
    });
}

void trace_bfs(Graph& g, const Scene& s, std::ostream& out) {
  const uint32_t threads = number(s, "bfs_threads", 1, 64);
  Pool pool(threads);
  const BfsResult r = bfs(g, pool, Variant::NonBlocked, vertex(s, "bfs_source"));
  std::map<int32_t, uint32_t> placed;  // vertices of each level so far
  for (uint32_t v = 0; v < g.n(); v++)
    if (r.level[v] >= 0)
      out << "level,," << placed[r.level[v]]++ % threads << ',' << s.names[v] << ',' << r.level[v] << ",\n";
}

void trace_dfs(Graph& g, const Scene& s, std::ostream& out) {
  const uint32_t threads = number(s, "dfs_threads", 1, 64), threshold = number(s, "dfs_threshold", 1, 1u << 20);
  const uint32_t source = vertex(s, "dfs_source");
  std::vector<std::atomic<uint8_t>> visited(g.n());
  for (auto& v : visited) v.store(0);
  visited[source].store(1);
  std::deque<std::vector<uint32_t>> queue{{source}};
  std::vector<std::vector<uint32_t>> stacks(threads);
  std::vector<bool> busy(threads, false);
  unsigned live = 1;  // tasks queued or running, as in pseudo_dfs
  for (int time = 1; live > 0; time++) {
    for (uint32_t t = 0; t < threads && !queue.empty(); t++) {
      if (busy[t]) continue;
      stacks[t] = std::move(queue.front());
      queue.pop_front();
      busy[t] = true;
      out << "start," << time << ',' << t << ",,," << names(s, stacks[t]) << '\n';
    }
    for (uint32_t t = 0; t < threads; t++) {
      if (!busy[t]) continue;
      const uint32_t v = dfs_step(g, stacks[t], visited, threshold, [&](std::span<const uint32_t> bottom) {
        if (live >= threads) return false;
        queue.emplace_back(bottom.begin(), bottom.end());
        ++live;
        out << "split," << time << ',' << t << ",,," << names(s, bottom) << '\n';
        return true;
      });
      out << "visit," << time << ',' << t << ',' << s.names[v] << ",," << names(s, stacks[t]) << '\n';
      if (stacks[t].empty()) {
        busy[t] = false;
        --live;
      }
    }
  }
}

void trace_cache(const Scene& s, const std::filesystem::path& dir, std::ostream& out) {
  GenerateOptions o;
  o.model = Model::RMAT;
  o.scale = number(s, "cache_scale", 1, 16);
  o.edge_factor = number(s, "cache_edge_factor", 1, 64);
  o.seed = number(s, "cache_seed", 0, ~0u);
  const std::string text = (dir / "cave-trace-cache.txt").string(), file = (dir / "cave-trace-cache.cave").string();
  generate(o, text);
  ConvertOptions c;
  c.undirected = true;
  write_graph(read_text_graph(text, c), file);
  std::filesystem::remove(text);
  Counters counters;
  {
    Graph g(file, IoEngine::Threads, counters);
    g.make_cache(number(s, "cache_slots", 1, 64));
    Pool pool(1);
    wcc(g, pool, Variant::NonBlocked);
    uint32_t hand = 0;
    const auto slots = g.cache().snapshot(hand);
    for (size_t i = 0; i < slots.size(); i++)
      out << "slot,," << i << ',' << slots[i].block << ',' << int{slots[i].ref} << ",\n";
    out << "hand,,,," << hand << ",\n";
    out << "count,,,edge_blocks," << g.edge_blocks() << ",\n";
  }
  out << "count,,,hits," << counters.hits.load() << ",\ncount,,,misses," << counters.misses.load() << ",\n";
  std::filesystem::remove(file);
}

std::string run(const Scene& s, const std::filesystem::path& dir) {
  std::ostringstream out;
  out << "kind,time,thread,vertex,value,stack\n";
  const std::string file = (dir / "cave-trace-toy.cave").string();
  write_graph(toy_csr(s), file);
  {
    Counters counters;
    Graph g(file, IoEngine::Threads, counters);
    g.make_cache(1);
    trace_edges(g, s, out);
    trace_bfs(g, s, out);
    trace_dfs(g, s, out);
  }
  std::filesystem::remove(file);
  trace_cache(s, dir, out);
  return out.str();
}

}  // namespace
}  // namespace cave

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    const bool out = args.size() == 5 && args[3] == "--out";
    if (!(args.size() == 3 || out) || args[1] != "--workdir")
      throw artifact::InputError("usage: cave-trace SCENE --workdir DIR [--out FILE]");
    return artifact::write_output(out ? args[4] : "", cave::run(cave::read_scene(args[0]), args[2]));
  } catch (const artifact::InputError& e) {  // a bad scene or command line: exit status 2, as cave's
    std::cerr << "cave-trace: error: " << e.what() << "\n";
    return 2;
  } catch (const cave::UsageError& e) {
    std::cerr << "cave-trace: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cave-trace: error: " << e.what() << "\n";
    return 1;
  }
}
