// Virtual-time FIFO multi-server queues. Jobs must be submitted in nondecreasing arrival
// time (the simulator guarantees it); a job takes the server that frees first, so start times
// are nondecreasing too and a job's start and finish are known when it is submitted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "model.h"

namespace restore {

// A growable ring of doubles (start times of submitted jobs, oldest first).
class DoubleRing {
 public:
  DoubleRing() : buf_(16) {}
  void push(double v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    size_++;
  }
  double front() const { return buf_[head_]; }
  void pop() {
    head_ = (head_ + 1) & (buf_.size() - 1);
    size_--;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t memory_bytes() const { return buf_.capacity() * sizeof(double); }

 private:
  void grow() {
    std::vector<double> next(buf_.size() * 2);
    for (size_t i = 0; i < size_; i++) next[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(next);
    head_ = 0;
  }
  std::vector<double> buf_;
  size_t head_ = 0, size_ = 0;
};

class FifoPool {
 public:
  explicit FifoPool(int servers) : free_(static_cast<size_t>(servers), 0.0) {
    if (servers < 1) throw std::invalid_argument("a pool needs at least one server");
  }

  // Submits a job arriving at `t` needing `service`; returns its finish time.
  double submit(double t, double service) {
    // free_ is a min-heap of the servers' next free times.
    std::pop_heap(free_.begin(), free_.end(), std::greater<>());
    double start = std::max(t, free_.back());
    double finish = start + service;
    free_.back() = finish;
    std::push_heap(free_.begin(), free_.end(), std::greater<>());
    if (start > t) pending_.push(start);
    busy_until_ = std::max(busy_until_, finish);
    jobs_++;
    busy_time_ += service;
    return finish;
  }

  // Jobs submitted before or at `t` that have not started by `t` (the FIFO queue's length).
  uint64_t queued(double t) {
    while (!pending_.empty() && pending_.front() <= t) pending_.pop();
    return pending_.size();
  }

  double busy_until() const { return busy_until_; }
  uint64_t jobs() const { return jobs_; }
  double busy_time() const { return busy_time_; }
  int servers() const { return static_cast<int>(free_.size()); }

 private:
  std::vector<double> free_;
  DoubleRing pending_;  // start times of jobs that had to wait, in FIFO order
  double busy_until_ = 0;
  uint64_t jobs_ = 0;
  double busy_time_ = 0;
};

// One tier's device: a shared pool, or a read pool and a write pool.
class TierDevice {
 public:
  TierDevice(const TierSpec& spec, ServerModel model)
      : spec_(spec), model_(model), read_(spec.k_r), write_(model == ServerModel::kSplit ? spec.k_w : 1) {}

  double submit(double t, Op op) {
    FifoPool& pool = (model_ == ServerModel::kSplit && op == Op::kWrite) ? write_ : read_;
    return pool.submit(t, spec_.service_us(op));
  }
  uint64_t queued(double t) {
    return model_ == ServerModel::kSplit ? read_.queued(t) + write_.queued(t) : read_.queued(t);
  }
  double busy_until() const { return std::max(read_.busy_until(), write_.busy_until()); }

 private:
  TierSpec spec_;
  ServerModel model_;
  FifoPool read_;   // the shared pool in kShared
  FifoPool write_;  // unused in kShared
};

}  // namespace restore
