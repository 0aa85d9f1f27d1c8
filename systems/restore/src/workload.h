// Workloads: seeded synthetic generators (thesis Table 6.4's xhfy workloads, their phase
// sequences A-D, a YCSB-style scrambled zipfian, uniform) and page traces read from CSV.
//
// Workload names (a preset or a '+'-joined phase list; phases have equal length):
//   XhfY[@SET][*N]  Y % of the requests go uniformly to a hot set of X % of the pages, the rest
//                   uniformly to the other pages. SET names the hot set (the first X % of a
//                   permutation seeded by (seed, SET)): equal SETs give nested/equal hot sets.
//                   Without @, phases get SETs 0, 1, 2, ... in order. *N repeats the phase N times,
//                   each with the next SET (a different hot set per phase).
//   zipf[THETA]     YCSB's scrambled zipfian (THETA 0.99 by default).
//   uniform         every page equally likely.
// Presets: 5hf90 = 5hf90@0; 10hf90 = 10hf90@1; 10hf80 = 10hf80@1 (thesis L1968: the same hot
// pages as 10hf90, different from 5hf90's); A = 5hf90@0+10hf80@1; B = 5hf90@0+10hf80@1+20hf80@2;
// C = 5hf90*10; D = 5hf90*50; ycsb = zipf0.99.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "artifact/rng.h"
#include "model.h"

namespace restore {

using artifact::derive_seed;
using artifact::SplitMix64;

struct Phase {
  enum Kind { kHot, kZipf, kUniform } kind = kHot;
  double hot_pages_pct = 0;
  double hot_ops_pct = 0;
  uint32_t set = 0;
  double theta = 0.99;
};

// Parses a workload name; returns false with a message on error.
bool parse_workload(const std::string& name, std::vector<Phase>* phases, std::string* error);

class Workload {
 public:
  virtual ~Workload() = default;
  virtual void reset() = 0;
  virtual void next(uint32_t* page, Op* op) = 0;
  virtual uint64_t requests() const = 0;
  virtual uint32_t pages() const = 0;
};

class SyntheticWorkload : public Workload {
 public:
  SyntheticWorkload(std::vector<Phase> phases, uint32_t pages, uint64_t requests, double read_pct, uint64_t seed);
  void reset() override;
  void next(uint32_t* page, Op* op) override;
  uint64_t requests() const override { return requests_; }
  uint32_t pages() const override { return pages_; }
  // The hot set of a phase (sorted), for tests and the Static oracle's documentation.
  std::vector<uint32_t> hot_set(size_t phase) const;

 private:
  void start_phase(size_t k);
  uint64_t phase_end(size_t k) const;

  std::vector<Phase> phases_;
  uint32_t pages_;
  uint64_t requests_;
  double read_pct_;
  uint64_t seed_;
  SplitMix64 pick_, ops_;
  uint64_t issued_ = 0;
  size_t phase_ = 0;
  uint64_t end_ = 0;
  std::vector<uint32_t> hot_;
  std::vector<uint8_t> is_hot_;
  // zipfian state
  double zetan_ = 0, eta_ = 0, zalpha_ = 0, half_pow_theta_ = 0;
  uint64_t scramble_ = 0;
};

// A trace in memory: one request per element, page << 1 | op.
class TraceWorkload : public Workload {
 public:
  TraceWorkload(std::shared_ptr<const std::vector<uint32_t>> requests, uint32_t pages, uint64_t limit);
  void reset() override { i_ = 0; }
  void next(uint32_t* page, Op* op) override {
    uint32_t v = (*data_)[i_++];
    *page = v >> 1;
    *op = static_cast<Op>(v & 1);
  }
  uint64_t requests() const override { return n_; }
  uint32_t pages() const override { return pages_; }

 private:
  std::shared_ptr<const std::vector<uint32_t>> data_;
  uint32_t pages_;
  uint64_t n_;
  uint64_t i_ = 0;
};

struct Trace {
  std::shared_ptr<const std::vector<uint32_t>> requests;
  uint32_t pages = 0;  // largest page id + 1
  uint64_t reads = 0;
};

// The longest line of a page trace, in bytes before its line break: a request is some 40 bytes,
// and a file without line breaks is refused at its first 4 KiB instead of read whole into memory.
// restore.traces (Python) reads page traces with the same bound.
inline constexpr size_t kMaxTraceLine = 4096;

// Reads a page trace: CSV lines `page,op[,timestamp]`, page an integer in [0, 2^31), op R or W
// (case-insensitive), timestamp empty or a non-negative decimal number (digits with at most one
// '.': the source trace's clock, kept for reference; the simulator replays requests in line
// order), an optional header line, '#' comments, lines of at most kMaxTraceLine bytes. Throws
// std::runtime_error naming the file and line, with an escaped excerpt of what is wrong.
Trace read_trace(const std::string& path);

// The page each request goes to, counted over the whole workload (the Static oracle's input).
std::vector<uint32_t> count_accesses(Workload& w);

}  // namespace restore
