// The bufferpool of N frames over the ideal device of thesis Appendix A, in virtual time,
// and ACE (thesis Algorithm 1) as the patched PostgreSQL runs it. One closed-loop client
// issues the accesses in order; every I/O phase waits for the previous one:
//   an access                  cpu_us_per_access
//   m pages read at once       ceil(m / k_r) * read_latency_us
//   m pages written at once    ceil(m / k_w) * alpha * read_latency_us
// so a dirty eviction without ACE costs alpha * read_latency_us before its read.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policy.h"
#include "prefetch.h"

namespace acesim {

enum class Prefetch { kOff, kSequential, kHistory };

struct Device {
  double read_latency_us = 100;  // the PCIe SSD of thesis Table 4.1, at 100 us per read
  double alpha = 2.8;
  int k_r = 80;
  int k_w = 8;
  int page_size = 8192;  // echoed only: one page is one I/O
};

struct Config {
  std::string policy = "lru";  // a name of the policy registry (policy.h)
  bool ace = false;
  Prefetch prefetch = Prefetch::kOff;
  int n_w = 8;
  int n_e = 8;
  int pool_pages = 0;
  double cflru_window = 1.0 / 3.0;
  Device device;
  double cpu_us_per_access = 0;
  uint64_t seed = 1;  // ExpCache's expert sampling (and the synthetic workload)
  // When set, builds the policy in place of the registry: the frames and {cflru_window, seed}
  // (ace-sim --remote-fds: a RemotePolicy, remote_policy.h). `policy` still names it.
  std::function<std::unique_ptr<Policy>(const std::vector<FrameState>&, const PolicyOptions&)> policy_factory;
};

struct Counters {
  uint64_t accesses = 0, hits = 0, misses = 0;
  uint64_t dirty_evictions = 0;  // victims that were dirty when chosen
  uint64_t pages_written = 0;
  uint64_t write_batches = 0;  // write I/O events: a single write or an ACE batch
  uint64_t prefetch_issued = 0, prefetch_used = 0;
  uint64_t w_nonresident = 0;  // trace W lines on pages not in the pool (loaded)
  uint64_t read_rounds = 0;    // sum of ceil(m / k_r) over read groups
  uint64_t write_rounds = 0;   // sum of ceil(m / k_w) over write events
};

// A policy answered what the pool cannot do: a pinned or empty frame as the victim, a clean,
// repeated or pinned frame to write back. The message names the policy and the frame.
class PolicyError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class Simulator {
 public:
  explicit Simulator(const Config& config);

  // A request for `page` by process `pid`; `write` dirties it (simple and synthetic formats).
  // A `repin` that hits leaves the policy alone (PostgreSQL's PinBuffer on a buffer the
  // process already pins neither moves it in the list nor raises its usage count).
  void access(uint64_t page, bool write, uint32_t pid = 0, bool repin = false);
  // MarkBufferDirty (the trace's W): the page is dirtied; not an access.
  void mark_dirty(uint64_t page, uint32_t pid = 0);
  // The number of blocks of each relation fork (indexed by fork number), which bounds what
  // the Reader may prefetch: nothing is prefetched from a fork of unknown size.
  void set_nblocks(std::vector<uint32_t> nblocks) { nblocks_ = std::move(nblocks); }

  // Every I/O phase, as it happens, one line each: "R <page> ..." (pages read at once) or
  // "W <page> ..." (pages written at once); pages as make_page() numbers them. nullptr: none.
  void set_io_log(std::ostream* log) { io_log_ = log; }

  const Counters& counters() const { return c_; }
  double virtual_runtime_us() const;
  double hit_ratio() const;

  // For the tests.
  Policy& policy() { return *policy_; }
  const std::vector<FrameState>& frames() const { return frames_; }
  bool resident(uint64_t page) const { return map_.count(page) != 0; }
  Frame frame_of(uint64_t page) const;
  std::vector<uint64_t> last_batch() const { return last_batch_; }  // pages of the last write

 private:
  enum class Alloc { kFree, kCleanVictim, kDirtyVictim };
  void load(uint64_t page, bool write, uint32_t pid, uint64_t now);
  Frame obtain_frame(const std::vector<Frame>& pinned, Alloc* kind);
  void install(Frame f, uint64_t page, uint64_t now);
  void set_dirty(Frame f);
  std::vector<uint64_t> predict(uint64_t page, uint32_t pid, Alloc kind);
  void check_victim(Frame v, const std::vector<Frame>& pinned) const;
  void check_writeback(const std::vector<Frame>& others, Frame v, const std::vector<Frame>& pinned) const;
  void log_phase(char op, const std::vector<uint64_t>& pages);
  uint32_t nblocks(uint32_t rel) const { return rel < nblocks_.size() ? nblocks_[rel] : 0; }

  Config cfg_;
  std::vector<FrameState> frames_;
  std::unique_ptr<Policy> policy_;
  std::unordered_map<uint64_t, Frame> map_;
  std::vector<Frame> free_;  // PostgreSQL's freelist: frames 0, 1, ... in order
  size_t next_free_ = 0;
  std::unordered_map<uint32_t, Predictor> predictors_;  // per pid
  std::vector<uint32_t> nblocks_;                       // per relation fork
  std::vector<uint64_t> last_batch_;
  Counters c_;
  std::ostream* io_log_ = nullptr;
};

}  // namespace acesim
