// The page temperature model of thesis §6.4.2 (L1904-1910, Fig 6.5).
//
//  * Increase: on a request, temperature = 1 - 0.5 * exp(-increase * req), where req is the
//    number of requests to the page in the last `window` timesteps (this one included). The
//    window count is the standard two-bucket sliding estimate: the count in the current
//    aligned window plus the previous window's count weighted by the part of it still inside
//    the sliding window (O(1) memory per page).
//  * Decrease: after every `drop_period` timesteps without a request the temperature drops
//    by `drop`, down to 0 (the lowest temperature).
//  * A never-requested page has temperature `initial` (0; the original code starts every page at
//    0.5, Run_TEMP.cpp L541-551, Run_RL.cpp L741-747) and drops as if requested at request 0.
//  * A timestep is `timestep` requests (the global request counter / timestep).
//
// Decreases are scheduled events (a FIFO: every event is due exactly drop_period timesteps
// after the timestep it is scheduled in), so the model never scans all pages; every change of
// a page's temperature is reported to a listener (the tiers' sums and heaps follow it exactly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace restore {

struct TemperatureParams {
  double increase = 0.2;     // thesis L1906: 1 - 0.5 / exp(0.2 * req)
  uint32_t window = 10;      // timesteps in the req window (original code: 1e4 requests = 10 x 1000)
  double drop = 0.05;        // thesis L1908: decrease 0.05 ...
  uint32_t drop_period = 5;  // ... after 5 timesteps without requests
  uint64_t timestep = 1000;  // requests per timestep (CLI default: pages / 10)
  double initial = 0.0;      // temperature of a page never requested (the original code: 0.5)
};

class TemperatureListener {
 public:
  virtual ~TemperatureListener() = default;
  virtual void temperature_changed(uint32_t page, double before, double after) = 0;
};

class TemperatureModel {
 public:
  TemperatureModel(uint32_t pages, const TemperatureParams& params, TemperatureListener* listener);

  // Processes the decreases due at request index `now` (call before touch() with the same now;
  // `now` never goes back).
  void advance(uint64_t now);
  // A request to `page` at request index `now`; returns the new temperature.
  double touch(uint32_t page, uint64_t now);

  double temperature(uint32_t page) const { return temp_[page]; }
  // Request index of the page's last request plus one (0: never requested).
  uint32_t last_stamp(uint32_t page) const { return last_[page]; }
  const TemperatureParams& params() const { return p_; }
  size_t memory_bytes() const;

  // The increasing branch, exposed for tests and Fig 6.4/6.5: 1 - 0.5 * exp(-increase * req).
  static double heat(double increase, double req);

 private:
  struct Event {
    uint32_t page;
    uint32_t stamp;
    uint64_t due;  // timestep
  };
  void push(const Event& e);

  TemperatureParams p_;
  TemperatureListener* listener_;
  std::vector<double> temp_;
  std::vector<uint32_t> last_;    // request index + 1 of the last request, 0 = never
  std::vector<uint32_t> bucket_;  // aligned window of cur_
  std::vector<uint32_t> cur_, prev_;
  std::vector<Event> ring_;
  size_t head_ = 0, size_ = 0;
};

}  // namespace restore
