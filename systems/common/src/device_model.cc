#include "artifact/device_model.h"

#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "artifact/quote.h"

namespace artifact {

const char* op_name(Op op) {
  switch (op) {
    case Op::kRead: return "read";
    case Op::kWrite: return "write";
    case Op::kFsync: return "fsync";
  }
  return "?";
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void lower_timer_slack() {
  thread_local bool done = false;
  if (!done) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    done = true;
  }
}

void sleep_until_ns(int64_t deadline_ns) {
  timespec ts;
  ts.tv_sec = deadline_ns / 1000000000;
  ts.tv_nsec = deadline_ns % 1000000000;
  // A deadline already in the past returns at once. EINTR: sleep again.
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

std::string check_params(const DeviceParams& p) {
  const auto is_power_of_two = [](int n) { return n > 0 && (n & (n - 1)) == 0; };
  if (!(p.read_latency_us > 0 && p.read_latency_us <= 1e7)) return "read_latency_us must be in (0, 1e7] microseconds";
  if (!(p.alpha > 0 && p.alpha <= 1000)) return "alpha must be in (0, 1000]";
  if (p.k_r < 1 || p.k_r > 4096) return "k_r must be an integer in [1, 4096]";
  if (p.k_w < 1 || p.k_w > 4096) return "k_w must be an integer in [1, 4096]";
  if (p.page_size < 512 || p.page_size > (1 << 20) || !is_power_of_two(p.page_size))
    return "page_size must be a power of two in [512, 1048576] bytes";
  if (p.channels < 0 || p.channels > 8192) return "channels must be 0 (no shared limit) or an integer in [1, 8192]";
  if (!(p.time_dilation >= 1 && p.time_dilation <= 1e5)) return "time_dilation must be in [1, 1e5]";
  if (p.read_latency_us * p.time_dilation > 1e7)
    return "read_latency_us x time_dilation must be at most 1e7 (10 s per page read on the wall clock)";
  return "";
}

bool parse_params(const std::string& spec, DeviceParams& p, std::string& error) {
  DeviceParams parsed;
  std::set<std::string> seen;
  for (size_t from = 0; from <= spec.size();) {
    const size_t comma = std::min(spec.find(',', from), spec.size());
    const std::string item = spec.substr(from, comma - from);
    from = comma + 1;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    char* end = nullptr;
    const double number = value.empty() ? NAN : std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(number)) {  // a NUL ends no number
      error = excerpt(item) + " is not key=number (in " + excerpt(spec) + ")";
      return false;
    }
    double* real = key == "read_latency_us" ? &parsed.read_latency_us
                   : key == "alpha"         ? &parsed.alpha
                   : key == "time_dilation" ? &parsed.time_dilation
                                            : nullptr;
    int* whole = key == "k_r"         ? &parsed.k_r
                 : key == "k_w"       ? &parsed.k_w
                 : key == "page_size" ? &parsed.page_size
                 : key == "channels"  ? &parsed.channels
                                      : nullptr;
    if (real == nullptr && whole == nullptr) {
      error = "unknown key " + excerpt(key) +
              " (known: read_latency_us, alpha, k_r, k_w, page_size, channels, time_dilation)";
      return false;
    }
    if (!seen.insert(key).second) {
      error = key + " given twice (in " + excerpt(spec) + ")";
      return false;
    }
    if (real != nullptr) {
      *real = number;
    } else if (number == std::floor(number) && std::fabs(number) < 1e9) {
      *whole = static_cast<int>(number);
    } else {
      error = key + " must be an integer, got " + value;
      return false;
    }
  }
  for (const char* key : {"read_latency_us", "alpha", "k_r", "k_w"}) {
    if (!seen.count(key)) {
      error = excerpt(spec) + " needs read_latency_us, alpha, k_r and k_w";
      return false;
    }
  }
  error = check_params(parsed);
  if (!error.empty()) return false;
  p = parsed;
  return true;
}

DeviceModel::DeviceModel(const DeviceParams& params) : params_(params) {
  const int limits[kNumOps] = {params.k_r, params.k_w, 0};
  for (int i = 0; i < kNumOps; ++i) {
    queues_[i].limit = limits[i];
    queues_[i].slot_free.assign(static_cast<size_t>(limits[i]), INT64_MIN);  // all free
  }
  channel_bookings_.resize(static_cast<size_t>(std::max(0, params.channels)));
}

uint64_t DeviceModel::pages_of(Op op, uint64_t bytes) const {
  if (op == Op::kFsync) return 0;
  const uint64_t ps = static_cast<uint64_t>(params_.page_size);
  const uint64_t pages = (bytes + ps - 1) / ps;
  return op == Op::kWrite ? std::max<uint64_t>(1, pages) : pages;
}

int64_t DeviceModel::service_time_ns(Op op, uint64_t bytes) const {
  const double page_ns =
      params_.read_latency_us * 1000.0 * params_.time_dilation * (op == Op::kWrite ? params_.alpha : 1.0);
  return std::llround(page_ns * static_cast<double>(pages_of(op, bytes)));
}

int64_t DeviceModel::book_channel(int64_t from, int64_t length, int64_t now) {
  int64_t best = INT64_MAX;
  size_t best_channel = 0;
  for (size_t c = 0; c < channel_bookings_.size(); ++c) {
    auto& booked = channel_bookings_[c];
    // Bookings that ended are of no more use (every later request starts after now).
    booked.erase(
        std::remove_if(booked.begin(), booked.end(), [now](const auto& interval) { return interval.second <= now; }),
        booked.end());
    int64_t t = from;
    for (const auto& [start, end] : booked) {  // ascending starts: the first gap that fits
      if (end <= t) continue;
      if (start >= t + length) break;
      t = end;
    }
    if (t < best) {
      best = t;
      best_channel = c;
    }
  }
  auto& booked = channel_bookings_[best_channel];
  const std::pair<int64_t, int64_t> interval{best, best + length};
  booked.insert(std::upper_bound(booked.begin(), booked.end(), interval), interval);
  return best;
}

void DeviceModel::charge(Op op, uint64_t bytes, int64_t arrival_ns, int64_t io_done_ns) {
  lower_timer_slack();
  const Booking b = book(op, bytes, arrival_ns);
  sleep_until_ns(b.end_ns);
  finish(b, bytes, now_ns(), io_done_ns > b.end_ns);
}

Booking DeviceModel::book(Op op, uint64_t bytes, int64_t now) {
  const int64_t service = service_time_ns(op, bytes);
  std::lock_guard<std::mutex> lock(mu_);
  clock_ = std::max(clock_, now);
  now = clock_;
  Queue& q = queues_[static_cast<int>(op)];
  std::pop_heap(q.slot_free.begin(), q.slot_free.end(), std::greater<>());
  int64_t start = std::max({now, q.slot_free.back(), q.last_start});
  if (!channel_bookings_.empty()) start = book_channel(start, service, now);
  const int64_t end = start + service;
  q.slot_free.back() = end;  // the slot that was free first is busy until then
  std::push_heap(q.slot_free.begin(), q.slot_free.end(), std::greater<>());
  q.last_start = start;
  ++q.outstanding;

  // In service when this one starts: bookings not yet ended then (every one
  // of this kind started no later, FIFO), this one included.
  auto& ends = q.active_ends;
  while (!ends.empty() && ends.front() <= start) {
    std::pop_heap(ends.begin(), ends.end(), std::greater<>());
    ends.pop_back();
  }
  ends.push_back(end);
  std::push_heap(ends.begin(), ends.end(), std::greater<>());
  q.counters.max_in_service = std::max<uint64_t>(q.counters.max_in_service, ends.size());
  // Waiting now: booked requests whose start is still ahead (ascending starts).
  while (!q.waiting_starts.empty() && q.waiting_starts.front() <= now) q.waiting_starts.pop_front();
  if (start > now) q.waiting_starts.push_back(start);
  q.counters.max_queue_length = std::max<uint64_t>(q.counters.max_queue_length, q.waiting_starts.size());
  return Booking{op, now, start, end};
}

void DeviceModel::finish(const Booking& b, uint64_t bytes, int64_t completed, bool overran) {
  std::lock_guard<std::mutex> lock(mu_);
  Queue& q = queues_[static_cast<int>(b.op)];
  --q.outstanding;
  OpCounters& c = q.counters;
  const auto positive = [](int64_t t) { return static_cast<uint64_t>(std::max<int64_t>(0, t)); };
  const uint64_t service = positive(completed - b.start_ns);
  const uint64_t queued = positive(b.start_ns - b.booked_ns);
  const uint64_t late = positive(completed - b.end_ns);
  ++c.count;
  c.bytes += bytes;
  c.pages += pages_of(b.op, bytes);
  c.declared_service_ns += static_cast<uint64_t>(service_time_ns(b.op, bytes));
  c.service_ns += service;
  c.queue_ns += queued;
  c.max_service_ns = std::max(c.max_service_ns, service);
  c.max_queue_ns = std::max(c.max_queue_ns, queued);
  if (b.op != Op::kFsync) {
    c.late_ns += late;
    c.max_late_ns = std::max(c.max_late_ns, late);
    if (overran) ++c.overruns;
  }
}

OpCounters DeviceModel::counters(Op op) const {
  std::lock_guard<std::mutex> lock(mu_);
  return queues_[static_cast<int>(op)].counters;
}

int DeviceModel::waiting_locked(const Queue& q, int64_t now) const {
  const auto& s = q.waiting_starts;
  return static_cast<int>(s.end() - std::upper_bound(s.begin(), s.end(), now));
}

int DeviceModel::in_service(Op op, int64_t now) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Queue& q = queues_[static_cast<int>(op)];
  return q.outstanding - waiting_locked(q, now);
}

int DeviceModel::queue_length(Op op, int64_t now) const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_locked(queues_[static_cast<int>(op)], now);
}

std::string DeviceModel::params_json() const {
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "{\"read_latency_us\": %.3f, \"alpha\": %.6g, \"k_r\": %d, \"k_w\": %d, "
                "\"page_size\": %d, \"channels\": %d, \"time_dilation\": %.6g,\n"
                "  \"service_time_rule\": \"read_latency_us * ceil(bytes / page_size); writes "
                "times alpha, at least one page; reads charged for the bytes returned; times "
                "time_dilation on the wall clock\",\n"
                "  \"times\": \"every time under ops is wall-clock (declared times x "
                "time_dilation)\"}",
                params_.read_latency_us, params_.alpha, params_.k_r, params_.k_w, params_.page_size, params_.channels,
                params_.time_dilation);
  return buf;
}

std::string DeviceModel::stats_json() const {
  OpCounters c[kNumOps];
  int in_svc[kNumOps];
  int queued[kNumOps];
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now = now_ns();
    for (int i = 0; i < kNumOps; ++i) {
      c[i] = queues_[i].counters;
      queued[i] = waiting_locked(queues_[i], now);
      in_svc[i] = queues_[i].outstanding - queued[i];
    }
  }
  std::string out = "{\"params\": " + params_json() + ",\n \"ops\": {";
  char buf[768];
  for (int i = 0; i < kNumOps; ++i) {
    std::snprintf(buf, sizeof buf,
                  "%s\n  \"%s\": {\"count\": %llu, \"bytes\": %llu, \"pages\": %llu, "
                  "\"declared_service_time_us\": %.3f, \"service_time_us\": %.3f, "
                  "\"queue_time_us\": %.3f, \"late_time_us\": %.3f, \"max_service_time_us\": %.3f, "
                  "\"max_queue_time_us\": %.3f, \"max_late_time_us\": %.3f, \"overruns\": %llu, "
                  "\"max_in_service\": %llu, \"max_queue_length\": %llu, "
                  "\"in_service\": %d, \"queue_length\": %d}",
                  i ? "," : "", op_name(static_cast<Op>(i)), (unsigned long long)c[i].count,
                  (unsigned long long)c[i].bytes, (unsigned long long)c[i].pages, c[i].declared_service_ns / 1e3,
                  c[i].service_ns / 1e3, c[i].queue_ns / 1e3, c[i].late_ns / 1e3, c[i].max_service_ns / 1e3,
                  c[i].max_queue_ns / 1e3, c[i].max_late_ns / 1e3, (unsigned long long)c[i].overruns,
                  (unsigned long long)c[i].max_in_service, (unsigned long long)c[i].max_queue_length, in_svc[i],
                  queued[i]);
    out += buf;
  }
  out += "\n }}";
  return out;
}

}  // namespace artifact
