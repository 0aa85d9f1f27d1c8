// Timing of DeviceModel::serve() on the wall clock (ctest label "timing", run in
// the end-to-end phase). Each bound is relative to this machine's own sleep
// precision, measured in the same test just before (interleaved with the
// samples it is compared with, so both see the same load); lower bounds
// (never early) hold on any machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "artifact/device_model.h"
#include "device_params.h"

namespace artifact {
namespace {

int64_t percentile(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// How late a bare clock_nanosleep to an absolute deadline wakes up.
int64_t bare_sleep_overshoot(int64_t duration_ns) {
  lower_timer_slack();
  const int64_t deadline = now_ns() + duration_ns;
  sleep_until_ns(deadline);
  return now_ns() - deadline;
}

TEST(ServeTiming, NeverEarlyAndAsLateAsABareSleep) {
  DeviceModel m(params(2000, 3.0, 1, 1));
  for (Op op : {Op::kRead, Op::kWrite}) {
    const int64_t declared = m.service_time_ns(op, 4096);
    std::vector<int64_t> served, bare;
    for (int i = 0; i < 31; ++i) {
      bare.push_back(bare_sleep_overshoot(declared));
      const int64_t t0 = now_ns();
      EXPECT_EQ(m.serve(op, 4096, [] { return 4096; }), 4096);
      const int64_t took = now_ns() - t0;
      EXPECT_GE(took, declared);  // never early: an absolute deadline
      served.push_back(took - declared);
    }
    // serve() adds a mutex and a heap update to the sleep: its median lateness
    // stays within the bare sleep's p90 plus 50 us.
    EXPECT_LE(percentile(served, 0.5), percentile(bare, 0.9) + 50'000)
        << op_name(op) << ": median " << percentile(served, 0.5) << " ns, bare p90 " << percentile(bare, 0.9) << " ns";
  }
}

TEST(ServeTiming, SlowBackingIoIsNotAddedToTheDeclaredTime) {
  // service = max(declared, actual backing time): the sleep is to an absolute
  // deadline counted from the request's arrival.
  DeviceModel m(params(4000, 1.0, 1, 1));
  std::vector<int64_t> bare;
  for (int i = 0; i < 11; ++i) bare.push_back(bare_sleep_overshoot(8'000'000));
  const int64_t t0 = now_ns();
  m.serve(Op::kRead, 4096, [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(8));
    return 4096;
  });
  const int64_t took = now_ns() - t0;
  EXPECT_GE(took, 8'000'000);
  EXPECT_LT(took, 8'000'000 + percentile(bare, 1.0) + 1'000'000);  // 12 ms if the two were added
  EXPECT_EQ(m.counters(Op::kRead).overruns, 1u);
}

// 4k threads offer a burst: the device serves it k at a time, so the last one
// replies after ceil(4k / k) service times; every request sleeps once.
TEST(ServeTiming, ABurstOfFourKRequestsTakesFourServiceTimes) {
  for (int k : {4, 16}) {
    DeviceModel m(params(5000, 1.0, k, 1));
    const int64_t service = m.service_time_ns(Op::kRead, 4096);
    std::vector<int64_t> bare;
    for (int i = 0; i < 11; ++i) bare.push_back(bare_sleep_overshoot(service));
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<int64_t> done(4 * k);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4 * k; ++i) {
      threads.emplace_back([&, i] {
        ++ready;
        while (!go) std::this_thread::yield();
        m.serve(Op::kRead, 4096, [] { return 4096; });
        done[i] = now_ns();
      });
    }
    while (ready < 4 * k) std::this_thread::yield();
    const int64_t t0 = now_ns();
    go = true;
    for (auto& t : threads) t.join();
    const int64_t last = *std::max_element(done.begin(), done.end()) - t0;
    EXPECT_GE(last, 4 * service);
    // Arrivals spread over the threads' start-up, then one late wake-up.
    EXPECT_LT(last, 4 * service + service / 2 + percentile(bare, 1.0)) << "k=" << k;
    const OpCounters c = m.counters(Op::kRead);
    EXPECT_EQ(c.max_in_service, static_cast<uint64_t>(k));
    EXPECT_GE(c.max_queue_length, static_cast<uint64_t>(k));
    EXPECT_EQ(c.count, static_cast<uint64_t>(4 * k));
  }
}

}  // namespace
}  // namespace artifact
