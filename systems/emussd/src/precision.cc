// emussd_precision: how late does an absolute clock_nanosleep wake up here?
// This is the error emussd adds to every emulated service time. Prints one
// JSON object per (timer slack, threads, duration) with overshoot quantiles.
//
// usage: emussd_precision [--samples N] [--threads T] [--durations-us 50,100,...]
#include <sys/prctl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "artifact/device_model.h"

namespace {

// Each of `threads` threads sleeps `samples` times for `duration_ns` (like
// concurrent requests in service) and records how late it woke up.
std::vector<int64_t> measure(int64_t duration_ns, int samples, int threads, bool low_slack) {
  std::vector<std::vector<int64_t>> per(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      prctl(PR_SET_TIMERSLACK, low_slack ? 1UL : 50000UL, 0, 0, 0);
      per[t].reserve(samples);
      for (int i = 0; i < samples; ++i) {
        const int64_t deadline = artifact::now_ns() + duration_ns;
        artifact::sleep_until_ns(deadline);
        per[t].push_back(artifact::now_ns() - deadline);
      }
    });
  }
  for (auto& th : pool) th.join();
  std::vector<int64_t> all;
  for (auto& v : per) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  return all;
}

double quantile_us(const std::vector<int64_t>& sorted, double q) {
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(q * (sorted.size() - 1) + 0.5));
  return sorted[i] / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 2000;
  std::vector<int> thread_counts = {1, 16};
  std::vector<int64_t> durations_us = {20, 50, 100, 200, 500, 1000, 2000};
  auto parse_list = [](const char* s) {
    std::vector<int64_t> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(std::atoll(item.c_str()));
    return out;
  };
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--samples") && i + 1 < argc) {
      samples = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      thread_counts.clear();
      for (auto v : parse_list(argv[++i])) thread_counts.push_back(static_cast<int>(v));
    } else if (!std::strcmp(argv[i], "--durations-us") && i + 1 < argc) {
      durations_us = parse_list(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: emussd_precision [--samples N] [--threads 1,16] "
                   "[--durations-us 20,50,...]\n");
      return 2;
    }
  }
  if (samples < 1) return 2;
  for (const bool low_slack : {false, true}) {
    for (const int threads : thread_counts) {
      for (const int64_t d : durations_us) {
        const auto s = measure(d * 1000, samples, threads, low_slack);
        std::printf(
            "{\"timer_slack_ns\": %d, \"threads\": %d, \"duration_us\": %lld, \"samples\": %zu, "
            "\"overshoot_us\": {\"min\": %.1f, \"median\": %.1f, \"p90\": %.1f, \"p99\": %.1f, "
            "\"max\": %.1f}}\n",
            low_slack ? 1 : 50000, threads, static_cast<long long>(d), s.size(), quantile_us(s, 0), quantile_us(s, 0.5),
            quantile_us(s, 0.9), quantile_us(s, 0.99), s.back() / 1e3);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
