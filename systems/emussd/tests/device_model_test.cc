// Unit tests of the device model: the service-time rule, FIFO admission,
// the k_r / k_w / channels limits, and the counters.
#include "device_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace emussd {
namespace {

DeviceParams params(double lat_us, double alpha, int k_r, int k_w, int channels = 0) {
  DeviceParams p;
  p.read_latency_us = lat_us;
  p.alpha = alpha;
  p.k_r = k_r;
  p.k_w = k_w;
  p.channels = channels;
  return p;
}

// Waits (bounded) until the model shows `n` requests waiting in `op`'s queue.
void wait_queue_length(const DeviceModel& m, Op op, int n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (m.queue_length(op) != n) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "queue never reached " << n;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

TEST(ServiceTime, OnePageTimePerStartedPageWritesTimesAlpha) {
  DeviceModel m(params(100, 3.0, 1, 1));
  EXPECT_EQ(m.service_time_ns(Op::kRead, 4096), 100000);
  EXPECT_EQ(m.service_time_ns(Op::kRead, 1), 100000);
  EXPECT_EQ(m.service_time_ns(Op::kRead, 0), 0);  // end of file: no page read
  EXPECT_EQ(m.service_time_ns(Op::kWrite, 0), 300000);  // a write costs at least one page
  EXPECT_EQ(m.service_time_ns(Op::kWrite, 1), 300000);
  EXPECT_EQ(m.service_time_ns(Op::kRead, 4097), 200000);
  EXPECT_EQ(m.service_time_ns(Op::kRead, 128 * 1024), 3200000);
  EXPECT_EQ(m.service_time_ns(Op::kWrite, 4096), 300000);
  EXPECT_EQ(m.service_time_ns(Op::kWrite, 8192), 600000);
  EXPECT_EQ(m.service_time_ns(Op::kFsync, 4096), 0);
}

TEST(ServiceTime, PageSizeIsAParameter) {
  DeviceParams p = params(50, 1.5, 1, 1);
  p.page_size = 16384;
  DeviceModel m(p);
  EXPECT_EQ(m.service_time_ns(Op::kRead, 16384), 50000);
  EXPECT_EQ(m.service_time_ns(Op::kRead, 16385), 100000);
  EXPECT_EQ(m.service_time_ns(Op::kWrite, 4096), 75000);
}

TEST(Serve, TakesTheDeclaredTimeAndNotLess) {
  DeviceModel m(params(2000, 3.0, 1, 1));
  for (Op op : {Op::kRead, Op::kWrite}) {
    const int64_t declared = m.service_time_ns(op, 4096);
    std::vector<int64_t> overshoot;
    for (int i = 0; i < 21; ++i) {
      const int64_t t0 = now_ns();
      const int r = m.serve(op, 4096, [] { return 4096; });
      const int64_t took = now_ns() - t0;
      EXPECT_EQ(r, 4096);
      EXPECT_GE(took, declared);  // never early: an absolute deadline
      overshoot.push_back(took - declared);
    }
    // Late wake-ups are the host's (a busy or virtualised machine can be
    // milliseconds late once in a while), so only the median is bounded here.
    std::sort(overshoot.begin(), overshoot.end());
    EXPECT_LT(overshoot[overshoot.size() / 2], 500000) << "median overshoot above 0.5 ms";
  }
}

TEST(Serve, ShortReadIsChargedForTheBytesReturned) {
  DeviceModel m(params(200, 2.0, 1, 1));
  int64_t t0 = now_ns();
  m.serve(Op::kRead, 128 * 1024, [] { return ssize_t{100}; });  // end of file after 100 bytes
  EXPECT_LT(now_ns() - t0, 32 * 200000 / 2);  // not charged 32 pages
  EXPECT_EQ(m.counters(Op::kRead).pages, 1u);
  EXPECT_EQ(m.counters(Op::kRead).bytes, 100u);
  m.serve(Op::kRead, 4096, [] { return ssize_t{0}; });  // at end of file: free
  EXPECT_EQ(m.counters(Op::kRead).pages, 1u);
  EXPECT_EQ(m.counters(Op::kRead).count, 2u);
  t0 = now_ns();
  m.serve(Op::kRead, 8192, [] { return ssize_t{-5}; });  // error: charged as requested
  EXPECT_GE(now_ns() - t0, 2 * 200000);
  // A short write is charged in full (the result does not shrink the charge).
  t0 = now_ns();
  m.serve(Op::kWrite, 8192, [] { return ssize_t{1}; });
  EXPECT_GE(now_ns() - t0, 2 * 400000);
}

TEST(Serve, SlowBackingIoIsNotAddedToTheDeclaredTime) {
  // service = max(declared, actual backing time): the sleep is to an absolute
  // deadline measured from the start of service.
  DeviceModel m(params(4000, 1.0, 1, 1));
  const int64_t t0 = now_ns();
  m.serve(Op::kRead, 4096, [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(8));
    return 4096;
  });
  const int64_t took = now_ns() - t0;
  EXPECT_GE(took, 8000000);
  EXPECT_LT(took, 11000000);  // 12 ms if the two were added
}

TEST(Admission, StrictFifoPerQueue) {
  for (Op op : {Op::kRead, Op::kWrite}) {
    DeviceModel m(params(1, 1.0, 1, 1));
    m.admit(op);  // occupy the only slot
    const int n = 12;
    std::mutex mu;
    std::vector<int> order;
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        m.admit(op);
        {
          std::lock_guard<std::mutex> lock(mu);
          order.push_back(i);
        }
        m.release(op, 4096, 0, 0, 0);
      });
      wait_queue_length(m, op, i + 1);  // arrival order is now known: 0, 1, ...
    }
    m.release(op, 4096, 0, 0, 0);
    for (auto& t : threads) t.join();
    std::vector<int> expected(n);
    for (int i = 0; i < n; ++i) expected[i] = i;
    EXPECT_EQ(order, expected) << op_name(op);
    EXPECT_EQ(m.counters(op).max_queue_length, static_cast<uint64_t>(n));
  }
}

TEST(Admission, SharedChannelsGoInArrivalOrderAcrossQueues) {
  DeviceModel m(params(1, 1.0, 4, 4, /*channels=*/1));
  m.admit(Op::kRead);  // occupy the only channel
  const std::vector<Op> arrivals = {Op::kRead, Op::kWrite, Op::kWrite, Op::kRead, Op::kWrite};
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  int waiting[2] = {0, 0};
  for (int i = 0; i < static_cast<int>(arrivals.size()); ++i) {
    const Op op = arrivals[i];
    threads.emplace_back([&, i, op] {
      m.admit(op);
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
      }
      m.release(op, 4096, 0, 0, 0);
    });
    wait_queue_length(m, op, ++waiting[static_cast<int>(op)]);
  }
  m.release(Op::kRead, 4096, 0, 0, 0);
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

// Many threads with random request sizes: the number in service never
// exceeds k_r, k_w or channels, and does reach the limit under overload.
void check_limits(int k_r, int k_w, int channels, int readers, int writers) {
  DeviceModel m(params(300, 2.0, k_r, k_w, channels));
  std::atomic<int> violations{0};
  std::atomic<int> reads_now{0}, writes_now{0};
  std::atomic<int> max_reads{0}, max_writes{0};
  auto worker = [&](Op op, unsigned seed) {
    std::mt19937 rng(seed);
    auto& now = op == Op::kRead ? reads_now : writes_now;
    auto& max = op == Op::kRead ? max_reads : max_writes;
    for (int i = 0; i < 40; ++i) {
      const uint64_t bytes = 1 + rng() % (3 * 4096);
      m.serve(op, bytes, [&] {
        // Inside service: the model's own count must respect the limits.
        const int r = m.in_service(Op::kRead), w = m.in_service(Op::kWrite);
        if (r > k_r || w > k_w || (channels > 0 && r + w > channels)) ++violations;
        const int mine = ++now;
        int seen = max.load();
        while (mine > seen && !max.compare_exchange_weak(seen, mine)) {
        }
        --now;  // decremented before release, so never over-counted
        // All bytes served: a read returning 0 bytes (end of file) would cost
        // nothing, and the limit would be reached only by luck.
        return static_cast<int64_t>(bytes);
      });
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < readers; ++i) threads.emplace_back(worker, Op::kRead, 100u + i);
  for (int i = 0; i < writers; ++i) threads.emplace_back(worker, Op::kWrite, 200u + i);
  for (auto& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  const auto rc = m.counters(Op::kRead), wc = m.counters(Op::kWrite);
  EXPECT_EQ(rc.count, static_cast<uint64_t>(40 * readers));
  EXPECT_EQ(wc.count, static_cast<uint64_t>(40 * writers));
  const int cap_r = channels > 0 ? std::min(k_r, channels) : k_r;
  const int cap_w = channels > 0 ? std::min(k_w, channels) : k_w;
  EXPECT_LE(rc.max_in_service, static_cast<uint64_t>(cap_r));
  EXPECT_LE(wc.max_in_service, static_cast<uint64_t>(cap_w));
  if (channels == 0) {
    // Offered load is 3x the limit: the limit is reached.
    EXPECT_EQ(rc.max_in_service, static_cast<uint64_t>(k_r));
    EXPECT_EQ(wc.max_in_service, static_cast<uint64_t>(k_w));
  }
  EXPECT_EQ(m.in_service(Op::kRead), 0);
  EXPECT_EQ(m.in_service(Op::kWrite), 0);
  EXPECT_GT(rc.queue_ns, 0u);
}

TEST(Admission, LimitsNeverExceeded) { check_limits(4, 2, 0, 12, 6); }
TEST(Admission, SharedChannelLimitNeverExceeded) { check_limits(4, 3, 5, 12, 9); }

TEST(Counters, CountBytesPagesAndTimes) {
  DeviceModel m(params(500, 2.0, 2, 2));
  m.serve(Op::kRead, 4096, [] { return 4096; });
  m.serve(Op::kRead, 5000, [] { return 5000; });
  m.serve(Op::kWrite, 4096, [] { return 4096; });
  m.serve_fsync([] { return 0; });
  const auto r = m.counters(Op::kRead), w = m.counters(Op::kWrite), f = m.counters(Op::kFsync);
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(r.bytes, 9096u);
  EXPECT_EQ(r.pages, 3u);
  EXPECT_EQ(r.declared_service_ns, 1500000u);
  EXPECT_GE(r.service_ns, 1500000u);
  EXPECT_EQ(r.max_in_service, 1u);
  EXPECT_EQ(w.count, 1u);
  EXPECT_EQ(w.declared_service_ns, 1000000u);
  EXPECT_GE(w.service_ns, 1000000u);
  EXPECT_EQ(f.count, 1u);
  const std::string json = m.stats_json();
  for (const char* key : {"\"read_latency_us\": 500", "\"k_r\": 2", "\"read\"", "\"write\"",
                          "\"fsync\"", "\"queue_time_us\"", "\"service_time_us\"",
                          "\"max_in_service\"", "\"max_queue_length\""})
    EXPECT_NE(json.find(key), std::string::npos) << key << " missing in " << json;
}

}  // namespace
}  // namespace emussd
