#include "text_input.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "artifact/quote.h"
#include "common.h"

namespace cave {

namespace {

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};

class Parser {
 public:
  Parser(const std::string& path, const ConvertOptions& opt) : path_(path), file_(artifact::escaped(path)), opt_(opt) {}

  void run(ConvertStats& stats) {
    std::unique_ptr<FILE, FileCloser> f(std::fopen(path_.c_str(), "rb"));
    if (!f) throw RuntimeError("cannot open " + file_ + ": " + errno_text(errno));
    constexpr size_t kChunk = 16u << 20;
    std::vector<char> buf(kChunk + 1);
    std::string carry;
    for (;;) {
      size_t got = std::fread(buf.data(), 1, kChunk, f.get());
      if (got == 0) break;
      size_t end = got;
      while (end > 0 && buf[end - 1] != '\n') --end;
      if (end == 0) {  // no newline in this chunk: keep it all
        carry.append(buf.data(), got);
        continue;
      }
      if (!carry.empty()) {
        // finish the line that started in the previous chunk
        size_t nl = 0;
        while (buf[nl] != '\n') ++nl;
        carry.append(buf.data(), nl);
        line(carry.data(), carry.data() + carry.size(), stats);
        carry.clear();
        lines(buf.data() + nl + 1, buf.data() + end, stats);
      } else {
        lines(buf.data(), buf.data() + end, stats);
      }
      carry.assign(buf.data() + end, got - end);
    }
    if (std::ferror(f.get())) throw RuntimeError("cannot read " + file_ + ": " + errno_text(errno));
    if (!carry.empty()) line(carry.data(), carry.data() + carry.size(), stats);
  }

  std::vector<uint32_t> src, dst;
  uint64_t max_id_plus_one = 0;

 private:
  void lines(const char* p, const char* end, ConvertStats& stats) {
    while (p < end) {
      const char* e = p;
      while (e < end && *e != '\n') ++e;
      line(p, e, stats);
      p = e + 1;
    }
  }

  static bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == ','; }

  // Next token as a vertex id; false at end of line.
  bool token(const char*& p, const char* end, uint32_t& out) {
    while (p < end && space(*p)) ++p;
    if (p >= end) return false;
    const char* start = p;
    uint64_t v = 0;
    bool ok = true;
    while (p < end && !space(*p)) {
      if (*p < '0' || *p > '9' || v > 0xffffffffull)
        ok = false;
      else
        v = v * 10 + static_cast<uint64_t>(*p - '0');
      ++p;
    }
    if (!ok || v >= 0xffffffffull)
      throw RuntimeError(file_ + ":" + std::to_string(lineno_) +
                         ": expected a vertex id (an unsigned integer below 4294967295), got " +
                         artifact::excerpt(std::string_view(start, static_cast<size_t>(p - start))));
    out = id(static_cast<uint32_t>(v));
    return true;
  }

  uint32_t id(uint32_t raw) {
    if (!opt_.renumber) {
      max_id_plus_one = std::max<uint64_t>(max_id_plus_one, uint64_t{raw} + 1);
      return raw;
    }
    auto [it, inserted] = map_.try_emplace(raw, static_cast<uint32_t>(map_.size()));
    if (inserted) max_id_plus_one = map_.size();
    return it->second;
  }

  void line(const char* p, const char* end, ConvertStats& stats) {
    ++lineno_;
    ++stats.lines;
    while (p < end && space(*p)) ++p;
    if (p >= end || *p == '#' || *p == '%') return;
    uint32_t u = 0, v = 0;
    token(p, end, u);
    if (opt_.format == InputFormat::Snap) {
      if (!token(p, end, v))
        throw RuntimeError(file_ + ":" + std::to_string(lineno_) + ": an edge-list line needs two vertex ids `u v`");
      add(u, v, stats);  // further columns (weights, timestamps) are ignored
    } else {
      while (token(p, end, v)) add(u, v, stats);
    }
  }

  void add(uint32_t u, uint32_t v, ConvertStats& stats) {
    src.push_back(u);
    dst.push_back(v);
    ++stats.input_edges;
  }

  std::string path_;
  std::string file_;  // the path as messages show it (escaped)
  ConvertOptions opt_;
  uint64_t lineno_ = 0;
  std::unordered_map<uint32_t, uint32_t> map_;
};

}  // namespace

Csr read_text_graph(const std::string& path, const ConvertOptions& opt, ConvertStats* stats_out) {
  ConvertStats stats;
  Parser parser(path, opt);
  parser.run(stats);
  if (parser.max_id_plus_one > 0x7fffffffull) throw RuntimeError("graph too large: vertex ids must be below 2^31-1");
  Csr g;
  g.n = static_cast<uint32_t>(parser.max_id_plus_one);
  const size_t m = parser.src.size();
  std::vector<uint64_t> count(static_cast<size_t>(g.n) + 1, 0);
  for (size_t i = 0; i < m; ++i) {
    ++count[parser.src[i]];
    if (opt.undirected && parser.src[i] != parser.dst[i]) ++count[parser.dst[i]];
  }
  g.offsets.assign(static_cast<size_t>(g.n) + 1, 0);
  for (uint32_t v = 0; v < g.n; ++v) g.offsets[v + 1] = g.offsets[v] + count[v];
  std::vector<uint32_t> adj(g.offsets[g.n]);
  std::vector<uint64_t> pos(g.offsets.begin(), g.offsets.end() - 1);
  for (size_t i = 0; i < m; ++i) {
    const uint32_t u = parser.src[i], v = parser.dst[i];
    adj[pos[u]++] = v;
    if (opt.undirected && u != v) adj[pos[v]++] = u;
  }
  parser.src.clear();
  parser.src.shrink_to_fit();
  parser.dst.clear();
  parser.dst.shrink_to_fit();
  // Sort and de-duplicate each list, compacting in place.
  uint64_t write = 0;
  for (uint32_t v = 0; v < g.n; ++v) {
    auto b = adj.begin() + static_cast<ptrdiff_t>(g.offsets[v]);
    auto e = adj.begin() + static_cast<ptrdiff_t>(g.offsets[v + 1]);
    std::sort(b, e);
    auto last = std::unique(b, e);
    const uint64_t start = write;
    for (auto it = b; it != last; ++it) {
      if (*it == v) ++stats.self_loops;
      adj[write++] = *it;
    }
    g.offsets[v] = start;
  }
  stats.duplicates_removed = adj.size() - write;
  g.offsets[g.n] = write;
  adj.resize(write);
  adj.shrink_to_fit();
  g.adj = std::move(adj);
  g.symmetric = opt.undirected || is_symmetric(g);
  if (stats_out) *stats_out = stats;
  return g;
}

bool is_symmetric(const Csr& g) {
  for (uint32_t u = 0; u < g.n; ++u) {
    for (uint64_t i = g.offsets[u]; i < g.offsets[u + 1]; ++i) {
      const uint32_t v = g.adj[i];
      auto b = g.adj.begin() + static_cast<ptrdiff_t>(g.offsets[v]);
      auto e = g.adj.begin() + static_cast<ptrdiff_t>(g.offsets[v + 1]);
      if (!std::binary_search(b, e, u)) return false;
    }
  }
  return true;
}

}  // namespace cave
