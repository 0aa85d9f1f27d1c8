// Counters shared by the cache pool, the device and the timeline sampler.
#pragma once

#include <atomic>
#include <cstdint>

namespace cave {

struct Counters {
  std::atomic<uint64_t> reads{0};  // block reads issued to the device
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<uint64_t> hits{0};               // cache pool lookups served from memory
  std::atomic<uint64_t> misses{0};             // lookups that read the block from the device
  std::atomic<uint64_t> lock_acquisitions{0};  // global-lock acquisitions
  std::atomic<uint64_t> lock_wait_ns{0};       // time spent waiting for the global lock, all threads
};

}  // namespace cave
