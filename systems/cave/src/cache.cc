#include "cache.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "common.h"
#include "format.h"

namespace cave {

ClockCache::ClockCache(uint32_t slots, uint32_t num_edge_blocks, Device& device, uint64_t first_block,
                       Counters& counters, Check check)
    : slots_(slots == 0 ? 1 : slots),
      map_(num_edge_blocks, -1),
      device_(device),
      first_block_(first_block),
      counters_(counters),
      check_(std::move(check)) {
  buffers_ = static_cast<char*>(aligned_block_alloc(size_t{slots_.size()} * kBlockSize));
}

ClockCache::~ClockCache() { std::free(buffers_); }

void ClockCache::lock_global() {
  counters_.lock_acquisitions.fetch_add(1, std::memory_order_relaxed);
  if (global_.try_lock()) return;  // uncontended: no wait to record
  const auto t0 = std::chrono::steady_clock::now();
  global_.lock();
  const auto waited = std::chrono::steady_clock::now() - t0;
  counters_.lock_wait_ns.fetch_add(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count()),
      std::memory_order_relaxed);
}

const uint32_t* ClockCache::pin(uint32_t b, uint32_t& slot_out) {
  const uint32_t n = static_cast<uint32_t>(slots_.size());
  for (;;) {
    lock_global();
    const int32_t s = map_[b];
    if (s >= 0) {  // hit: pin, leave the global lock, wait for a read in progress
      Slot& slot = slots_[static_cast<size_t>(s)];
      slot.pins.fetch_add(1, std::memory_order_relaxed);
      slot.ref = 1;
      global_.unlock();
      slot.m.lock();
      std::exception_ptr failed = slot.error;
      slot.m.unlock();
      if (failed) {
        unpin(static_cast<uint32_t>(s));
        std::rethrow_exception(failed);
      }
      counters_.hits.fetch_add(1, std::memory_order_relaxed);
      slot_out = static_cast<uint32_t>(s);
      return reinterpret_cast<const uint32_t*>(buffers_ + size_t{slot_out} * kBlockSize);
    }
    // miss: move the clock hand to an unpinned slot whose reference bit is clear
    int64_t victim = -1;
    for (uint64_t step = 0; step < 2ull * n + 1; ++step) {
      Slot& cand = slots_[hand_];
      const uint32_t here = hand_;
      hand_ = hand_ + 1 == n ? 0 : hand_ + 1;
      if (cand.pins.load(std::memory_order_acquire) > 0) continue;
      if (cand.ref) {
        cand.ref = 0;
        continue;
      }
      victim = here;
      break;
    }
    if (victim < 0) {  // every slot pinned: wait for a release
      global_.unlock();
      std::this_thread::yield();
      continue;
    }
    Slot& slot = slots_[static_cast<size_t>(victim)];
    if (slot.block >= 0) map_[static_cast<size_t>(slot.block)] = -1;
    slot.block = b;
    map_[b] = static_cast<int32_t>(victim);
    slot.ref = 1;
    slot.pins.store(1, std::memory_order_relaxed);
    slot.m.lock();  // free: nobody holds an unpinned slot's mutex
    slot.error = nullptr;
    global_.unlock();
    char* buf = buffers_ + size_t(victim) * kBlockSize;
    try {
      device_.read(first_block_ + b, buf);
      if (check_) check_(b, reinterpret_cast<const uint32_t*>(buf));
    } catch (...) {
      // The block stays mapped with its error, so waiters and later lookups fail the same way.
      slot.error = std::current_exception();
      slot.m.unlock();
      unpin(static_cast<uint32_t>(victim));
      throw;
    }
    slot.m.unlock();
    counters_.misses.fetch_add(1, std::memory_order_relaxed);
    slot_out = static_cast<uint32_t>(victim);
    return reinterpret_cast<const uint32_t*>(buf);
  }
}

std::vector<ClockCache::SlotState> ClockCache::snapshot(uint32_t& hand) {
  std::lock_guard<std::mutex> lock(global_);
  std::vector<SlotState> out;
  for (const Slot& slot : slots_) out.push_back({slot.block, slot.ref, slot.pins.load(std::memory_order_relaxed)});
  hand = hand_;
  return out;
}

void ClockCache::unpin(uint32_t slot) { slots_[slot].pins.fetch_sub(1, std::memory_order_release); }

}  // namespace cave
