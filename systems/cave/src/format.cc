#include "format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "artifact/atomic_file.h"
#include "artifact/quote.h"
#include "common.h"

namespace cave {

using artifact::escaped;

std::string errno_text(int err) { return std::strerror(err); }

uint32_t vertex_blocks_for(uint32_t n) { return (n + kVerticesPerBlock - 1) / kVerticesPerBlock; }

namespace {

// Max segment tree over the free capacity of the edge blocks: finds the first block with at
// least `need` free slots in O(log B). Grows by doubling.
class FirstFit {
 public:
  uint32_t size() const { return count_; }
  uint32_t free_of(uint32_t b) const { return tree_[cap_ + b]; }
  uint32_t push(uint32_t free) {
    if (count_ == cap_) grow();
    set(count_, free);
    return count_++;
  }
  void set(uint32_t b, uint32_t free) {
    size_t i = cap_ + b;
    tree_[i] = free;
    for (i /= 2; i >= 1; i /= 2) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  // First block with free >= need, or -1.
  int64_t find(uint32_t need) const {
    if (count_ == 0 || tree_[1] < need) return -1;
    size_t i = 1;
    while (i < cap_) i = tree_[2 * i] >= need ? 2 * i : 2 * i + 1;
    return static_cast<int64_t>(i - cap_);
  }

 private:
  void grow() {
    size_t new_cap = cap_ == 0 ? 1024 : cap_ * 2;
    std::vector<uint32_t> t(2 * new_cap, 0);
    for (uint32_t b = 0; b < count_; ++b) t[new_cap + b] = tree_[cap_ + b];
    for (size_t i = new_cap - 1; i >= 1; --i) t[i] = std::max(t[2 * i], t[2 * i + 1]);
    tree_.swap(t);
    cap_ = new_cap;
  }
  std::vector<uint32_t> tree_;
  size_t cap_ = 0;
  uint32_t count_ = 0;
};

void check_block_count(uint64_t blocks) {
  if (blocks > kMaxEdgeBlocks)
    throw RuntimeError(
        "graph too large for the block format: it needs more than 2^22 = 4194304 edge blocks "
        "(16 GiB of edges; the vertex record has 22 bits for the edge block index)");
}

void read_exact(int fd, void* buf, size_t bytes, uint64_t offset, const std::string& what) {
  char* p = static_cast<char*>(buf);
  while (bytes > 0) {
    ssize_t r = ::pread(fd, p, bytes, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw RuntimeError("cannot read " + what + ": " + errno_text(errno) +
                         (errno == EINVAL ? " (O_DIRECT read refused by the file system?)" : ""));
    }
    if (r == 0) throw RuntimeError("cannot read " + what + ": unexpected end of file");
    p += r;
    bytes -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

}  // namespace

void* aligned_block_alloc(size_t bytes) {
  size_t rounded = (bytes + kBlockSize - 1) / kBlockSize * kBlockSize;
  void* p = std::aligned_alloc(kBlockSize, rounded == 0 ? kBlockSize : rounded);
  if (p == nullptr) throw RuntimeError("out of memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

Packed pack(const Csr& g) {
  if (g.n > 0x7fffffffu) throw RuntimeError("graph too large: more than 2^31-1 vertices");
  Packed out;
  out.vertices.resize(g.n);
  FirstFit ff;
  // Pass 1: assign (eb_idx, eb_offset) to every vertex.
  for (uint32_t v = 0; v < g.n; ++v) {
    const uint64_t d = g.degree(v);
    if (d > 0xffffffffull) throw RuntimeError("vertex " + std::to_string(v) + " has more than 2^32-1 neighbours");
    VertexRecord& rec = out.vertices[v];
    rec.degree = static_cast<uint32_t>(d);
    if (d == 0) {
      rec.eb_addr = 0;
      continue;
    }
    if (d <= kEdgesPerBlock) {
      int64_t b = ff.find(static_cast<uint32_t>(d));
      if (b < 0) b = ff.push(kEdgesPerBlock);
      const uint32_t free = ff.free_of(static_cast<uint32_t>(b));
      const uint32_t off = kEdgesPerBlock - free;
      ff.set(static_cast<uint32_t>(b), free - static_cast<uint32_t>(d));
      rec.eb_addr = (static_cast<uint32_t>(b) << kOffsetBits) | off;
    } else {
      const uint64_t k = (d + kEdgesPerBlock - 1) / kEdgesPerBlock;
      check_block_count(ff.size() + k);
      const uint32_t first = ff.size();
      for (uint64_t i = 0; i + 1 < k; ++i) ff.push(0);
      ff.push(static_cast<uint32_t>(k * kEdgesPerBlock - d));
      rec.eb_addr = first << kOffsetBits;
    }
    check_block_count(ff.size());
  }
  out.num_edge_blocks = ff.size();
  // Pass 2: copy the lists.
  out.edges.assign(static_cast<size_t>(out.num_edge_blocks) * kEdgesPerBlock, 0xffffffffu);
  for (uint32_t v = 0; v < g.n; ++v) {
    const VertexRecord& rec = out.vertices[v];
    if (rec.degree == 0) continue;
    std::copy(g.adj.begin() + static_cast<ptrdiff_t>(g.offsets[v]),
              g.adj.begin() + static_cast<ptrdiff_t>(g.offsets[v + 1]),
              out.edges.begin() + static_cast<ptrdiff_t>(rec.first_edge()));
  }
  return out;
}

void write_graph(const Csr& g, const std::string& path) {
  Packed p = pack(g);
  const uint32_t nvb = vertex_blocks_for(g.n);
  const uint64_t total = 1ull + nvb + p.num_edge_blocks;
  if (total > 0x7fffffffull) throw RuntimeError("graph too large: more than 2^31-1 blocks");

  std::unique_ptr<char, FreeDeleter> meta_block(static_cast<char*>(aligned_block_alloc(kBlockSize)));
  std::memset(meta_block.get(), 0, kBlockSize);
  MetaBlock meta{};
  meta.num_vertices = static_cast<int32_t>(g.n);
  meta.num_blocks = static_cast<int32_t>(total);
  meta.num_vertex_blocks = static_cast<int32_t>(nvb);
  meta.num_edge_blocks = static_cast<int32_t>(p.num_edge_blocks);
  std::memcpy(meta.magic, kMagic, sizeof kMagic);
  meta.version = kFormatVersion;
  meta.flags = g.symmetric ? kFlagSymmetric : 0;
  meta.num_edges = g.adj.size();
  std::memcpy(meta_block.get(), &meta, sizeof meta);

  // The meta block, the vertex blocks (the last one padded), the edge blocks: written whole or not at all.
  artifact::AtomicFile file(path);
  file.write(meta_block.get(), kBlockSize);
  std::vector<VertexRecord> vb(static_cast<size_t>(nvb) * kVerticesPerBlock, VertexRecord{0, 0});
  std::copy(p.vertices.begin(), p.vertices.end(), vb.begin());
  file.write(vb.data(), vb.size() * sizeof(VertexRecord));
  file.write(p.edges.data(), p.edges.size() * sizeof(uint32_t));
  file.commit();
  // Runs start cold (they use O_DIRECT anyway): the written pages, clean once synced, leave the cache.
  if (int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

int open_direct(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == EINVAL)
      throw RuntimeError("cannot open " + escaped(path) + " with O_DIRECT: the file system refuses direct I/O (" +
                         errno_text(err) +
                         "); CAVE bypasses the page cache and does not fall back to buffered reads: put the graph on a "
                         "file system that supports O_DIRECT (ext4, xfs, an emussd mount)");
    throw RuntimeError("cannot open " + escaped(path) + ": " + errno_text(err));
  }
  return fd;
}

namespace {

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  // "what" says where (file block, byte) and which value; the advice is the same for all.
  throw RuntimeError("corrupt graph file " + escaped(path) + ": " + what +
                     "; convert the input again with `cave convert`");
}

std::string n2s(uint64_t v) { return std::to_string(v); }

// Where vertex v's record lies in the file.
std::string record_place(uint32_t v) {
  const uint64_t vb = v / kVerticesPerBlock;
  return "vertex block " + n2s(vb) + " (file block " + n2s(1 + vb) + ", byte " +
         n2s((1 + vb) * kBlockSize + uint64_t{v % kVerticesPerBlock} * sizeof(VertexRecord)) + ")";
}

}  // namespace

GraphHeader read_header(int fd, const std::string& path) {
  GraphHeader h;
  h.path = path;
  const std::string file = escaped(path);  // as messages show it
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw RuntimeError("cannot stat " + file + ": " + errno_text(errno));
  h.file_bytes = static_cast<uint64_t>(st.st_size);
  if (h.file_bytes < kBlockSize)
    throw RuntimeError(file + " is not a CAVE graph file (shorter than one 4096-byte block)");
  std::unique_ptr<char, FreeDeleter> buf(static_cast<char*>(aligned_block_alloc(kBlockSize)));
  read_exact(fd, buf.get(), kBlockSize, 0, file + " (metadata block)");
  std::memcpy(&h.meta, buf.get(), sizeof h.meta);
  if (std::memcmp(h.meta.magic, kMagic, sizeof kMagic) != 0)
    throw RuntimeError(file + " is not a CAVE graph file (bad magic); convert it with `cave convert`");
  if (h.meta.version != kFormatVersion)
    throw RuntimeError(file + ": unsupported format version " + std::to_string(h.meta.version) +
                       " (this cave reads version " + std::to_string(kFormatVersion) +
                       "); convert the input again with this `cave convert`");
  const auto& m = h.meta;
  const std::string meta = "metadata block (file block 0): ";
  if ((m.flags & ~kFlagSymmetric) != 0)
    corrupt(path, meta + "unknown flag bits " + n2s(m.flags) + " (only bit 0, symmetric, exists)");
  if (m.num_vertices < 0 || m.num_blocks < 0 || m.num_vertex_blocks < 0 || m.num_edge_blocks < 0)
    corrupt(path, meta + "a negative count (num_vertices " + std::to_string(m.num_vertices) + ", num_blocks " +
                      std::to_string(m.num_blocks) + ", num_vertex_blocks " + std::to_string(m.num_vertex_blocks) +
                      ", num_edge_blocks " + std::to_string(m.num_edge_blocks) + ")");
  const uint32_t n = static_cast<uint32_t>(m.num_vertices);
  if (static_cast<uint32_t>(m.num_vertex_blocks) != vertex_blocks_for(n))
    corrupt(path, meta + "num_vertex_blocks " + n2s(uint64_t(m.num_vertex_blocks)) + " does not hold num_vertices " +
                      n2s(n) + " (that needs " + n2s(vertex_blocks_for(n)) + ")");
  if (uint64_t(m.num_edge_blocks) > kMaxEdgeBlocks)
    corrupt(path, meta + "num_edge_blocks " + n2s(uint64_t(m.num_edge_blocks)) +
                      " is more than the format can address (2^22)");
  if (int64_t{m.num_blocks} != 1 + int64_t{m.num_vertex_blocks} + m.num_edge_blocks)
    corrupt(path, meta + "num_blocks " + n2s(uint64_t(m.num_blocks)) + " is not 1 + num_vertex_blocks " +
                      n2s(uint64_t(m.num_vertex_blocks)) + " + num_edge_blocks " + n2s(uint64_t(m.num_edge_blocks)));
  if (h.file_bytes != uint64_t(m.num_blocks) * kBlockSize)
    corrupt(path, meta + "it describes " + n2s(uint64_t(m.num_blocks)) + " blocks (" +
                      n2s(uint64_t(m.num_blocks) * kBlockSize) + " bytes) but the file has " + n2s(h.file_bytes) +
                      " bytes (truncated or extended)");
  h.edge_region_block = 1ull + static_cast<uint64_t>(m.num_vertex_blocks);
  return h;
}

GraphHeader read_header(const std::string& path) {
  const int fd = open_direct(path);
  try {
    GraphHeader h = read_header(fd, path);
    ::close(fd);
    return h;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

namespace {
// A region is read in chunks of 128 KiB (FUSE's largest request), up to kRegionReaders at once:
// an SSD serves them side by side. The load is not in runtime_s, but read one chunk at a time it
// took 1 to 2 s of every run on the quick profile's emulated PCIe SSD (10 ms per read).
constexpr uint64_t kRegionChunk = 32;  // blocks per read
constexpr uint64_t kRegionReaders = 16;

void read_region(int fd, void* dst, uint64_t first_block, uint64_t blocks, const std::string& what) {
  const uint64_t chunks = (blocks + kRegionChunk - 1) / kRegionChunk;
  std::atomic<uint64_t> next{0};
  std::mutex failed_m;
  std::exception_ptr failed;
  auto reader = [&] {
    try {
      std::unique_ptr<char, FreeDeleter> buf(static_cast<char*>(aligned_block_alloc(kRegionChunk * kBlockSize)));
      for (uint64_t c = next++; c < chunks; c = next++) {
        const uint64_t b = c * kRegionChunk, n = std::min(kRegionChunk, blocks - b);
        read_exact(fd, buf.get(), n * kBlockSize, (first_block + b) * kBlockSize, what);
        std::memcpy(static_cast<char*>(dst) + b * kBlockSize, buf.get(), n * kBlockSize);
      }
    } catch (...) {
      std::lock_guard<std::mutex> g(failed_m);
      if (!failed) failed = std::current_exception();
      next = chunks;  // the others stop after their current read
    }
  };
  std::vector<std::thread> others;
  for (uint64_t t = 1; t < std::min(chunks, kRegionReaders); ++t) others.emplace_back(reader);
  reader();
  for (auto& t : others) t.join();
  if (failed) std::rethrow_exception(failed);
}
}  // namespace

std::vector<VertexRecord> read_vertices(int fd, const GraphHeader& h) {
  const uint64_t nvb = static_cast<uint64_t>(h.meta.num_vertex_blocks);
  std::vector<VertexRecord> all(nvb * kVerticesPerBlock);
  read_region(fd, all.data(), 1, nvb, escaped(h.path) + " (vertex blocks)");
  all.resize(static_cast<size_t>(h.meta.num_vertices));
  const uint64_t edge_blocks = static_cast<uint64_t>(h.meta.num_edge_blocks);
  uint64_t degrees = 0;
  for (uint32_t v = 0; v < all.size(); ++v) {
    const VertexRecord& r = all[v];
    degrees += r.degree;
    if (r.degree == 0) continue;
    auto bad = [&](const std::string& why) {
      corrupt(h.path, "the record of vertex " + n2s(v) + " in " + record_place(v) + " puts its " + n2s(r.degree) +
                          " neighbours at edge block " + n2s(r.eb_idx()) + " offset " + n2s(r.eb_offset()) + why);
    };
    if (r.first_edge() + r.degree > edge_blocks * kEdgesPerBlock)
      bad(", past the end of the " + n2s(edge_blocks) + " edge blocks");
    if (r.degree <= kEdgesPerBlock && r.eb_offset() + r.degree > kEdgesPerBlock)
      bad(": a list of at most 1024 neighbours must lie inside one edge block");
    if (r.degree > kEdgesPerBlock && r.eb_offset() != 0)
      bad(": a list of more than 1024 neighbours must start at offset 0");
  }
  if (degrees != h.meta.num_edges)
    corrupt(h.path, "the degrees in the vertex records sum to " + n2s(degrees) +
                        " but the metadata block says num_edges = " + n2s(h.meta.num_edges));
  return all;
}

EdgeCheck::EdgeCheck(const GraphHeader& h, const std::vector<VertexRecord>& vertices)
    : header_(h),
      vertices_(vertices),
      n_(static_cast<uint32_t>(vertices.size())),
      used_(uint64_t(h.meta.num_edge_blocks), 0) {
  // The lists of an edge block tile its first slots (first-fit packing appends each list to a
  // block): the slots they cover add up to the end of the last one, so no two lists overlap
  // and no slot between them is left out. Then the slots checked on each read are exactly the
  // slots the lists read.
  std::vector<uint64_t> covered(used_.size(), 0);  // 64 bits: many bad records cannot wrap it
  // Short lists lie inside one block (read_vertices checked it) and consecutive vertices
  // mostly share a block: sum in registers while the block stays the same.
  uint32_t block = 0, end = 0;
  uint64_t sum = 0;
  auto flush = [&] {
    covered[block] += sum;
    used_[block] = std::max(used_[block], static_cast<uint16_t>(end));
  };
  for (const VertexRecord& r : vertices) {
    if (r.degree == 0) continue;
    if (r.degree <= kEdgesPerBlock) {
      if (r.eb_idx() != block) {
        if (sum > 0) flush();
        block = r.eb_idx(), end = 0, sum = 0;
      }
      sum += r.degree;
      end = std::max(end, r.eb_offset() + r.degree);
      continue;
    }
    const uint64_t g0 = r.first_edge(), g1 = g0 + r.degree;
    for (uint64_t b = g0 / kEdgesPerBlock; b * kEdgesPerBlock < g1; ++b) {
      const uint64_t base = b * kEdgesPerBlock;
      const uint64_t lo = std::max(g0, base), hi = std::min(g1, base + kEdgesPerBlock);
      covered[b] += hi - lo;
      used_[b] = std::max(used_[b], static_cast<uint16_t>(hi - base));
    }
  }
  if (sum > 0) flush();
  for (uint64_t b = 0; b < used_.size(); ++b)
    if (covered[b] != used_[b])
      corrupt(h.path, "the vertex records put " + n2s(covered[b]) + " list entries in edge block " + n2s(b) +
                          " (file block " + n2s(h.edge_region_block + b) + ") but its last list ends at slot " +
                          n2s(used_[b]) + (covered[b] > used_[b] ? ": two lists overlap" : ": the lists leave a gap"));
}

void EdgeCheck::fail(uint32_t b, const uint32_t* block) const {
  uint32_t i = 0;
  while (i < used_[b] && block[i] < n_) ++i;
  const uint64_t slot = uint64_t{b} * kEdgesPerBlock + i;
  uint32_t owner = 0;
  while (owner < n_ && !(vertices_[owner].degree > 0 && vertices_[owner].first_edge() <= slot &&
                         slot < vertices_[owner].first_edge() + vertices_[owner].degree))
    ++owner;
  corrupt(header_.path, "edge block " + n2s(b) + " (file block " + n2s(header_.edge_region_block + b) + ", byte " +
                            n2s((header_.edge_region_block + b) * kBlockSize + uint64_t{i} * sizeof(uint32_t)) +
                            ") holds neighbour id " + n2s(block[i]) + " in the list of vertex " + n2s(owner) +
                            ", but the graph has " + n2s(n_) + " vertices (ids 0 to " + n2s(n_ - 1) + ")");
}

std::vector<uint32_t> read_edge_region(int fd, const GraphHeader& h) {
  std::vector<uint32_t> edges(static_cast<size_t>(h.meta.num_edge_blocks) * kEdgesPerBlock);
  read_region(fd, edges.data(), h.edge_region_block, static_cast<uint64_t>(h.meta.num_edge_blocks),
              escaped(h.path) + " (edge blocks)");
  return edges;
}

}  // namespace cave
