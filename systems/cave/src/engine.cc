#include "engine.h"

#include <algorithm>

#include "common.h"

namespace cave {

Graph::Graph(const std::string& path, IoEngine engine, Counters& counters) : counters_(counters) {
  device_ = open_device(path, engine, counters);
  header_ = read_header(device_->fd(), path);
  vertices_ = read_vertices(device_->fd(), header_);
  check_ = std::make_unique<EdgeCheck>(header_, vertices_);
}

uint32_t Graph::make_cache(uint32_t slots) {
  slots = std::max<uint32_t>(1, std::min(slots, std::max<uint32_t>(1, edge_blocks())));
  cache_ =
      std::make_unique<ClockCache>(slots, edge_blocks(), *device_, header_.edge_region_block, counters_,
                                   [check = check_.get()](uint32_t b, const uint32_t* data) { (*check)(b, data); });
  return slots;
}

Pool::Pool(unsigned threads) {
  if (threads == 0) threads = 1;
  for (unsigned t = 0; t < threads; ++t) threads_.emplace_back([this, t] { worker(t); });
}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> g(m_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void Pool::parallel_for(size_t count, const std::function<void(size_t, unsigned)>& fn) {
  if (count == 0) return;
  if (count == 1) {
    fn(0, 0);
    return;
  }
  std::unique_lock<std::mutex> lock(m_);
  job_ = &fn;
  count_ = count;
  // Small grains keep every worker (= every concurrent I/O) busy to the end of a level.
  grain_ = std::clamp<size_t>(count / (size_t{threads_.size()} * 64), 1, 64);
  next_.store(0);
  error_ = nullptr;
  running_ = size();
  ++generation_;
  start_cv_.notify_all();
  done_cv_.wait(lock, [this] { return running_ == 0; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void Pool::worker(unsigned tid) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(size_t, unsigned)>* job;
    size_t count, grain;
    {
      std::unique_lock<std::mutex> lock(m_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      count = count_;
      grain = grain_;
    }
    try {
      for (;;) {
        const size_t i = next_.fetch_add(grain, std::memory_order_relaxed);
        if (i >= count) break;
        const size_t end = std::min(count, i + grain);
        for (size_t j = i; j < end; ++j) (*job)(j, tid);
      }
    } catch (...) {
      std::lock_guard<std::mutex> g(m_);
      if (!error_) error_ = std::current_exception();
      next_.store(count);
    }
    std::lock_guard<std::mutex> g(m_);
    if (--running_ == 0) done_cv_.notify_one();
  }
}

void BlockTasks::finish() {
  std::sort(keys.begin(), keys.end());
  starts.clear();
  for (size_t i = 0; i < keys.size(); ++i)
    if (i == 0 || (keys[i] >> 32) != (keys[i - 1] >> 32)) starts.push_back(i);
  starts.push_back(keys.size());
  if (keys.empty()) starts.clear();
}

}  // namespace cave
