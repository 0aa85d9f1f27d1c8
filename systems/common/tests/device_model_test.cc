// Unit tests of the device model's logic: the service-time rule, the schedule
// (FIFO booking, the k_r / k_w / channels limits) and the counters. The
// schedule is driven with explicit times (book/finish), so nothing here
// depends on the wall clock; the timing of serve() is in device_model_timing_test.cc.
#include "artifact/device_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "device_params.h"

namespace artifact {
namespace {

constexpr int64_t kUs = 1000;  // ns

TEST(ServiceTime, OnePageTimePerStartedPageWritesTimesAlpha) {
  DeviceModel m(params(100, 3.0, 1, 1));
  EXPECT_EQ(m.service_time_ns(Op::kRead, 4096), 100000);
  EXPECT_EQ(m.service_time_ns(Op::kRead, 1), 100000);
  EXPECT_EQ(m.service_time_ns(Op::kRead, 0), 0);        // end of file: no page read
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

TEST(ServiceTime, AlphaBelowOneIsAllowed) {  // a device with cached writes
  DeviceModel m(params(100, 0.25, 1, 1));
  EXPECT_EQ(m.service_time_ns(Op::kWrite, 4096), 25000);
}

TEST(ServiceTime, TimeDilationScalesEveryServiceTime) {
  DeviceModel plain(params(50, 1.2, 16, 16));
  DeviceModel slow(params(50, 1.2, 16, 16, 0, 40.0));
  for (Op op : {Op::kRead, Op::kWrite})
    for (uint64_t bytes : {1, 4096, 10000})
      EXPECT_EQ(slow.service_time_ns(op, bytes), 40 * plain.service_time_ns(op, bytes));
  EXPECT_EQ(slow.service_time_ns(Op::kRead, 4096), 2000 * kUs);
}

TEST(Booking, AnIdleDeviceStartsAtOnce) {
  DeviceModel m(params(100, 2.0, 2, 1));
  const Booking b = m.book(Op::kRead, 4096, 1000 * kUs);
  EXPECT_EQ(b.booked_ns, 1000 * kUs);
  EXPECT_EQ(b.start_ns, 1000 * kUs);
  EXPECT_EQ(b.end_ns, 1100 * kUs);
}

// k servers, FIFO: request i of a burst starts at (i / k) service times.
TEST(Booking, ABurstIsServedKAtATimeInArrivalOrder) {
  for (int k : {1, 3, 8}) {
    DeviceModel m(params(100, 2.0, k, k));
    for (Op op : {Op::kRead, Op::kWrite}) {
      const int64_t service = m.service_time_ns(op, 4096);
      const int64_t t0 = 1'000'000 * kUs;
      int64_t previous_start = 0;
      for (int i = 0; i < 5 * k; ++i) {
        const Booking b = m.book(op, 4096, t0);  // all at once
        EXPECT_EQ(b.start_ns, t0 + (i / k) * service) << i;
        EXPECT_GE(b.start_ns, previous_start) << "FIFO: no later arrival starts earlier";
        previous_start = b.start_ns;
      }
      EXPECT_EQ(m.counters(op).max_in_service, static_cast<uint64_t>(k));
      EXPECT_EQ(m.counters(op).max_queue_length, static_cast<uint64_t>(4 * k));
    }
  }
}

TEST(Booking, ReadsAndWritesHaveTheirOwnSlots) {
  DeviceModel m(params(100, 3.0, 1, 1));
  const Booking r1 = m.book(Op::kRead, 4096, 0);
  const Booking w1 = m.book(Op::kWrite, 4096, 0);
  const Booking r2 = m.book(Op::kRead, 4096, 0);
  EXPECT_EQ(w1.start_ns, 0);  // not behind the read
  EXPECT_EQ(r2.start_ns, r1.end_ns);
  EXPECT_EQ(w1.end_ns, 300 * kUs);
}

TEST(Booking, AFreedSlotIsReusedAndIdleTimeIsNotBanked) {
  DeviceModel m(params(100, 1.0, 1, 1));
  m.book(Op::kRead, 4096, 0);                               // 0..100 us
  const Booking late = m.book(Op::kRead, 4096, 500 * kUs);  // device idle since 100 us
  EXPECT_EQ(late.start_ns, 500 * kUs);
  const Booking next = m.book(Op::kRead, 4096, 510 * kUs);
  EXPECT_EQ(next.start_ns, 600 * kUs);
}

TEST(Booking, MixedSizesUseTheSlotThatFreesFirst) {
  DeviceModel m(params(100, 1.0, 2, 1));
  m.book(Op::kRead, 4 * 4096, 0);                             // slot A: 0..400 us
  m.book(Op::kRead, 4096, 0);                                 // slot B: 0..100 us
  EXPECT_EQ(m.book(Op::kRead, 4096, 0).start_ns, 100 * kUs);  // B again: 100..200
  EXPECT_EQ(m.book(Op::kRead, 4096, 0).start_ns, 200 * kUs);  // B: 200..300
  EXPECT_EQ(m.book(Op::kRead, 4096, 0).start_ns, 300 * kUs);  // B: 300..400
  EXPECT_EQ(m.book(Op::kRead, 4096, 0).start_ns, 400 * kUs);  // A or B
  EXPECT_EQ(m.book(Op::kRead, 4096, 0).start_ns, 400 * kUs);  // the other
  EXPECT_EQ(m.counters(Op::kRead).max_in_service, 2u);
}

TEST(Booking, TheModelClockNeverGoesBack) {
  // Threads reach the mutex in a slightly different order than they arrived:
  // a booking stamped earlier than the last one is booked as of the last one.
  DeviceModel m(params(100, 1.0, 4, 1));
  m.book(Op::kRead, 4096, 1000 * kUs);
  const Booking b = m.book(Op::kRead, 4096, 990 * kUs);
  EXPECT_EQ(b.booked_ns, 1000 * kUs);
  EXPECT_EQ(b.start_ns, 1000 * kUs);
}

TEST(Booking, InServiceAndWaitingAtAGivenTime) {
  DeviceModel m(params(100, 1.0, 2, 1));
  for (int i = 0; i < 5; ++i) m.book(Op::kRead, 4096, 0);  // 2 at 0, 2 at 100 us, 1 at 200 us
  EXPECT_EQ(m.in_service(Op::kRead, 50 * kUs), 2);
  EXPECT_EQ(m.queue_length(Op::kRead, 50 * kUs), 3);
  EXPECT_EQ(m.queue_length(Op::kRead, 150 * kUs), 1);
  EXPECT_EQ(m.queue_length(Op::kRead, 250 * kUs), 0);
}

// Shared channels: at most `channels` of both kinds overlap at any moment, and
// a request waiting for a slot of its own kind does not hold a channel idle.
TEST(Booking, SharedChannelsGoInArrivalOrderAcrossKinds) {
  DeviceModel m(params(100, 1.0, 4, 4, /*channels=*/1));
  const std::vector<Op> arrivals = {Op::kRead, Op::kWrite, Op::kWrite, Op::kRead, Op::kWrite};
  int64_t expected = 0;
  for (Op op : arrivals) {
    const Booking b = m.book(op, 4096, 0);
    EXPECT_EQ(b.start_ns, expected) << op_name(op);
    expected = b.end_ns;
  }
}

TEST(Booking, AWaitingRequestDoesNotHoldAChannelIdle) {
  DeviceModel m(params(100, 1.0, 1, 4, /*channels=*/2));
  m.book(Op::kRead, 4096, 0);                     // read slot and channel 1: 0..100
  const Booking r2 = m.book(Op::kRead, 4096, 0);  // waits for the read slot: 100..200
  EXPECT_EQ(r2.start_ns, 100 * kUs);
  const Booking w = m.book(Op::kWrite, 4096, 1);  // channel 2 is free now: it goes first
  EXPECT_EQ(w.start_ns, 1);
}

// Random arrivals, sizes and kinds: replay the schedule and check the limits
// at every start, and that they are reached under overload.
void check_limits(int k_r, int k_w, int channels) {
  DeviceModel m(params(300, 2.0, k_r, k_w, channels));
  std::mt19937 rng(k_r * 1000 + k_w * 10 + channels);
  std::vector<Booking> all;
  int64_t now = 0;
  for (int i = 0; i < 3000; ++i) {
    now += static_cast<int64_t>(rng() % (40 * kUs));  // about 3x what the device serves
    const Op op = rng() % 3 == 0 ? Op::kWrite : Op::kRead;
    all.push_back(m.book(op, 1 + rng() % (3 * 4096), now));
  }
  std::map<Op, int64_t> last_start;
  int max_r = 0, max_w = 0;
  for (const Booking& b : all) {
    int r = 0, w = 0;
    for (const Booking& o : all)
      if (o.start_ns <= b.start_ns && b.start_ns < o.end_ns) ++(o.op == Op::kRead ? r : w);
    ASSERT_LE(r, k_r);
    ASSERT_LE(w, k_w);
    if (channels > 0) {
      ASSERT_LE(r + w, channels);
    }
    max_r = std::max(max_r, r);
    max_w = std::max(max_w, w);
    ASSERT_GE(b.start_ns, last_start[b.op]) << "FIFO within a kind";
    last_start[b.op] = b.start_ns;
  }
  const int cap_r = channels > 0 ? std::min(k_r, channels) : k_r;
  const int cap_w = channels > 0 ? std::min(k_w, channels) : k_w;
  if (channels == 0) {
    EXPECT_EQ(max_r, cap_r);
    EXPECT_EQ(max_w, cap_w);
  }
  EXPECT_EQ(m.counters(Op::kRead).max_in_service, static_cast<uint64_t>(max_r));
  EXPECT_EQ(m.counters(Op::kWrite).max_in_service, static_cast<uint64_t>(max_w));
}

TEST(Booking, LimitsNeverExceeded) { check_limits(4, 2, 0); }
TEST(Booking, SharedChannelLimitNeverExceeded) { check_limits(4, 3, 5); }
TEST(Booking, OneChannelSerialisesEverything) { check_limits(8, 8, 1); }

// serve()'s charging rule, at 1 us per page so that its sleeps are negligible
// (only the counters are checked).
TEST(Serve, ChargesWhatTheBackingIoReturned) {
  DeviceModel m(params(1, 2.0, 1, 1));
  EXPECT_EQ(m.serve(Op::kRead, 128 * 1024, [] { return ssize_t{100}; }), 100);  // end of file
  EXPECT_EQ(m.counters(Op::kRead).pages, 1u);
  EXPECT_EQ(m.counters(Op::kRead).bytes, 100u);
  EXPECT_EQ(m.counters(Op::kRead).declared_service_ns, 1000u);
  m.serve(Op::kRead, 4096, [] { return ssize_t{0}; });  // at end of file: free
  EXPECT_EQ(m.counters(Op::kRead).pages, 1u);
  EXPECT_EQ(m.counters(Op::kRead).count, 2u);
  m.serve(Op::kRead, 8192, [] { return ssize_t{-5}; });  // an error: charged as requested
  EXPECT_EQ(m.counters(Op::kRead).pages, 3u);
  m.serve(Op::kWrite, 8192, [] { return ssize_t{1}; });  // a short write is charged in full
  EXPECT_EQ(m.counters(Op::kWrite).pages, 2u);
  EXPECT_EQ(m.counters(Op::kWrite).declared_service_ns, 4000u);
  const int fsync_result = m.serve_fsync([] { return 0; });
  EXPECT_EQ(fsync_result, 0);
  EXPECT_EQ(m.counters(Op::kFsync).count, 1u);
  EXPECT_EQ(m.counters(Op::kFsync).pages, 0u);
}

TEST(Counters, CountBytesPagesAndTimes) {
  DeviceModel m(params(500, 2.0, 1, 2));
  const Booking r1 = m.book(Op::kRead, 4096, 0);
  const Booking r2 = m.book(Op::kRead, 5000, 0);  // queued behind r1 for 500 us
  const Booking w = m.book(Op::kWrite, 4096, 0);
  m.finish(r1, 4096, r1.end_ns + 20 * kUs);
  m.finish(r2, 5000, r2.end_ns);
  m.finish(w, 4096, w.end_ns + 5 * kUs, /*overran=*/true);
  const auto r = m.counters(Op::kRead), wc = m.counters(Op::kWrite);
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(r.bytes, 9096u);
  EXPECT_EQ(r.pages, 3u);
  EXPECT_EQ(r.declared_service_ns, 1500000u);
  EXPECT_EQ(r.service_ns, 1520000u);
  EXPECT_EQ(r.queue_ns, 500000u);
  EXPECT_EQ(r.max_queue_ns, 500000u);
  EXPECT_EQ(r.late_ns, 20000u);
  EXPECT_EQ(r.max_late_ns, 20000u);
  EXPECT_EQ(r.max_in_service, 1u);
  EXPECT_EQ(r.max_queue_length, 1u);
  EXPECT_EQ(wc.count, 1u);
  EXPECT_EQ(wc.declared_service_ns, 1000000u);
  EXPECT_EQ(wc.overruns, 1u);
  EXPECT_EQ(m.in_service(Op::kRead, 2000 * kUs), 0);
  const std::string json = m.stats_json();
  for (const char* key : {"\"read_latency_us\": 500", "\"k_r\": 1", "\"time_dilation\": 1", "\"read\"", "\"write\"",
                          "\"fsync\"", "\"queue_time_us\"", "\"service_time_us\"", "\"late_time_us\"",
                          "\"overruns\": 1", "\"max_in_service\"", "\"max_queue_length\""})
    EXPECT_NE(json.find(key), std::string::npos) << key << " missing in " << json;
}

// The EMUSSD_MODEL text (cave run --emulate's too): a NUL ends no number early, and what a message
// quotes is escaped (artifact/quote.h), so it can neither be cut short nor forge a line.
TEST(Params, TheTextIsReadWholeAndMessagesEscapeIt) {
  DeviceParams p;
  std::string error;
  EXPECT_TRUE(parse_params("read_latency_us=100,alpha=2,k_r=8,k_w=4", p, error)) << error;
  EXPECT_EQ(p.k_r, 8);
  const std::string nul("read_latency_us=100,alpha=2,k_r=8\0x,k_w=4", 41);
  EXPECT_FALSE(parse_params(nul, p, error));
  EXPECT_EQ(error, "'k_r=8\\x00x' is not key=number (in 'read_latency_us=100,alpha=2,k_r=8\\x00x,k_w=4')");
  EXPECT_FALSE(parse_params("read_latency_us=100,al\npha=2", p, error));
  EXPECT_EQ(error,
            "unknown key 'al\\npha' (known: read_latency_us, alpha, k_r, k_w, page_size, channels, time_dilation)");
  EXPECT_FALSE(parse_params("alpha=2\r", p, error));
  EXPECT_EQ(error, "'alpha=2\\r' is not key=number (in 'alpha=2\\r')");
  EXPECT_FALSE(parse_params("alpha=2,k_r=1\x1b", p, error));
  EXPECT_EQ(error, "'k_r=1\\x1b' is not key=number (in 'alpha=2,k_r=1\\x1b')");
}

}  // namespace
}  // namespace artifact
