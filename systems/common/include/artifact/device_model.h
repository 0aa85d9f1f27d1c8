// The emulated device: booking in FIFO order, the service-time rule, counters.
//
// The one device model of the artifact: emussd's FUSE file system, the library device
// (artifact/device.h: fio's engine, Python through ctypes) and CAVE's --emulate all serve
// through it, so that they emulate the same device. A request is
// served as: do the real backing I/O -> book its service under the mutex
// (start = the earliest moment a slot of its kind, and a shared channel if
// any, is free; end = start + declared service time) -> sleep once, to the
// end -> reply. The device is a FIFO queue in front of k servers with known
// service times, so the whole schedule is known when a request arrives: no
// thread ever waits to be admitted, and a request costs one sleep and one
// wake-up however long the queue is (a per-waiter hand-over cost two, and
// the CPU of the second made throughput collapse past k on 2 cores).
#pragma once

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <deque>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace artifact {

// The device's declared parameters. Names follow the project's device model.
struct DeviceParams {
  double read_latency_us = 100.0;  // service time of a one-page read
  double alpha = 1.0;              // write service time / read service time
  int k_r = 1;                     // reads in service at once
  int k_w = 1;                     // writes in service at once
  int page_size = 4096;            // bytes per page
  int channels = 0;                // shared limit on reads + writes; 0 = none
  // Every service time is multiplied by this factor on the wall clock, so that a
  // device faster than the machine can emulate runs slower by a known factor
  // (ratios such as alpha and k are unchanged; absolute times are divided by it
  // when results are reported).
  double time_dilation = 1.0;
};

// What is wrong with `p` ("" when nothing): the ranges emussd's command line and
// configs/schemas/devices.schema.yaml accept.
std::string check_params(const DeviceParams& p);

// Parses "read_latency_us=2000,alpha=2.5,k_r=8,k_w=4[,page_size=4096][,channels=0]
// [,time_dilation=1]" (any order, the first four required) and checks it. On error
// returns false and says why in `error`.
bool parse_params(const std::string& spec, DeviceParams& p, std::string& error);

enum class Op { kRead = 0, kWrite = 1, kFsync = 2 };
inline constexpr int kNumOps = 3;
const char* op_name(Op op);

// Per-op-type counters. Times are wall-clock nanoseconds (declared x time_dilation).
struct OpCounters {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t pages = 0;                // pages charged (reads and writes)
  uint64_t declared_service_ns = 0;  // sum of the declared (dilated) service times
  uint64_t service_ns = 0;           // sum of measured start -> reply
  uint64_t queue_ns = 0;             // sum of booking -> start
  uint64_t late_ns = 0;              // sum of reply - booked end (wake-up lateness, overruns)
  uint64_t max_service_ns = 0;
  uint64_t max_queue_ns = 0;
  uint64_t max_late_ns = 0;
  uint64_t overruns = 0;  // backing I/O that ended after the booked end
  uint64_t max_in_service = 0;
  uint64_t max_queue_length = 0;
};

// One request's place in the schedule.
struct Booking {
  Op op = Op::kRead;
  int64_t booked_ns = 0;  // when it was booked (reached the device)
  int64_t start_ns = 0;   // service starts
  int64_t end_ns = 0;     // service ends: start + service time
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
  // Wall-clock service time: read_latency_us per page, times alpha for
  // writes, times time_dilation. fsync is not charged.
  int64_t service_time_ns(Op op, uint64_t bytes) const;

  // Serves one request: `io` is the real backing I/O (its result is
  // returned). The I/O is done first, so that a read is charged for the
  // bytes it returned (fewer at the end of the file); writes are charged for
  // the bytes requested. The request is then booked as of its arrival (the
  // moment before the I/O), and the thread sleeps once, to the booked end. A
  // backing I/O that ends after that replies at once: service =
  // max(declared, actual), counted as an overrun.
  template <class IO>
  auto serve(Op op, uint64_t bytes, IO&& io) {
    lower_timer_slack();
    const int64_t arrival = now_ns();
    auto result = io();
    const int64_t io_done = now_ns();
    uint64_t charged = bytes;
    if constexpr (std::is_integral_v<decltype(result)>) {
      if (op == Op::kRead && result >= 0 && static_cast<uint64_t>(result) < bytes)
        charged = static_cast<uint64_t>(result);
    }
    charge(op, charged, arrival, io_done);
    return result;
  }

  // serve() for a caller that did the I/O itself: it reached the device at
  // `arrival_ns` (taken just before the I/O) and was done at `io_done_ns`;
  // books `bytes` as of the arrival and sleeps once, to the booked end.
  void charge(Op op, uint64_t bytes, int64_t arrival_ns, int64_t io_done_ns);

  // fsync is not booked (the emulated device has no volatile cache to flush);
  // it is counted with its real duration.
  template <class IO>
  auto serve_fsync(IO&& io) {
    const int64_t start = now_ns();
    {
      std::lock_guard<std::mutex> lock(mu_);
      Queue& q = queues_[static_cast<int>(Op::kFsync)];
      ++q.outstanding;
      q.counters.max_in_service = std::max<uint64_t>(q.counters.max_in_service, static_cast<uint64_t>(q.outstanding));
    }
    auto result = io();
    finish(Booking{Op::kFsync, start, start, start}, 0, now_ns());
    return result;
  }

  // The two halves of serve(), exposed for the unit tests, which give `now`
  // themselves (the schedule is then deterministic, without threads).
  // book(): the request reaches the device at `now`; it starts at the
  // earliest moment at or after `now` (or the latest `now` booked so far: the
  // model's clock never goes back) when a slot of its kind is free (FIFO:
  // never before an earlier request of its kind) and, with channels, a channel
  // is free for its whole service time (requests are booked in arrival order
  // across both kinds).
  Booking book(Op op, uint64_t bytes, int64_t now);
  // finish(): the request replied at `completed` (`overran`: its backing I/O
  // ended after the booked end); updates the counters.
  void finish(const Booking& b, uint64_t bytes, int64_t completed, bool overran = false);

  OpCounters counters(Op op) const;
  // Requests of `op` in service (started, not finished) and waiting (booked,
  // not started) at `now`.
  int in_service(Op op, int64_t now = now_ns()) const;
  int queue_length(Op op, int64_t now = now_ns()) const;

  // The declared parameters as a JSON object.
  std::string params_json() const;
  // {"params": {...}, "ops": {"read": {...}, ...}} with times in us.
  std::string stats_json() const;

 private:
  struct Queue {
    int limit = 0;                       // k; 0 = unlimited (fsync)
    std::vector<int64_t> slot_free;      // min-heap: when each of the k slots is next free
    int64_t last_start = INT64_MIN;      // FIFO: a later request never starts earlier
    std::deque<int64_t> waiting_starts;  // starts still in the future at the last booking (ascending)
    std::vector<int64_t> active_ends;    // min-heap: ends of bookings that may overlap a later start
    int outstanding = 0;                 // booked and not finished
    OpCounters counters;
  };

  // Earliest t >= from at which some channel is free for [t, t + length);
  // books it. (Future bookings are kept per channel, so a request waiting for
  // a slot of its kind does not hold a channel idle meanwhile.)
  int64_t book_channel(int64_t from, int64_t length, int64_t now);
  int waiting_locked(const Queue& q, int64_t now) const;

  const DeviceParams params_;
  mutable std::mutex mu_;
  int64_t clock_ = INT64_MIN;  // the latest `now` booked: arrivals race to the mutex
  Queue queues_[kNumOps];
  std::vector<std::vector<std::pair<int64_t, int64_t>>> channel_bookings_;  // [start, end), by start
};

}  // namespace artifact
