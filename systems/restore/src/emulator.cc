// The real-time emulator of thesis §6.5: each tier has a pool of threads (its concurrency); a
// read or write is a task that sleeps for the tier's read or write latency. Requests are issued
// by the main thread, which also runs the policy; with the closed-loop arrival at most `clients`
// requests are outstanding. Migrations are tasks too (a read on the source tier and a write on the
// destination) that no client waits for. The data access time is the wall time until every pool
// has drained.
#include <sys/prctl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "artifact/rng.h"
#include "simulator.h"

namespace restore {

namespace {

using Clock = std::chrono::steady_clock;

struct Task {
  double service_us;
  bool client;
  int tier;
  uint64_t index;
  Clock::time_point submitted;
};

struct Completion {
  int tier;
  double latency_us;
  uint64_t index;
};

class Emulator;

class ThreadPool {
 public:
  ThreadPool(int threads, Emulator* owner) : owner_(owner) {
    for (int i = 0; i < threads; i++) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  void submit(const Task& t) {
    {
      std::lock_guard lk(m_);
      q_.push_back(t);
    }
    cv_.notify_one();
  }
  uint64_t queued() {
    std::lock_guard lk(m_);
    return q_.size();
  }
  void wait_idle() {
    std::unique_lock lk(m_);
    idle_.wait(lk, [&] { return q_.empty() && running_ == 0; });
  }

 private:
  void work();
  Emulator* owner_;
  std::mutex m_;
  std::condition_variable cv_, idle_;
  std::deque<Task> q_;
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

class Emulator : public QueueProbe {
 public:
  Emulator(const SimConfig& c) : config_(c) {
    for (const TierSpec& spec : c.tiers) {
      std::vector<std::unique_ptr<ThreadPool>> pools;
      pools.push_back(std::make_unique<ThreadPool>(spec.k_r, this));
      if (c.server_model == ServerModel::kSplit) pools.push_back(std::make_unique<ThreadPool>(spec.k_w, this));
      pools_.push_back(std::move(pools));
    }
  }
  uint64_t queued(int tier) override {
    uint64_t n = 0;
    for (auto& p : pools_[static_cast<size_t>(tier)]) n += p->queued();
    return n;
  }
  void submit(int tier, Op op, bool client, uint64_t index) {
    const TierSpec& spec = config_.tiers[static_cast<size_t>(tier)];
    auto& pools = pools_[static_cast<size_t>(tier)];
    ThreadPool& pool = (pools.size() == 2 && op == Op::kWrite) ? *pools[1] : *pools[0];
    pool.submit(Task{spec.service_us(op), client, tier, index, Clock::now()});
  }
  void complete(const Task& t) {
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t.submitted).count();
    {
      std::lock_guard lk(m_);
      done_.push_back(Completion{t.tier, us, t.index});
      outstanding_--;
    }
    cv_.notify_one();
  }
  // Waits until fewer than `limit` client requests are outstanding (limit 0: no limit) and
  // returns the completions so far.
  std::vector<Completion> wait_below(uint64_t limit) {
    std::unique_lock lk(m_);
    if (limit > 0) cv_.wait(lk, [&] { return outstanding_ < limit; });
    std::vector<Completion> out;
    out.swap(done_);
    return out;
  }
  void issued() {
    std::lock_guard lk(m_);
    outstanding_++;
  }
  void drain() {
    // Migrations can be queued behind client requests and vice versa: wait until all pools are idle.
    for (auto& pools : pools_)
      for (auto& p : pools) p->wait_idle();
  }

 private:
  const SimConfig& config_;
  std::vector<std::vector<std::unique_ptr<ThreadPool>>> pools_;
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Completion> done_;
  uint64_t outstanding_ = 0;
};

void ThreadPool::work() {
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // sleep as precisely as the kernel allows (default slack: 50 us)
  while (true) {
    Task t;
    {
      std::unique_lock lk(m_);
      cv_.wait(lk, [&] { return stop_ || !q_.empty(); });
      if (stop_ && q_.empty()) return;
      t = q_.front();
      q_.pop_front();
      running_++;
    }
    std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(t.service_us));
    if (t.client) owner_->complete(t);
    {
      std::lock_guard lk(m_);
      running_--;
      if (q_.empty() && running_ == 0) idle_.notify_all();
    }
  }
}

}  // namespace

RunStats emulate(const SimConfig& config, Workload& workload) {
  if (config.remote())
    throw std::invalid_argument("the emulator runs its policy in its own process: a remote policy needs the simulator");
  const size_t n_tiers = config.tiers.size();
  auto policy = make_policy(config.policy, config.tiers, workload.pages(), config.params);
  const std::vector<uint8_t> placement = initial_placement(config, workload);
  policy->place(placement);
  PlacementCheck check(config.policy, config.tiers, placement);
  workload.reset();

  RunStats s;
  s.accesses.assign(n_tiers, 0);
  s.promotions.assign(n_tiers - 1, 0);
  s.demotions.assign(n_tiers - 1, 0);
  Emulator emu(config);
  SplitMix64 arrivals(derive_seed(config.params.seed, 3));
  const double mean_gap_us = config.rate_per_s > 0 ? 1e6 / config.rate_per_s : 0;
  const uint64_t limit = config.arrival == Arrival::kClosed ? config.clients : 0;

  // A completion is observed when it is absorbed, before request `now` is issued: the policy sees
  // the response then (its reward's time), not at the request's own issue index, which may
  // precede the policy's current TD state.
  auto absorb = [&](const std::vector<Completion>& done, uint64_t now) {
    for (const Completion& c : done) {
      s.latency_sum_us += c.latency_us;
      policy->observe(c.tier, c.latency_us, now);
    }
  };
  std::vector<Move> moves;
  double policy_ns = 0, arrival_us = 0;
  const auto start = Clock::now();
  const uint64_t n = workload.requests();
  for (uint64_t r = 0; r < n; r++) {
    if (config.arrival == Arrival::kPoisson) {
      arrival_us += arrivals.exponential(mean_gap_us);
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::micro>(arrival_us)));
    }
    const auto t0 = Clock::now();
    absorb(emu.wait_below(limit), r);
    uint32_t page;
    Op op;
    workload.next(&page, &op);
    if (op == Op::kRead)
      s.reads++;
    else
      s.writes++;
    const int tier = check.tier(page, *policy);
    s.accesses[static_cast<size_t>(tier)]++;
    emu.issued();
    emu.submit(tier, op, true, r);
    moves.clear();
    const auto t1 = Clock::now();
    policy->access(page, op, r, emu, moves);
    if (config.cpu_timing)
      policy_ns += static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t1).count());
    check.apply(moves);
    for (const Move& m : moves) {
      emu.submit(m.from, Op::kRead, false, r);
      emu.submit(m.to, Op::kWrite, false, r);
      if (m.to < m.from)
        s.promotions[m.to]++;
      else
        s.demotions[m.from]++;
    }
    (void)t0;
  }
  emu.drain();
  const auto end = Clock::now();
  absorb(emu.wait_below(0), n);
  s.requests = n;
  s.data_access_us = std::chrono::duration<double, std::micro>(end - start).count();
  s.policy_ns = policy_ns;
  s.policy_memory_bytes = policy->memory_bytes();
  s.wall_s = s.data_access_us * 1e-6;
  s.policy_heap_bytes = release_and_measure(policy);
  return s;
}

}  // namespace restore
