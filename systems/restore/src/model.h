// The device and request model shared by the simulator, the emulator and the policies.
// A tier is described by the artifact's one device parameter set (DESIGN.md):
// read_latency_us, alpha (write latency = alpha * read latency), k_r, k_w, page_size,
// plus its capacity in pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace restore {

enum class Op : uint8_t { kRead = 0, kWrite = 1 };

struct TierSpec {
  double read_latency_us = 100;
  double alpha = 1;
  int k_r = 1;
  int k_w = 1;
  uint64_t capacity_pages = 0;
  int page_size = 4096;

  double write_latency_us() const { return read_latency_us * alpha; }
  double service_us(Op op) const { return op == Op::kRead ? read_latency_us : write_latency_us(); }
  // Thesis L1809: avg_process_time = l_r / k_r + alpha * l_r / k_w.
  double avg_process_time_us() const { return read_latency_us / k_r + alpha * read_latency_us / k_w; }
};

// How a tier's servers are organised.
//  kShared: one FIFO pool of k_r servers serves reads and writes (thesis §6.5: one thread
//           pool per tier "with the number of threads set as the number of concurrency").
//  kSplit:  reads are served by a FIFO pool of k_r servers, writes by another of k_w.
enum class ServerModel : uint8_t { kShared, kSplit };

// A migration or demotion of one page between neighbouring tiers (0 = fastest).
struct Move {
  uint32_t page;
  uint8_t from;
  uint8_t to;
};

// What a policy may ask the engine about the devices at the current (virtual or wall) time.
class QueueProbe {
 public:
  virtual ~QueueProbe() = default;
  // Tasks submitted to the tier that have not started service yet.
  virtual uint64_t queued(int tier) = 0;
};

}  // namespace restore
