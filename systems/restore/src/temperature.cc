#include "temperature.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace restore {

TemperatureModel::TemperatureModel(uint32_t pages, const TemperatureParams& params, TemperatureListener* listener)
    : p_(params),
      listener_(listener),
      temp_(pages, params.initial),
      last_(pages, 0),
      bucket_(pages, 0),
      cur_(pages, 0),
      prev_(pages, 0),
      ring_(1024) {
  if (p_.timestep == 0 || p_.window == 0 || p_.drop_period == 0)
    throw std::invalid_argument("temperature timestep, window and drop period must be at least 1");
  if (p_.initial < 0.0 || p_.initial >= 1.0) throw std::invalid_argument("initial temperature must be in [0, 1)");
  // Never-requested pages (stamp 0) cool from timestep 0, like the original's last request round 0.
  if (p_.initial > 0.0)
    for (uint32_t page = 0; page < pages; page++) push(Event{page, 0, p_.drop_period});
}

double TemperatureModel::heat(double increase, double req) { return 1.0 - 0.5 * std::exp(-increase * req); }

void TemperatureModel::push(const Event& e) {
  if (size_ == ring_.size()) {
    std::vector<Event> next(ring_.size() * 2);
    for (size_t i = 0; i < size_; i++) next[i] = ring_[(head_ + i) & (ring_.size() - 1)];
    ring_.swap(next);
    head_ = 0;
  }
  ring_[(head_ + size_) & (ring_.size() - 1)] = e;
  size_++;
}

void TemperatureModel::advance(uint64_t now) {
  const uint64_t step = now / p_.timestep;
  while (size_ > 0 && ring_[head_].due <= step) {
    Event e = ring_[head_];
    head_ = (head_ + 1) & (ring_.size() - 1);
    size_--;
    if (last_[e.page] != e.stamp) continue;  // requested again since: stale
    double before = temp_[e.page];
    double after = std::max(0.0, before - p_.drop);
    if (after < 1e-12) after = 0.0;  // 0.05 steps do not sum exactly in binary
    temp_[e.page] = after;
    if (listener_ && after != before) listener_->temperature_changed(e.page, before, after);
    if (after > 0) push(Event{e.page, e.stamp, e.due + p_.drop_period});
  }
}

double TemperatureModel::touch(uint32_t page, uint64_t now) {
  const uint64_t window_requests = static_cast<uint64_t>(p_.window) * p_.timestep;
  const uint32_t b = static_cast<uint32_t>(now / window_requests);
  if (last_[page] == 0 || bucket_[page] != b) {
    prev_[page] = (last_[page] != 0 && bucket_[page] + 1 == b) ? cur_[page] : 0;
    cur_[page] = 0;
    bucket_[page] = b;
  }
  cur_[page]++;
  double into =
      static_cast<double>(now - static_cast<uint64_t>(b) * window_requests) / static_cast<double>(window_requests);
  double req = cur_[page] + prev_[page] * (1.0 - into);
  double before = temp_[page];
  double after = heat(p_.increase, req);
  temp_[page] = after;
  last_[page] = static_cast<uint32_t>(now + 1);
  if (listener_ && after != before) listener_->temperature_changed(page, before, after);
  push(Event{page, last_[page], now / p_.timestep + p_.drop_period});
  return after;
}

size_t TemperatureModel::memory_bytes() const {
  return temp_.capacity() * sizeof(double) +
         (last_.capacity() + bucket_.capacity() + cur_.capacity() + prev_.capacity()) * sizeof(uint32_t) +
         ring_.capacity() * sizeof(Event);
}

}  // namespace restore
