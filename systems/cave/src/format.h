// The block file of thesis §5.4.1 [T:1225-1238]; byte layout in README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cave {

constexpr uint32_t kBlockSize = 4096;
constexpr uint32_t kVerticesPerBlock = 512;    // 8-byte vertex records
constexpr uint32_t kEdgesPerBlock = 1024;      // 4-byte neighbour ids
constexpr uint32_t kOffsetBits = 10;           // low 10 bits of eb_addr: offset in edges
constexpr uint32_t kMaxEdgeBlocks = 1u << 22;  // high 22 bits: edge block index
constexpr char kMagic[8] = {'C', 'A', 'V', 'E', 'G', 'R', 'P', 'H'};
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kFlagSymmetric = 1;  // every stored edge (u,v) has its reverse (v,u)

// Block 0. The first four int32 fields are the thesis's metadata (in the order of the
// original code's MetaBlock); the rest of the thesis's "reserved" space holds a magic,
// the version, flags and the edge count, then zeros.
struct MetaBlock {
  int32_t num_vertices;
  int32_t num_blocks;  // all blocks of the file, metadata block included
  int32_t num_vertex_blocks;
  int32_t num_edge_blocks;
  char magic[8];
  uint32_t version;
  uint32_t flags;
  uint64_t num_edges;  // stored adjacency entries (sum of degrees)
};

struct VertexRecord {
  uint32_t degree;
  uint32_t eb_addr;  // (eb_idx << 10) | eb_offset
  uint32_t eb_idx() const { return eb_addr >> kOffsetBits; }
  uint32_t eb_offset() const { return eb_addr & (kEdgesPerBlock - 1); }
  // Index of the first neighbour in the edge region seen as one array of uint32.
  uint64_t first_edge() const { return uint64_t{eb_idx()} * kEdgesPerBlock + eb_offset(); }
};
static_assert(sizeof(VertexRecord) == 8);

// Compressed sparse rows: the neighbours of v are adj[offsets[v] .. offsets[v+1]).
struct Csr {
  uint32_t n = 0;
  std::vector<uint64_t> offsets{0};
  std::vector<uint32_t> adj;
  bool symmetric = false;
  uint64_t degree(uint32_t v) const { return offsets[v + 1] - offsets[v]; }
};

// The packed layout: vertex records plus the edge region, as written to the file.
struct Packed {
  std::vector<VertexRecord> vertices;
  std::vector<uint32_t> edges;  // num_edge_blocks * 1024 entries; unused slots are 0xFFFFFFFF
  uint32_t num_edge_blocks = 0;
};

// First-fit packing (offline, vertices in id order): a list of at most 1024 neighbours goes
// into the first edge block with enough room; a longer list gets ceil(deg/1024) new
// consecutive blocks starting at offset 0, and the free tail of its last block is offered
// to later small lists. Throws RuntimeError when the graph exceeds the format's limits.
Packed pack(const Csr& g);

// Writes the file (metadata, vertex blocks, edge blocks); fsyncs it and drops it from the
// page cache so that a following run starts cold.
void write_graph(const Csr& g, const std::string& path);

uint32_t vertex_blocks_for(uint32_t n);

// An opened block file: metadata and the vertex array (read with O_DIRECT at start-up, as in
// the original code: only edge blocks go through the cache pool).
struct GraphHeader {
  std::string path;  // named (escaped: artifact/quote.h) in every error about the file
  MetaBlock meta{};
  uint64_t file_bytes = 0;
  uint64_t edge_region_block = 0;  // file block index of edge block 0
};

// Nothing read from a file is trusted before it is checked (README "Checks on read"); a
// damaged file is a RuntimeError naming the file, the block and the value, never a crash.
// read_header checks the metadata against the file size; read_vertices checks every vertex
// record (its list inside the edge region and the packing rules, the degrees summing to
// num_edges); EdgeCheck's constructor checks that the lists of each edge block tile its first
// slots, and the check itself that those slots hold ids < N, each time the block is read.
GraphHeader read_header(int fd, const std::string& path);
// The checked metadata of the file at `path` alone (opened with O_DIRECT, then closed).
GraphHeader read_header(const std::string& path);
std::vector<VertexRecord> read_vertices(int fd, const GraphHeader& h);

class EdgeCheck {
 public:
  // h and vertices (checked by read_vertices) must outlive the EdgeCheck.
  EdgeCheck(const GraphHeader& h, const std::vector<VertexRecord>& vertices);
  // Throws RuntimeError when a slot of edge block b that belongs to a list holds an id >= N.
  void operator()(uint32_t b, const uint32_t* block) const {
    // N < 2^31 (read_header), so id < N exactly when its top bit is clear and it is below N
    // as a signed number: two operations SSE2 has (OR, signed compare), so the loop is
    // vectorized; an unsigned max (SSE4.1) would not be, and took 3 times longer.
    uint32_t bits = 0, out_of_range = 0;
    const auto n = static_cast<int32_t>(n_);
    const uint32_t used = used_[b];
    for (uint32_t i = 0; i < used; ++i) {
      bits |= block[i];
      out_of_range |= static_cast<uint32_t>(static_cast<int32_t>(block[i]) >= n);
    }
    if ((bits >> 31) | out_of_range) fail(b, block);
  }

 private:
  [[noreturn]] void fail(uint32_t b, const uint32_t* block) const;
  const GraphHeader& header_;
  const std::vector<VertexRecord>& vertices_;
  uint32_t n_;
  std::vector<uint16_t> used_;  // per edge block: its first used_[b] slots hold list entries
};

// Reads the whole edge region into memory (used by `cave info` and the tests, never by `run`).
std::vector<uint32_t> read_edge_region(int fd, const GraphHeader& h);

// Opens for reading with O_DIRECT; refuses (RuntimeError with advice) when the file system
// does not allow O_DIRECT, instead of falling back to the page cache.
int open_direct(const std::string& path);

// Aligned allocation for O_DIRECT buffers.
void* aligned_block_alloc(size_t bytes);

}  // namespace cave
