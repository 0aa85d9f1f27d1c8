#include "device_model.h"

#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>

namespace emussd {

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

DeviceModel::DeviceModel(const DeviceParams& params) : params_(params) {
  queues_[static_cast<int>(Op::kRead)].limit = params.k_r;
  queues_[static_cast<int>(Op::kWrite)].limit = params.k_w;
  queues_[static_cast<int>(Op::kFsync)].limit = 0;
}

uint64_t DeviceModel::pages_of(Op op, uint64_t bytes) const {
  if (op == Op::kFsync) return 0;
  const uint64_t ps = static_cast<uint64_t>(params_.page_size);
  const uint64_t pages = (bytes + ps - 1) / ps;
  return op == Op::kWrite ? std::max<uint64_t>(1, pages) : pages;
}

int64_t DeviceModel::service_time_ns(Op op, uint64_t bytes) const {
  const double page_ns = params_.read_latency_us * 1000.0 *
                         (op == Op::kWrite ? params_.alpha : 1.0);
  return std::llround(page_ns * static_cast<double>(pages_of(op, bytes)));
}

bool DeviceModel::can_start(Op op) const {
  const Queue& q = queues_[static_cast<int>(op)];
  if (q.limit > 0 && q.in_service >= q.limit) return false;
  if (op != Op::kFsync && params_.channels > 0 && channel_in_service_ >= params_.channels)
    return false;
  return true;
}

void DeviceModel::start_service(Op op) {
  Queue& q = queues_[static_cast<int>(op)];
  ++q.in_service;
  if (op != Op::kFsync) ++channel_in_service_;
  q.counters.max_in_service =
      std::max<uint64_t>(q.counters.max_in_service, static_cast<uint64_t>(q.in_service));
}

// Admits queue heads while they fit. When both heads fit only one more
// channel, the one that arrived first goes: FIFO per queue, and arrival order
// between the queues for the shared channels.
void DeviceModel::dispatch() {
  const int64_t now = now_ns();
  for (;;) {
    Queue& r = queues_[static_cast<int>(Op::kRead)];
    Queue& w = queues_[static_cast<int>(Op::kWrite)];
    const bool r_ok = !r.waiting.empty() && can_start(Op::kRead);
    const bool w_ok = !w.waiting.empty() && can_start(Op::kWrite);
    if (!r_ok && !w_ok) return;
    Op op;
    if (r_ok && w_ok)
      op = r.waiting.front()->seq < w.waiting.front()->seq ? Op::kRead : Op::kWrite;
    else
      op = r_ok ? Op::kRead : Op::kWrite;
    Queue& q = queues_[static_cast<int>(op)];
    Waiter* waiter = q.waiting.front();
    q.waiting.pop_front();
    start_service(op);
    waiter->start_ns = now;
    waiter->admitted = true;
    waiter->cv.notify_one();
  }
}

int64_t DeviceModel::admit(Op op) {
  std::unique_lock<std::mutex> lock(mu_);
  Queue& q = queues_[static_cast<int>(op)];
  const uint64_t seq = next_seq_++;
  // Nobody ahead of us in this queue, and room: start at once. (dispatch()
  // runs after every release, so a free channel never has a head waiting
  // that could use it.)
  if (q.waiting.empty() && can_start(op)) {
    start_service(op);
    return now_ns();
  }
  Waiter me;
  me.seq = seq;
  q.waiting.push_back(&me);
  q.counters.max_queue_length =
      std::max<uint64_t>(q.counters.max_queue_length, q.waiting.size());
  // The releaser admits us (hands over the slot) before notifying, so a
  // later arrival can never overtake: strict FIFO.
  me.cv.wait(lock, [&] { return me.admitted; });
  return me.start_ns;
}

void DeviceModel::release(Op op, uint64_t bytes, int64_t arrival_ns, int64_t start_ns,
                          int64_t end_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  Queue& q = queues_[static_cast<int>(op)];
  --q.in_service;
  if (op != Op::kFsync) --channel_in_service_;
  OpCounters& c = q.counters;
  const uint64_t service = static_cast<uint64_t>(std::max<int64_t>(0, end_ns - start_ns));
  const uint64_t queued = static_cast<uint64_t>(std::max<int64_t>(0, start_ns - arrival_ns));
  ++c.count;
  c.bytes += bytes;
  c.pages += pages_of(op, bytes);
  c.declared_service_ns += static_cast<uint64_t>(service_time_ns(op, bytes));
  c.service_ns += service;
  c.queue_ns += queued;
  c.max_service_ns = std::max(c.max_service_ns, service);
  c.max_queue_ns = std::max(c.max_queue_ns, queued);
  dispatch();
}

OpCounters DeviceModel::counters(Op op) const {
  std::lock_guard<std::mutex> lock(mu_);
  return queues_[static_cast<int>(op)].counters;
}

int DeviceModel::in_service(Op op) const {
  std::lock_guard<std::mutex> lock(mu_);
  return queues_[static_cast<int>(op)].in_service;
}

int DeviceModel::queue_length(Op op) const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queues_[static_cast<int>(op)].waiting.size());
}

std::string DeviceModel::stats_json() const {
  OpCounters c[kNumOps];
  int in_svc[kNumOps];
  int queued[kNumOps];
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < kNumOps; ++i) {
      c[i] = queues_[i].counters;
      in_svc[i] = queues_[i].in_service;
      queued[i] = static_cast<int>(queues_[i].waiting.size());
    }
  }
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"params\": {\"read_latency_us\": %.3f, \"alpha\": %.6g, \"k_r\": %d, "
                "\"k_w\": %d, \"page_size\": %d, \"channels\": %d,\n"
                "  \"service_time_rule\": \"read_latency_us * ceil(bytes / page_size); writes "
                "times alpha, at least one page; reads charged for the bytes returned\"},\n"
                " \"ops\": {",
                params_.read_latency_us, params_.alpha, params_.k_r, params_.k_w,
                params_.page_size, params_.channels);
  out += buf;
  for (int i = 0; i < kNumOps; ++i) {
    std::snprintf(
        buf, sizeof buf,
        "%s\n  \"%s\": {\"count\": %llu, \"bytes\": %llu, \"pages\": %llu, "
        "\"declared_service_time_us\": %.3f, \"service_time_us\": %.3f, "
        "\"queue_time_us\": %.3f, \"max_service_time_us\": %.3f, \"max_queue_time_us\": %.3f, "
        "\"max_in_service\": %llu, \"max_queue_length\": %llu, "
        "\"in_service\": %d, \"queue_length\": %d}",
        i ? "," : "", op_name(static_cast<Op>(i)), (unsigned long long)c[i].count,
        (unsigned long long)c[i].bytes, (unsigned long long)c[i].pages,
        c[i].declared_service_ns / 1e3, c[i].service_ns / 1e3, c[i].queue_ns / 1e3,
        c[i].max_service_ns / 1e3, c[i].max_queue_ns / 1e3,
        (unsigned long long)c[i].max_in_service, (unsigned long long)c[i].max_queue_length,
        in_svc[i], queued[i]);
    out += buf;
  }
  out += "\n }}";
  return out;
}

}  // namespace emussd
