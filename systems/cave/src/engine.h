// The runtime: an opened graph (vertex array in memory, edge blocks through the cache pool)
// and the worker pool whose size is the number of concurrent I/Os.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cache.h"
#include "device.h"
#include "format.h"
#include "stats.h"

namespace cave {

class Graph {
 public:
  // Opens the file with O_DIRECT, reads and checks the metadata and the vertex array.
  Graph(const std::string& path, IoEngine engine, Counters& counters);
  Graph(const Graph&) = delete;  // check_ refers to header_ and vertices_
  Graph& operator=(const Graph&) = delete;
  // Creates the cache pool (edge blocks only; each block read is checked by check_). Returns
  // the number of slots used.
  uint32_t make_cache(uint32_t slots);

  uint32_t n() const { return static_cast<uint32_t>(vertices_.size()); }
  uint64_t edges() const { return header_.meta.num_edges; }
  uint32_t edge_blocks() const { return static_cast<uint32_t>(header_.meta.num_edge_blocks); }
  const GraphHeader& header() const { return header_; }
  bool symmetric() const { return (header_.meta.flags & kFlagSymmetric) != 0; }
  uint32_t degree(uint32_t v) const { return vertices_[v].degree; }
  const VertexRecord& record(uint32_t v) const { return vertices_[v]; }
  Device& device() { return *device_; }
  ClockCache& cache() { return *cache_; }

  uint32_t first_block(uint32_t v) const { return static_cast<uint32_t>(vertices_[v].first_edge() / kEdgesPerBlock); }
  uint32_t last_block(uint32_t v) const {
    const VertexRecord& r = vertices_[v];
    return static_cast<uint32_t>((r.first_edge() + r.degree - 1) / kEdgesPerBlock);
  }

  // The part of v's list stored in edge block b (which must be one of v's blocks), given the
  // block's data: f(neighbours, count, chunk index).
  template <typename F>
  void chunk_in_block(uint32_t v, uint32_t b, const uint32_t* data, F&& f) const {
    const VertexRecord& r = vertices_[v];
    const uint64_t g0 = r.first_edge(), g1 = g0 + r.degree;
    const uint64_t base = uint64_t{b} * kEdgesPerBlock;
    const uint64_t lo = std::max(g0, base), hi = std::min(g1, base + kEdgesPerBlock);
    f(data + (lo - base), static_cast<uint32_t>(hi - lo), b - first_block(v));
  }

  // GETEDGES: v's neighbours block by block through the cache pool (one pin at a time).
  template <typename F>
  void for_each_chunk(uint32_t v, F&& f) {
    if (vertices_[v].degree == 0) return;
    const uint32_t b1 = last_block(v);
    for (uint32_t b = first_block(v); b <= b1; ++b) {
      Pinned p(*cache_, b);
      chunk_in_block(v, b, p.data(), f);
    }
  }

  // The neighbour at position idx (< degree) of v's list: reads a single block.
  uint32_t neighbour(uint32_t v, uint64_t idx) {
    const uint64_t g = vertices_[v].first_edge() + idx;
    Pinned p(*cache_, static_cast<uint32_t>(g / kEdgesPerBlock));
    return p.data()[g % kEdgesPerBlock];
  }

 private:
  GraphHeader header_;
  std::vector<VertexRecord> vertices_;
  std::unique_ptr<EdgeCheck> check_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<ClockCache> cache_;
  Counters& counters_;
};

// A fixed set of worker threads; parallel_for hands out indices dynamically. A job of one
// item runs in the calling thread (as worker 0), which saves a wake-up for one-vertex
// frontiers (WCC's many small components) without changing the I/O concurrency.
class Pool {
 public:
  explicit Pool(unsigned threads);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  unsigned size() const { return static_cast<unsigned>(threads_.size()); }
  void parallel_for(size_t count, const std::function<void(size_t, unsigned)>& fn);

 private:
  void worker(unsigned tid);
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(size_t, unsigned)>* job_ = nullptr;
  size_t count_ = 0, grain_ = 1;
  std::atomic<size_t> next_{0};
  uint64_t generation_ = 0;
  unsigned running_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

// Groups the (vertex, block) pairs of a vertex set by edge block, for ProcessQueueBlock: one
// task per distinct block. A vertex whose list spans several blocks appears in each of them.
struct BlockTasks {
  std::vector<uint64_t> keys;  // (block << 32) | item, sorted
  std::vector<size_t> starts;  // task t covers keys[starts[t] .. starts[t+1])
  size_t size() const { return starts.empty() ? 0 : starts.size() - 1; }
  uint32_t block(size_t t) const { return static_cast<uint32_t>(keys[starts[t]] >> 32); }
  void finish();  // sorts the keys and computes the task boundaries
};

}  // namespace cave
