#include "generate.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "artifact/atomic_file.h"
#include "common.h"

namespace cave {

namespace {

// The edge list, written whole or not at all (artifact::AtomicFile), formatted in a buffer of its own.
class EdgeWriter {
 public:
  explicit EdgeWriter(const std::string& path) : file_(path) { buf_.resize(1 << 20); }
  void comment(const std::string& text) {
    flush_if(text.size() + 4);
    buf_[used_++] = '#';
    buf_[used_++] = ' ';
    std::memcpy(buf_.data() + used_, text.data(), text.size());
    used_ += text.size();
    buf_[used_++] = '\n';
  }
  void edge(uint64_t u, uint64_t v) {
    flush_if(48);
    number(u);
    buf_[used_++] = ' ';
    number(v);
    buf_[used_++] = '\n';
    ++edges;
  }
  void close() {
    flush();
    file_.commit();
  }
  uint64_t edges = 0;

 private:
  void number(uint64_t x) {
    char tmp[24];
    int n = 0;
    do {
      tmp[n++] = static_cast<char>('0' + x % 10);
      x /= 10;
    } while (x);
    while (n) buf_[used_++] = tmp[--n];
  }
  void flush_if(size_t need) {
    if (used_ + need > buf_.size()) flush();
    if (need > buf_.size()) buf_.resize(need);
  }
  void flush() {
    file_.write(buf_.data(), used_);
    used_ = 0;
  }
  artifact::AtomicFile file_;
  std::vector<char> buf_;
  size_t used_ = 0;
};

std::string fmt(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

void barabasi_albert(const GenerateOptions& o, EdgeWriter& w, Rng& rng) {
  const uint64_t n = o.vertices, m = o.ba_m;
  // Batagelj and Brandes (2005): every edge adds both endpoints to `ends`; a uniform pick
  // from `ends` is a pick proportional to degree. Vertices 0..m-1 start without edges and
  // vertex m attaches to all of them.
  std::vector<uint32_t> ends;
  ends.reserve(static_cast<size_t>(2 * m * (n - m)));
  std::vector<uint32_t> targets(m);
  for (uint64_t t = m; t < n; ++t) {
    if (t == m) {
      for (uint64_t i = 0; i < m; ++i) targets[i] = static_cast<uint32_t>(i);
    } else {
      for (uint64_t i = 0; i < m; ++i) {
        uint32_t x;
        bool dup;
        do {
          x = ends[rng.below(ends.size())];
          dup = false;
          for (uint64_t j = 0; j < i; ++j) dup = dup || targets[j] == x;
        } while (dup);
        targets[i] = x;
      }
    }
    for (uint64_t i = 0; i < m; ++i) {
      w.edge(t, targets[i]);
      ends.push_back(static_cast<uint32_t>(t));
      ends.push_back(targets[i]);
    }
  }
}

void rmat(const GenerateOptions& o, EdgeWriter& w, Rng& rng) {
  const uint64_t n = 1ull << o.scale;
  const uint64_t m = uint64_t{o.edge_factor} * n;
  std::vector<uint32_t> perm(n);
  for (uint64_t i = 0; i < n; ++i) perm[i] = static_cast<uint32_t>(i);
  for (uint64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  const double ab = o.a + o.b, abc = o.a + o.b + o.c;
  for (uint64_t e = 0; e < m; ++e) {
    uint64_t u = 0, v = 0;
    for (uint32_t level = 0; level < o.scale; ++level) {
      const double r = rng.uniform();
      const uint64_t bit = 1ull << level;
      if (r < o.a) {
      } else if (r < ab) {
        v |= bit;
      } else if (r < abc) {
        u |= bit;
      } else {
        u |= bit;
        v |= bit;
      }
    }
    if (u == v) continue;  // self-loop dropped
    w.edge(perm[u], perm[v]);
  }
}

void road(const GenerateOptions& o, EdgeWriter& w, Rng& rng) {
  // A random spanning tree of the grid (randomized Kruskal) keeps the graph connected, as a
  // real road network nearly is; every other grid edge is removed with probability
  // `removal`. Edges are written in row-major order so that ids stay local.
  const uint64_t R = o.rows, C = o.cols, n = R * C;
  std::vector<uint64_t> order;  // grid edge e = 2 * v + (0: right, 1: down)
  order.reserve(2 * n);
  for (uint64_t v = 0; v < n; ++v) {
    if (v % C + 1 < C) order.push_back(2 * v);
    if (v / C + 1 < R) order.push_back(2 * v + 1);
  }
  for (uint64_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<uint32_t> parent(n);
  for (uint64_t v = 0; v < n; ++v) parent[v] = static_cast<uint32_t>(v);
  auto find = [&](uint64_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  std::vector<uint8_t> keep(2 * n, 0);
  for (uint64_t e : order) {
    const uint64_t u = e / 2, v = e % 2 ? u + C : u + 1;
    const uint64_t ru = find(u), rv = find(v);
    if (ru != rv) {
      parent[ru] = static_cast<uint32_t>(rv);
      keep[e] = 1;
    } else {
      keep[e] = rng.uniform() >= o.removal;
    }
  }
  const int64_t span = o.shortcut_span;
  for (uint64_t v = 0; v < n; ++v) {
    if (keep[2 * v]) w.edge(v, v + 1);
    if (keep[2 * v + 1]) w.edge(v, v + C);
    if (o.shortcuts > 0 && rng.uniform() < o.shortcuts) {
      const int64_t r = static_cast<int64_t>(v / C), c = static_cast<int64_t>(v % C);
      const int64_t dr = static_cast<int64_t>(rng.below(2 * span + 1)) - span;
      const int64_t dc = static_cast<int64_t>(rng.below(2 * span + 1)) - span;
      const int64_t r2 = r + dr, c2 = c + dc;
      if (r2 >= 0 && r2 < static_cast<int64_t>(R) && c2 >= 0 && c2 < static_cast<int64_t>(C) && (dr || dc))
        w.edge(v, static_cast<uint64_t>(r2) * C + static_cast<uint64_t>(c2));
    }
  }
}

}  // namespace

GenerateResult generate(const GenerateOptions& o, const std::string& output) {
  GenerateResult res;
  std::string desc;
  switch (o.model) {
    case Model::BA:
      if (o.ba_m < 1) throw UsageError("--m must be at least 1");
      if (o.vertices <= o.ba_m) throw UsageError("--vertices must be larger than --m");
      if (o.vertices > 0x7ffffffeull) throw UsageError("--vertices must be below 2^31-1");
      res.vertices = o.vertices;
      desc = "model=ba vertices=" + std::to_string(o.vertices) + " m=" + std::to_string(o.ba_m);
      break;
    case Model::RMAT:
      if (o.scale < 1 || o.scale > 30) throw UsageError("--scale must be in [1, 30]");
      if (o.edge_factor < 1) throw UsageError("--edge-factor must be at least 1");
      if (!(o.a >= 0 && o.b >= 0 && o.c >= 0 && o.a + o.b + o.c <= 1))
        throw UsageError("--a, --b, --c must be probabilities with a + b + c <= 1");
      res.vertices = 1ull << o.scale;
      desc = "model=rmat scale=" + std::to_string(o.scale) + " edge_factor=" + std::to_string(o.edge_factor) +
             " a=" + fmt(o.a) + " b=" + fmt(o.b) + " c=" + fmt(o.c);
      break;
    case Model::Road:
      if (o.rows < 1 || o.cols < 1) throw UsageError("--rows and --cols must be at least 1");
      if (uint64_t{o.rows} * o.cols > 0x7ffffffeull) throw UsageError("--rows x --cols must be below 2^31-1");
      if (!(o.removal >= 0 && o.removal <= 1)) throw UsageError("--removal must be in [0, 1]");
      if (!(o.shortcuts >= 0 && o.shortcuts <= 1)) throw UsageError("--shortcuts must be in [0, 1]");
      res.vertices = uint64_t{o.rows} * o.cols;
      desc = "model=road rows=" + std::to_string(o.rows) + " cols=" + std::to_string(o.cols) +
             " removal=" + fmt(o.removal) + " shortcuts=" + fmt(o.shortcuts) +
             " shortcut_span=" + std::to_string(o.shortcut_span);
      break;
  }
  EdgeWriter w(output);
  w.comment("cave generate " + desc + " seed=" + std::to_string(o.seed));
  Rng rng(o.seed);
  switch (o.model) {
    case Model::BA: barabasi_albert(o, w, rng); break;
    case Model::RMAT: rmat(o, w, rng); break;
    case Model::Road: road(o, w, rng); break;
  }
  res.edges = w.edges;
  w.close();
  return res;
}

}  // namespace cave
