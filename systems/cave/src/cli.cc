#include "cli.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "algorithms.h"
#include "artifact/options.h"
#include "artifact/quote.h"
#include "common.h"
#include "emulation.h"
#include "engine.h"
#include "generate.h"
#include "info.h"
#include "text_input.h"

namespace cave {

using artifact::escaped;
using artifact::excerpt;

const char* usage() {
  return R"(usage: cave <command> [options]     (systems/cave/README.md documents everything)

  cave generate --model ba|rmat|road --output FILE [--seed S]
        ba:   --vertices N (100000) --m M (25)
        rmat: --scale S (16) --edge-factor F (16) --a A (0.57) --b B (0.19) --c C (0.19)
        road: --rows R (300) --cols C (300) --removal P (0.6) --shortcuts P (0.01) --shortcut-span K (8)
  cave convert --input FILE --format snap|adjacency --output G.cave [--undirected] [--renumber]
  cave info --graph G.cave [--sweeps K (2; 0 skips the diameter)]
  cave run --graph G.cave --algorithm bfs|wcc|pagerank|randomwalk|dfs
        [--variant nonblocked|blocked] [--io-threads N (1)] [--io-engine threads|uring]
        [--cache-blocks B | --cache-bytes X | --cache-fraction F (0.03 of the file)]
        [--source V (0): bfs, dfs] [--iterations I (10)] [--damping D (0.85)]: pagerank
        [--pagerank-directed]: pagerank on a file converted without --undirected (ranks over out-edges)
        [--walks K (1000)] [--walk-length L (vertices / walks)] [--seed S (42)]: randomwalk
        [--dfs-threshold T (8)]: dfs      [--traversal NAME (cave)]: bfs, wcc (a plug-in's BFS and WCC)
        [--values-out FILE] [--timeline-out FILE] [--timeline-ms T (100)]
        [--emulate read_latency_us=X,alpha=A,k_r=N,k_w=N[,time_dilation=D]]: block reads charged to an
                                          emulated SSD in the process (emussd's model, no FUSE)
)";
}

const char* const kRunColumns =
    "graph,algorithm,variant,io_engine,io_threads,cache_blocks_requested,cache_blocks,cache_bytes,vertices,edges,"
    "edge_blocks,file_bytes,o_direct,load_s,runtime_s,cpu_user_s,cpu_sys_s,cpu_util_pct,online_cores,block_reads,"
    "bytes_read,read_mib_s,cache_hits,cache_misses,hit_ratio,lock_acquisitions,lock_wait_s,lock_wait_pct,source,"
    "reached,levels,components,iterations,damping,pagerank_sum,walks,walk_length,steps,dead_ends,seed,dfs_threshold,"
    "dfs_splits";
const char* const kInfoColumns =
    "graph,vertices,edges,undirected_edges,self_loops,isolated_vertices,max_degree,blocks,vertex_blocks,edge_blocks,"
    "file_bytes,symmetric,estimated_diameter,diameter_sweeps";
const char* const kConvertColumns =
    "input,format,undirected,renumber,vertices,edges,input_edges,duplicates_removed,self_loops,symmetric,edge_blocks,"
    "file_bytes,seconds";
const char* const kGenerateColumns = "model,seed,vertices,edges,output,seconds";
const char* const kTimelineColumns = "t_s,cpu_pct,reads,bytes_read,read_mib_s";

namespace {

using Clock = std::chrono::steady_clock;

std::string num(double v, int digits = 9) {
  if (!std::isfinite(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int cmd_generate(const artifact::Options& a, std::ostream& out) {
  GenerateOptions o;
  const std::string model = a.choice("model", {"ba", "rmat", "road"});
  o.model = model == "ba" ? Model::BA : model == "rmat" ? Model::RMAT : Model::Road;
  const std::string output = a.str("output");
  o.seed = a.integer("seed", 42, 0, UINT64_MAX);
  const bool ba = o.model == Model::BA, rm = o.model == Model::RMAT, rd = o.model == Model::Road;
  for (auto k : {"vertices", "m"}) a.only_for(k, ba, "--model ba");
  for (auto k : {"scale", "edge-factor", "a", "b", "c"}) a.only_for(k, rm, "--model rmat");
  for (auto k : {"rows", "cols", "removal", "shortcuts", "shortcut-span"}) a.only_for(k, rd, "--model road");
  o.vertices = a.integer("vertices", o.vertices, 2, 0x7ffffffe);
  o.ba_m = static_cast<uint32_t>(a.integer("m", o.ba_m, 1, 100000));
  o.scale = static_cast<uint32_t>(a.integer("scale", o.scale, 1, 30));
  o.edge_factor = static_cast<uint32_t>(a.integer("edge-factor", o.edge_factor, 1, 100000));
  o.a = a.real("a", o.a, 0, 1);
  o.b = a.real("b", o.b, 0, 1);
  o.c = a.real("c", o.c, 0, 1);
  o.rows = static_cast<uint32_t>(a.integer("rows", o.rows, 1, 1u << 30));
  o.cols = static_cast<uint32_t>(a.integer("cols", o.cols, 1, 1u << 30));
  o.removal = a.real("removal", o.removal, 0, 1);
  o.shortcuts = a.real("shortcuts", o.shortcuts, 0, 1);
  o.shortcut_span = static_cast<uint32_t>(a.integer("shortcut-span", o.shortcut_span, 1, 1u << 20));
  const auto t0 = Clock::now();
  GenerateResult r = generate(o, output);
  out << kGenerateColumns << "\n"
      << model << "," << o.seed << "," << r.vertices << "," << r.edges << "," << csv_field(output) << ","
      << num(seconds_since(t0)) << "\n";
  return 0;
}

int cmd_convert(const artifact::Options& a, std::ostream& out) {
  ConvertOptions o;
  const std::string input = a.str("input"), output = a.str("output");
  const std::string format = a.choice("format", {"snap", "adjacency"});
  o.format = format == "snap" ? InputFormat::Snap : InputFormat::Adjacency;
  o.undirected = a.has("undirected");
  o.renumber = a.has("renumber");
  const auto t0 = Clock::now();
  ConvertStats st;
  Csr g = read_text_graph(input, o, &st);
  write_graph(g, output);
  const uint64_t blocks = 1 + vertex_blocks_for(g.n);
  std::ifstream f(output, std::ios::binary | std::ios::ate);
  const uint64_t bytes = static_cast<uint64_t>(f.tellg());
  out << kConvertColumns << "\n"
      << csv_field(input) << "," << format << "," << (o.undirected ? 1 : 0) << "," << (o.renumber ? 1 : 0) << "," << g.n
      << "," << g.adj.size() << "," << st.input_edges << "," << st.duplicates_removed << "," << st.self_loops << ","
      << (g.symmetric ? 1 : 0) << "," << (bytes / kBlockSize - blocks) << "," << bytes << "," << num(seconds_since(t0))
      << "\n";
  return 0;
}

int cmd_info(const artifact::Options& a, std::ostream& out) {
  const std::string path = a.str("graph");
  const uint32_t sweeps = static_cast<uint32_t>(a.integer("sweeps", 2, 0, 1000));
  GraphInfo i = graph_info(path, sweeps);
  out << kInfoColumns << "\n"
      << csv_field(path) << "," << i.vertices << "," << i.edges << ","
      << (i.symmetric && sweeps ? std::to_string(i.undirected_edges) : "") << ","
      << (sweeps ? std::to_string(i.self_loops) : "") << "," << i.isolated_vertices << "," << i.max_degree << ","
      << i.blocks << "," << i.vertex_blocks << "," << i.edge_blocks << "," << i.file_bytes << ","
      << (i.symmetric ? 1 : 0) << "," << (i.estimated_diameter >= 0 ? std::to_string(i.estimated_diameter) : "") << ","
      << sweeps << "\n";
  return 0;
}

struct CpuTimes {
  double user = 0, sys = 0;
};
CpuTimes cpu_now() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return {ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6};
}

// Samples CPU time and the read counters every `period` while the algorithm runs.
class Timeline {
 public:
  Timeline(Counters& c, std::chrono::milliseconds period, int cores) : c_(c), period_(period), cores_(cores) {
    t0_ = last_t_ = Clock::now();
    auto cpu = cpu_now();
    last_cpu_ = cpu.user + cpu.sys;
    thread_ = std::thread([this] { loop(); });
  }
  ~Timeline() {  // the algorithm failed: stop the sampler (a joinable std::thread would abort)
    if (thread_.joinable()) stop();
  }
  void stop() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    sample();  // the last, partial interval
  }
  void write(const std::string& path) const {
    std::ofstream f(path);
    if (!f) throw RuntimeError("cannot write " + escaped(path));
    f << kTimelineColumns << "\n" << rows_.str();
    if (!f) throw RuntimeError("cannot write " + escaped(path));
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(m_);
    auto next = t0_ + period_;
    while (!cv_.wait_until(lock, next, [this] { return stop_; })) {
      sample();
      next += period_;
    }
  }
  void sample() {
    const auto now = Clock::now();
    const double dt = std::chrono::duration<double>(now - last_t_).count();
    if (dt <= 0) return;
    auto cpu = cpu_now();
    const double cpu_s = cpu.user + cpu.sys;
    const uint64_t reads = c_.reads.load(), bytes = c_.bytes_read.load();
    rows_ << num(std::chrono::duration<double>(now - t0_).count(), 6) << ","
          << num((cpu_s - last_cpu_) / dt / cores_ * 100, 6) << "," << (reads - last_reads_) << ","
          << (bytes - last_bytes_) << "," << num((bytes - last_bytes_) / dt / 1048576.0, 6) << "\n";
    last_t_ = now;
    last_cpu_ = cpu_s;
    last_reads_ = reads;
    last_bytes_ = bytes;
  }
  Counters& c_;
  std::chrono::milliseconds period_;
  int cores_;
  Clock::time_point t0_, last_t_;
  double last_cpu_ = 0;
  uint64_t last_reads_ = 0, last_bytes_ = 0;
  std::ostringstream rows_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

class Values {
 public:
  explicit Values(const std::string& path) : path_(path), f_(path, std::ios::binary) {
    if (!f_) throw RuntimeError("cannot write " + escaped(path));
  }
  std::ofstream& f() { return f_; }
  void close() {
    f_.close();
    if (!f_) throw RuntimeError("cannot write " + escaped(path_));
  }

 private:
  std::string path_;
  std::ofstream f_;
};

int cmd_run(const artifact::Options& a, std::ostream& out) {
  const std::string path = a.str("graph");
  const std::string algo = a.choice("algorithm", {"bfs", "wcc", "pagerank", "randomwalk", "dfs"});
  const std::string variant_name = a.choice("variant", {"nonblocked", "blocked"}, "nonblocked");
  if (algo == "dfs" && variant_name == "blocked")
    throw UsageError(
        "--variant blocked is not available for --algorithm dfs (the thesis's pseudo-DFS is vertex-granular); use nonblocked");
  const Variant variant = variant_name == "blocked" ? Variant::Blocked : Variant::NonBlocked;
  const unsigned threads = static_cast<unsigned>(a.integer("io-threads", 1, 1, 4096));
  const std::string engine_name = a.choice("io-engine", {"threads", "uring"}, "threads");
  const IoEngine engine = engine_name == "uring" ? IoEngine::Uring : IoEngine::Threads;
  int cache_opts = a.has("cache-blocks") + a.has("cache-bytes") + a.has("cache-fraction");
  if (cache_opts > 1) throw UsageError("give at most one of --cache-blocks, --cache-bytes, --cache-fraction");
  const bool bfs_like = algo == "bfs" || algo == "dfs";
  a.only_for("source", bfs_like, "--algorithm bfs and dfs");
  a.only_for("iterations", algo == "pagerank", "--algorithm pagerank");
  a.only_for("damping", algo == "pagerank", "--algorithm pagerank");
  a.only_for("pagerank-directed", algo == "pagerank", "--algorithm pagerank");
  for (auto k : {"walks", "walk-length", "seed"}) a.only_for(k, algo == "randomwalk", "--algorithm randomwalk");
  a.only_for("dfs-threshold", algo == "dfs", "--algorithm dfs");
  a.only_for("traversal", algo == "bfs" || algo == "wcc", "--algorithm bfs and wcc");
  a.only_for("timeline-ms", a.has("timeline-out"), "runs with --timeline-out");
  const uint64_t cache_blocks_opt = a.integer("cache-blocks", 0, 1, UINT32_MAX);
  const uint64_t cache_bytes_opt = a.integer("cache-bytes", 0, kBlockSize, UINT64_MAX / 2);
  const double cache_fraction = a.real("cache-fraction", 0.03, 1e-9, 1.0);
  const uint32_t iterations = static_cast<uint32_t>(a.integer("iterations", 10, 0, 1000000));
  const double damping = a.real("damping", 0.85, 0.0, 1.0);
  const uint64_t walks = a.integer("walks", 1000, 1, UINT32_MAX);
  const uint64_t seed = a.integer("seed", 42, 0, UINT64_MAX);
  const uint32_t threshold = static_cast<uint32_t>(a.integer("dfs-threshold", 8, 1, UINT32_MAX));
  const uint64_t timeline_ms = a.integer("timeline-ms", 100, 1, 3600000);
  const std::string values_out = a.str("values-out", "-");
  const std::string timeline_out = a.str("timeline-out", "-");
  const Traversal* traverse = algo == "bfs" || algo == "wcc" ? &traversal(a.str("traversal", "cave")) : nullptr;

  // PageRank sums each vertex's list as its in-edges: so are they only in a symmetric file. Its
  // metadata block says which, read before anything else (README, "cave run").
  if (algo == "pagerank" && !a.has("pagerank-directed") && !(read_header(path).meta.flags & kFlagSymmetric))
    throw UsageError("--algorithm pagerank needs a graph converted with --undirected, and " + escaped(path) +
                     " is directed: PageRank sums over in-edges, and the file holds out-edges only. Convert the input "
                     "again with `cave convert ... --undirected`, or give --pagerank-directed for ranks over the "
                     "out-edges (each vertex scored from the vertices it points to, divided by their out-degrees)");

  // Before the graph is opened, so that every block read is charged; once, so nothing changes it later.
  if (a.has("emulate")) start_emulation(a.str("emulate"));

  Counters counters;
  const auto t_load = Clock::now();
  Graph g(path, engine, counters);
  const uint32_t n = g.n();
  const uint64_t source = a.integer("source", 0, 0, UINT32_MAX);
  // bfs and dfs start at a vertex, random walks at random vertices: none exists in an empty
  // graph (wcc and pagerank are defined on it: no components, no scores).
  if ((bfs_like || algo == "randomwalk") && n == 0)
    throw UsageError("--algorithm " + algo + " needs a start vertex, but " + escaped(path) + " has no vertices" +
                     (a.has("source") ? " (--source " + std::to_string(source) + ")" : ""));
  if (bfs_like && source >= n)
    throw UsageError("--source must be a vertex id in [0, " + std::to_string(n - 1) + "], got " +
                     std::to_string(source));
  const uint64_t file_blocks = g.header().file_bytes / kBlockSize;
  uint64_t requested = cache_blocks_opt ? cache_blocks_opt
                       : cache_bytes_opt
                           ? cache_bytes_opt / kBlockSize
                           : static_cast<uint64_t>(std::ceil(cache_fraction * static_cast<double>(file_blocks)));
  requested = std::max<uint64_t>(requested, 1);
  // At least one slot per worker, so every worker can hold the block it works on; at most
  // the number of edge blocks.
  const uint32_t slots =
      g.make_cache(static_cast<uint32_t>(std::min<uint64_t>(std::max<uint64_t>(requested, threads), UINT32_MAX)));
  const uint64_t walk_length = a.integer("walk-length", std::max<uint64_t>(1, n / walks), 0, UINT32_MAX);
  Pool pool(threads);
  const double load_s = seconds_since(t_load);

  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::unique_ptr<Timeline> timeline;
  const CpuTimes cpu0 = cpu_now();
  const auto t0 = Clock::now();
  if (timeline_out != "-")
    timeline = std::make_unique<Timeline>(counters, std::chrono::milliseconds(timeline_ms), cores);

  BfsResult rb;
  WccResult rw;
  PageRankResult rp;
  WalkResult rr;
  DfsResult rd;
  const bool record = values_out != "-";
  if (algo == "bfs")
    rb = traverse->bfs(g, pool, variant, static_cast<uint32_t>(source));
  else if (algo == "wcc")
    rw = traverse->wcc(g, pool, variant);
  else if (algo == "pagerank")
    rp = pagerank(g, pool, variant, iterations, damping);
  else if (algo == "randomwalk")
    rr = random_walk(g, pool, variant, walks, walk_length, seed, record);
  else
    rd = pseudo_dfs(g, threads, static_cast<uint32_t>(source), threshold);

  const double runtime = seconds_since(t0);
  const CpuTimes cpu1 = cpu_now();
  if (timeline) {
    timeline->stop();
    timeline->write(timeline_out);
  }

  if (record) {
    Values v(values_out);
    auto& f = v.f();
    if (algo == "bfs") {
      f << "vertex,level\n";
      for (uint32_t i = 0; i < n; ++i) f << i << ',' << rb.level[i] << '\n';
    } else if (algo == "wcc") {
      f << "vertex,component\n";
      for (uint32_t i = 0; i < n; ++i) f << i << ',' << rw.label[i] << '\n';
    } else if (algo == "pagerank") {
      f << "vertex,score\n";
      for (uint32_t i = 0; i < n; ++i) f << i << ',' << num(rp.score[i], 17) << '\n';
    } else if (algo == "randomwalk") {
      f << "walk,steps,path\n";
      for (size_t w = 0; w < rr.paths.size(); ++w) {
        f << w << ',' << rr.paths[w].size() - 1 << ',';
        for (size_t k = 0; k < rr.paths[w].size(); ++k) f << (k ? " " : "") << rr.paths[w][k];
        f << '\n';
      }
    } else {
      f << "vertex,order\n";
      for (uint32_t i = 0; i < n; ++i) f << i << ',' << rd.order[i] << '\n';
    }
    v.close();
  }

  const double user = cpu1.user - cpu0.user, sys = cpu1.sys - cpu0.sys;
  const uint64_t reads = counters.reads.load(), bytes = counters.bytes_read.load();
  const uint64_t hits = counters.hits.load(), misses = counters.misses.load();
  const double lock_wait = counters.lock_wait_ns.load() * 1e-9;
  std::ostringstream row;
  auto opt = [](bool on, const std::string& s) { return on ? s : std::string(); };
  row << csv_field(path) << "," << algo << "," << variant_name << "," << engine_name << "," << threads << ","
      << requested << "," << slots << "," << uint64_t{slots} * kBlockSize << "," << n << "," << g.edges() << ","
      << g.edge_blocks() << "," << g.header().file_bytes << "," << (g.device().o_direct() ? 1 : 0) << "," << num(load_s)
      << "," << num(runtime) << "," << num(user) << "," << num(sys) << ","
      << num(runtime > 0 ? (user + sys) / runtime / cores * 100 : 0) << "," << cores << "," << reads << "," << bytes
      << "," << num(runtime > 0 ? bytes / runtime / 1048576.0 : 0) << "," << hits << "," << misses << ","
      << num(hits + misses ? double(hits) / double(hits + misses) : 0) << "," << counters.lock_acquisitions.load()
      << "," << num(lock_wait) << "," << num(runtime > 0 ? lock_wait / (runtime * threads) * 100 : 0) << ","
      << opt(bfs_like, std::to_string(source)) << ","
      << (algo == "bfs"   ? std::to_string(rb.reached)
          : algo == "dfs" ? std::to_string(rd.visited)
                          : "")
      << "," << opt(algo == "bfs", std::to_string(rb.levels)) << ","
      << opt(algo == "wcc", std::to_string(rw.components)) << "," << opt(algo == "pagerank", std::to_string(iterations))
      << "," << opt(algo == "pagerank", num(damping, 17)) << "," << opt(algo == "pagerank", num(rp.sum, 17)) << ","
      << opt(algo == "randomwalk", std::to_string(walks)) << ","
      << opt(algo == "randomwalk", std::to_string(walk_length)) << ","
      << opt(algo == "randomwalk", std::to_string(rr.steps)) << ","
      << opt(algo == "randomwalk", std::to_string(rr.dead_ends)) << ","
      << opt(algo == "randomwalk", std::to_string(seed)) << "," << opt(algo == "dfs", std::to_string(threshold)) << ","
      << opt(algo == "dfs", std::to_string(rd.splits)) << "\n";
  out << kRunColumns << "\n" << row.str();
  return 0;
}

}  // namespace

int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.size() < 2 || args[1] == "--help" || args[1] == "-h" || args[1] == "help") {
      if (args.size() < 2) {
        err << usage();
        return 2;
      }
      out << usage();
      return 0;
    }
    const std::string& cmd = args[1];
    if (cmd == "generate")
      return cmd_generate(artifact::Options("cave " + cmd, args, 2,
                                            {"model", "output", "seed", "vertices", "m", "scale", "edge-factor", "a",
                                             "b", "c", "rows", "cols", "removal", "shortcuts", "shortcut-span"},
                                            {}),
                          out);
    if (cmd == "convert")
      return cmd_convert(
          artifact::Options("cave " + cmd, args, 2, {"input", "format", "output"}, {"undirected", "renumber"}), out);
    if (cmd == "info") return cmd_info(artifact::Options("cave " + cmd, args, 2, {"graph", "sweeps"}, {}), out);
    if (cmd == "run")
      return cmd_run(artifact::Options("cave " + cmd, args, 2,
                                       {"graph",        "algorithm",    "variant",        "io-threads", "io-engine",
                                        "cache-blocks", "cache-bytes",  "cache-fraction", "source",     "iterations",
                                        "damping",      "walks",        "walk-length",    "seed",       "dfs-threshold",
                                        "values-out",   "timeline-out", "timeline-ms",    "traversal",  "emulate"},
                                       {"pagerank-directed"}),
                     out);
    throw UsageError("unknown command " + excerpt(cmd) + " (allowed: generate, convert, info, run)");
  } catch (const UsageError& e) {
    err << "cave: error: " << e.what() << "\n";
    return 2;
  } catch (const artifact::InputError& e) {  // a bad option (artifact::Options)
    err << "cave: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "cave: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cave
