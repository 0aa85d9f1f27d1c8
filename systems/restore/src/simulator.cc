#include "simulator.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <queue>
#include <stdexcept>

#include "artifact/rng.h"
#include "queue.h"
#include "remote_policy.h"

namespace restore {

std::vector<uint8_t> initial_placement(const SimConfig& config, Workload& workload) {
  const uint32_t pages = workload.pages();
  std::vector<uint32_t> order(pages);
  std::iota(order.begin(), order.end(), 0u);
  if (config.policy == "static") {
    std::vector<uint32_t> counts = count_accesses(workload);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return counts[a] > counts[b]; });
  }
  const uint8_t slowest = static_cast<uint8_t>(config.tiers.size() - 1);
  std::vector<uint8_t> tier_of(pages, slowest);
  if (config.initial == Initial::kSlowest && config.policy != "static") {
    if (config.tiers.back().capacity_pages < pages)
      throw std::invalid_argument("--initial slowest needs the slowest tier to hold every page");
    return tier_of;
  }
  size_t next = 0;
  for (size_t t = 0; t < config.tiers.size(); t++) {
    uint64_t room = config.tiers[t].capacity_pages;
    while (room > 0 && next < pages) {
      tier_of[order[next++]] = static_cast<uint8_t>(t);
      room--;
    }
  }
  if (next < pages) throw std::invalid_argument("the tiers' capacities do not hold every page");
  return tier_of;
}

namespace {

class SimProbe : public QueueProbe {
 public:
  explicit SimProbe(std::vector<TierDevice>& devices) : devices_(devices) {}
  uint64_t queued(int tier) override { return devices_[static_cast<size_t>(tier)].queued(now); }
  double now = 0;

 private:
  std::vector<TierDevice>& devices_;
};

}  // namespace

size_t release_and_measure(std::unique_ptr<Policy>& policy) {
  const size_t with_policy = mallinfo2().uordblks;
  policy.reset();
  const size_t without = mallinfo2().uordblks;
  return with_policy > without ? with_policy - without : 0;
}

RunStats simulate(const SimConfig& config, Workload& workload) {
  const auto wall_start = std::chrono::steady_clock::now();
  const size_t n_tiers = config.tiers.size();
  std::unique_ptr<Policy> policy;
  RemotePolicy* remote = nullptr;  // the policy, when it runs in another process
  if (config.remote()) {
    auto r = std::make_unique<RemotePolicy>(config.policy, config.tiers, workload.pages(), config.params,
                                            config.remote_in, config.remote_out);
    remote = r.get();
    policy = std::move(r);
  } else {
    policy = make_policy(config.policy, config.tiers, workload.pages(), config.params);
  }
  const std::vector<uint8_t> placement = initial_placement(config, workload);
  policy->place(placement);
  PlacementCheck check(config.policy, config.tiers, placement);
  workload.reset();

  std::vector<TierDevice> devices;
  for (const TierSpec& spec : config.tiers) devices.emplace_back(spec, config.server_model);
  SimProbe probe(devices);

  RunStats s;
  s.accesses.assign(n_tiers, 0);
  s.promotions.assign(n_tiers - 1, 0);
  s.demotions.assign(n_tiers - 1, 0);

  std::priority_queue<double, std::vector<double>, std::greater<>> ready;  // closed loop: clients' next arrival
  if (config.arrival == Arrival::kClosed)
    for (uint32_t c = 0; c < config.clients; c++) ready.push(0.0);
  SplitMix64 arrivals(derive_seed(config.params.seed, 3));
  const double mean_gap_us = config.rate_per_s > 0 ? 1e6 / config.rate_per_s : 0;

  std::vector<Move> moves;
  moves.reserve(4);
  double t = 0, policy_ns = 0;
  const uint64_t n = workload.requests();
  for (uint64_t r = 0; r < n; r++) {
    if (config.arrival == Arrival::kClosed) {
      t = ready.top();
      ready.pop();
    } else if (config.arrival == Arrival::kPoisson) {
      t += arrivals.exponential(mean_gap_us);
    }
    uint32_t page;
    Op op;
    workload.next(&page, &op);
    if (op == Op::kRead)
      s.reads++;
    else
      s.writes++;
    const int tier = check.tier(page, *policy);
    const double finish = devices[static_cast<size_t>(tier)].submit(t, op);
    s.accesses[static_cast<size_t>(tier)]++;
    s.latency_sum_us += finish - t;
    probe.now = t;
    moves.clear();
    if (config.cpu_timing) {
      const auto t0 = std::chrono::steady_clock::now();
      policy->access(page, op, r, probe, moves);
      policy->observe(tier, finish - t, r);
      policy_ns += static_cast<double>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    } else {
      policy->access(page, op, r, probe, moves);
      policy->observe(tier, finish - t, r);
    }
    // A migration reads the page on its tier and writes it on the other, issued now, without
    // blocking the client (as the original emulator's detached tasks).
    try {
      check.apply(moves);
    } catch (const PolicyError& e) {
      if (remote) remote->refused(e);
      throw;
    }
    for (const Move& m : moves) {
      devices[m.from].submit(t, Op::kRead);
      devices[m.to].submit(t, Op::kWrite);
      if (m.to < m.from)
        s.promotions[m.to]++;
      else
        s.demotions[m.from]++;
    }
    if (config.arrival == Arrival::kClosed) ready.push(finish);
  }
  s.requests = n;
  for (const TierDevice& d : devices) s.data_access_us = std::max(s.data_access_us, d.busy_until());
  s.policy_ns = policy_ns;
  if (remote) {
    // The host's account: its policy's count, and the heap it freed in its own process.
    const RemotePolicy::End end = remote->finish();
    s.policy_memory_bytes = end.memory_bytes;
    s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    s.policy_heap_bytes = end.heap_bytes;
    return s;
  }
  s.policy_memory_bytes = policy->memory_bytes();
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  s.policy_heap_bytes = release_and_measure(policy);
  return s;
}

}  // namespace restore
