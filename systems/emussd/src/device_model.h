// The emulated device: admission queues, service-time rule, counters.
//
// Kept free of FUSE so that it can be unit-tested on its own. A request is
// served as: arrive -> wait in its FIFO queue until admitted -> record start
// -> do the real backing I/O -> sleep until start + declared service time ->
// release. So the service time is max(declared, actual backing I/O time).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <deque>
#include <mutex>
#include <string>
#include <type_traits>

namespace emussd {

// The device's declared parameters. Names follow the project's device model.
struct DeviceParams {
  double read_latency_us = 100.0;  // service time of a one-page read
  double alpha = 1.0;              // write service time / read service time
  int k_r = 1;                     // reads in service at once
  int k_w = 1;                     // writes in service at once
  int page_size = 4096;            // bytes per page
  int channels = 0;                // shared limit on reads + writes; 0 = none
};

enum class Op { kRead = 0, kWrite = 1, kFsync = 2 };
inline constexpr int kNumOps = 3;
const char* op_name(Op op);

// Per-op-type counters. Times are in nanoseconds.
struct OpCounters {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t pages = 0;                  // pages charged (reads and writes)
  uint64_t declared_service_ns = 0;    // sum of the declared service times
  uint64_t service_ns = 0;             // sum of measured (start -> release)
  uint64_t queue_ns = 0;               // sum of measured (arrival -> start)
  uint64_t max_service_ns = 0;
  uint64_t max_queue_ns = 0;
  uint64_t max_in_service = 0;
  uint64_t max_queue_length = 0;
};

int64_t now_ns();  // CLOCK_MONOTONIC

// Lowers this thread's timer slack to 1 ns (once per thread): the default
// 50 us slack would add up to 50 us to every emulated service time.
void lower_timer_slack();

// Sleeps until the CLOCK_MONOTONIC deadline (absolute, so that the time
// spent before the call, e.g. in the backing I/O, is not counted twice).
void sleep_until_ns(int64_t deadline_ns);

class DeviceModel {
 public:
  explicit DeviceModel(const DeviceParams& params);
  DeviceModel(const DeviceModel&) = delete;
  DeviceModel& operator=(const DeviceModel&) = delete;

  const DeviceParams& params() const { return params_; }

  // Pages charged for a request of `bytes`: every started page counts. A
  // write costs at least one page; a read of 0 bytes (at end of file: the
  // file system answers it from the file size) costs nothing.
  uint64_t pages_of(Op op, uint64_t bytes) const;
  // Declared service time: read_latency_us per page, times alpha for
  // writes. fsync is not charged.
  int64_t service_time_ns(Op op, uint64_t bytes) const;

  // Serves one request: `io` is the real backing I/O (its result is
  // returned). Blocks the calling thread for queueing plus service time.
  // A read that returns fewer bytes than requested (end of file) is charged
  // for the bytes it returned: the device reads only pages that exist.
  // Writes are charged for the bytes requested.
  template <class IO>
  auto serve(Op op, uint64_t bytes, IO&& io) {
    lower_timer_slack();
    const int64_t arrival = now_ns();
    const int64_t start = admit(op);
    auto result = io();
    uint64_t charged = bytes;
    if constexpr (std::is_integral_v<decltype(result)>) {
      if (op == Op::kRead && result >= 0 && static_cast<uint64_t>(result) < bytes)
        charged = static_cast<uint64_t>(result);
    }
    sleep_until_ns(start + service_time_ns(op, charged));
    release(op, charged, arrival, start, now_ns());
    return result;
  }

  // fsync is not admitted through the queues (the emulated device has no
  // volatile cache to flush); it is counted with its real duration.
  template <class IO>
  auto serve_fsync(IO&& io) {
    const int64_t start = now_ns();
    {
      std::lock_guard<std::mutex> lock(mu_);
      start_service(Op::kFsync);
    }
    auto result = io();
    release(Op::kFsync, 0, start, start, now_ns());
    return result;
  }

  // The admission half and the release half, exposed for the unit tests.
  // admit() returns the time service started: the moment the slot was
  // granted, not the (later) moment this thread woke up, so that thread
  // wake-up latency does not stretch the service time.
  int64_t admit(Op op);
  void release(Op op, uint64_t bytes, int64_t arrival_ns, int64_t start_ns,
               int64_t end_ns);

  OpCounters counters(Op op) const;
  int in_service(Op op) const;
  int queue_length(Op op) const;

  // {"params": {...}, "ops": {"read": {...}, ...}} with times in us.
  std::string stats_json() const;

 private:
  struct Waiter {
    std::condition_variable cv;
    uint64_t seq = 0;
    int64_t start_ns = 0;
    bool admitted = false;
  };
  struct Queue {
    int limit = 0;  // 0 = unlimited (fsync)
    int in_service = 0;
    std::deque<Waiter*> waiting;
    OpCounters counters;
  };

  bool can_start(Op op) const;
  void start_service(Op op);
  void dispatch();

  const DeviceParams params_;
  mutable std::mutex mu_;
  Queue queues_[kNumOps];
  int channel_in_service_ = 0;  // reads + writes in service
  uint64_t next_seq_ = 0;       // arrival order across queues
};

}  // namespace emussd
