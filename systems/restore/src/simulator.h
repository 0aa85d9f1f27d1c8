// The two engines. Both replay a workload against tiers through one policy and return the same
// statistics:
//  * simulate(): a discrete-event simulation in virtual time (deterministic for a seed);
//  * emulate():  the thesis's real-time emulator (§6.5): a pool of threads per tier that sleep
//                for the service time; wall-clock results.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model.h"
#include "policy.h"
#include "workload.h"

namespace restore {

enum class Arrival { kClosed, kPoisson, kBurst };
enum class Initial { kFill, kSlowest };

struct SimConfig {
  std::vector<TierSpec> tiers;
  ServerModel server_model = ServerModel::kShared;
  Arrival arrival = Arrival::kClosed;
  uint32_t clients = 32;  // closed loop: requests outstanding at once
  double rate_per_s = 0;  // poisson: mean arrival rate
  Initial initial = Initial::kFill;
  std::string policy = "restore";  // a name of the policy registry (policy.h)
  PolicyParams params;
  bool cpu_timing = true;  // measure the time spent in the policy (steady_clock per access)
  // The policy runs in another process (remote_policy.h): requests to remote_out, replies from
  // remote_in (-1: in this process). The simulator only.
  int remote_in = -1, remote_out = -1;
  bool remote() const { return remote_in >= 0 || remote_out >= 0; }
};

struct RunStats {
  uint64_t requests = 0, reads = 0, writes = 0;
  std::vector<uint64_t> accesses;    // per tier
  std::vector<uint64_t> promotions;  // [i]: tier i+1 -> tier i
  std::vector<uint64_t> demotions;   // [i]: tier i -> tier i+1
  double latency_sum_us = 0;         // client requests: finish - arrival
  double data_access_us = 0;         // time until every I/O (migrations included) has finished
  double policy_ns = 0;              // measured time inside the policy (0 without cpu_timing)
  size_t policy_memory_bytes = 0;    // the structures the policy counts (Policy::memory_bytes)
  size_t policy_heap_bytes = 0;      // measured: the heap freed when the policy is destroyed after its run
  double wall_s = 0;                 // wall time of the whole run
};

// What `policy` holds on the heap, measured by the allocator: the bytes in use with it minus without
// it (it is destroyed), its own count's blind spots (node-based containers, capacity slack, the
// allocator's per-chunk overhead) included. Leaves `policy` empty.
size_t release_and_measure(std::unique_ptr<Policy>& policy);

// The placement the run starts from: kFill puts pages 0.. in the fastest tier until it is full,
// then the next tier, ... (the original code's initial placement); kSlowest puts every page in the
// slowest tier. Static's placement is the oracle: pages by decreasing access count in the whole
// workload (ties by page id), fastest tier first.
std::vector<uint8_t> initial_placement(const SimConfig& config, Workload& workload);

RunStats simulate(const SimConfig& config, Workload& workload);
RunStats emulate(const SimConfig& config, Workload& workload);

}  // namespace restore
