// The concurrent clock cache pool of thesis §5.5 [T:1490-1503].
//
// A global lock protects the clock hand, the block -> slot map and each slot's block id and
// reference bit; it is held only to look a block up or to pick a victim slot. Each slot has
// its own mutex and a pin count. On a miss the chosen slot's mutex is taken *before* the
// global lock is released and the device read happens outside the global lock, so several
// threads read from the device at once; a thread that finds a block that is still being
// read pins it and then waits on the slot's mutex (outside the global lock).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "device.h"
#include "stats.h"

namespace cave {

class ClockCache {
 public:
  // Checks a block just read from the device (throws when its content is invalid).
  using Check = std::function<void(uint32_t block, const uint32_t* data)>;

  // `slots` cached edge blocks; edge block i is file block `first_block + i`. Every block read
  // from the device goes through `check` (if given) before any thread sees it.
  ClockCache(uint32_t slots, uint32_t num_edge_blocks, Device& device, uint64_t first_block, Counters& counters,
             Check check = nullptr);
  ~ClockCache();
  ClockCache(const ClockCache&) = delete;
  ClockCache& operator=(const ClockCache&) = delete;

  // Pins edge block `b` in the pool (reading it on a miss); the data stays valid until
  // unpin(slot). A thread may hold at most a few pins at a time; when every slot is pinned
  // the caller waits for one to be released. When the read or the check fails, pin throws
  // (holding no pin), and so does every later pin of that block, also in threads that were
  // waiting for the read: the error stops the run instead of handing out a bad block.
  const uint32_t* pin(uint32_t b, uint32_t& slot);
  void unpin(uint32_t slot);

  uint32_t slots() const { return static_cast<uint32_t>(slots_.size()); }

  // The pool as it stands, for cave-trace's picture of it (thesis Figure 5.3): each slot's edge
  // block (-1: empty), reference bit and pins, and the clock hand (taken under the global lock).
  struct SlotState {
    int64_t block;
    uint8_t ref;
    int32_t pins;
  };
  std::vector<SlotState> snapshot(uint32_t& hand);

 private:
  struct alignas(64) Slot {
    std::mutex m;  // held while the block is being read
    std::atomic<int32_t> pins{0};
    int64_t block = -1;        // global lock
    uint8_t ref = 0;           // global lock: clock reference bit
    std::exception_ptr error;  // the failed read or check of `block`; written under m
  };
  void lock_global();

  std::mutex global_;
  std::vector<Slot> slots_;
  std::vector<int32_t> map_;  // edge block -> slot, -1 when absent (global lock)
  uint32_t hand_ = 0;
  char* buffers_;
  Device& device_;
  uint64_t first_block_;
  Counters& counters_;
  Check check_;
};

// RAII pin.
class Pinned {
 public:
  Pinned(ClockCache& c, uint32_t block) : cache_(c) { data_ = c.pin(block, slot_); }
  ~Pinned() { cache_.unpin(slot_); }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  const uint32_t* data() const { return data_; }

 private:
  ClockCache& cache_;
  uint32_t slot_;
  const uint32_t* data_;
};

}  // namespace cave
