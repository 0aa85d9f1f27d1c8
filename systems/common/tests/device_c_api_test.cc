// The device model's C API (libartifact_device.so): creation and its refusals, and serve() from
// many threads at once, as fio's jobs and Python's threads call it. The schedule itself is tested
// in device_model_test.cc; here only what holds on any machine: never early, every request counted.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "artifact/device.h"

namespace {

TEST(DeviceCApi, RefusesWhatEmussdRefusesAndSaysWhy) {
  char error[256] = "";
  EXPECT_EQ(artifact_device_create(0, 1, 1, 1, 4096, 1, error, sizeof error), nullptr);
  EXPECT_NE(std::string(error).find("read_latency_us"), std::string::npos) << error;
  EXPECT_EQ(artifact_device_create(100, 1, 0, 1, 4096, 1, error, sizeof error), nullptr);
  EXPECT_EQ(artifact_device_create(100, 1, 1, 4097, 4096, 1, error, sizeof error), nullptr);
  EXPECT_EQ(artifact_device_create(100, 1, 1, 1, 3000, 1, error, sizeof error), nullptr);
  EXPECT_EQ(artifact_device_create(100, 1, 1, 1, 4096, 0.5, error, sizeof error), nullptr);
  EXPECT_EQ(artifact_device_create(1e6, 1, 1, 1, 4096, 100, error, sizeof error), nullptr);  // 100 s per read
  EXPECT_EQ(artifact_device_create(100, 1, 1, 1, 4096, 1, nullptr, 0) == nullptr, false);    // error may be NULL
}

TEST(DeviceCApi, ParsesTheSpecOfEmussdModel) {
  char error[256] = "";
  for (const char* bad : {"", "alpha=2,k_r=1,k_w=1", "read_latency_us=100,alpha=2,k_r=1.5,k_w=1",
                          "read_latency_us=100,alpha=2,k_r=1,k_w=1,speed=3", "read_latency_us=100,alpha=x,k_r=1,k_w=1",
                          "read_latency_us=100,alpha=2,k_r=1,k_w=1,", "read_latency_us=100,alpha=2,k_r=1,k_w=5000",
                          "read_latency_us=100,alpha=2,k_r=1,k_w=1,k_r=2"}) {
    EXPECT_EQ(artifact_device_from_spec(bad, error, sizeof error), nullptr) << bad;
    EXPECT_NE(error[0], '\0') << bad;
  }
  EXPECT_EQ(artifact_device_from_spec(nullptr, error, sizeof error), nullptr);
  artifact_device* d = artifact_device_from_spec(
      "k_w=4,alpha=2.5,read_latency_us=2000,k_r=8,page_size=8192,time_dilation=3", error, sizeof error);
  ASSERT_NE(d, nullptr) << error;
  std::vector<char> json(artifact_device_stats_json(d, nullptr, 0));
  artifact_device_stats_json(d, json.data(), json.size());
  const std::string text(json.data());
  for (const char* field : {"\"read_latency_us\": 2000.000", "\"alpha\": 2.5", "\"k_r\": 8", "\"k_w\": 4",
                            "\"page_size\": 8192", "\"time_dilation\": 3"})
    EXPECT_NE(text.find(field), std::string::npos) << field << " in " << text;
  artifact_device_destroy(d);
}

TEST(DeviceCApi, ServesFromManyThreadsAtOnceNeverEarly) {
  // 16 threads, 4 reads each, on k_r = 4 at 200 us: 64 reads take at least 16 service times.
  artifact_device* d = artifact_device_create(200, 3, 4, 2, 4096, 1, nullptr, 0);
  ASSERT_NE(d, nullptr);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  const int64_t t0 = artifact_device_now_ns();
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      while (!go) std::this_thread::yield();
      for (int i = 0; i < 4; ++i) EXPECT_EQ(artifact_device_serve(d, ARTIFACT_DEVICE_READ, 4096, 0), 0);
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  EXPECT_GE(artifact_device_now_ns() - t0, 16 * 200'000);
  uint64_t count = 0, bytes = 0, pages = 0, overruns = 0;
  ASSERT_EQ(artifact_device_counters(d, ARTIFACT_DEVICE_READ, &count, &bytes, &pages, &overruns), 0);
  EXPECT_EQ(count, 64u);
  EXPECT_EQ(bytes, 64u * 4096);
  EXPECT_EQ(pages, 64u);
  ASSERT_EQ(artifact_device_counters(d, ARTIFACT_DEVICE_WRITE, &count, nullptr, nullptr, nullptr), 0);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(artifact_device_serve(d, 7, 4096, 0), -1);
  EXPECT_EQ(artifact_device_counters(d, 7, &count, nullptr, nullptr, nullptr), -1);
  artifact_device_destroy(d);
}

TEST(DeviceCApi, AnIoSlowerThanTheServiceTimeIsAnOverrunNotAnAddition) {
  // The caller's I/O took 5 ms since its arrival, longer than the 1 ms read: it replies at once.
  artifact_device* d = artifact_device_create(1000, 1, 1, 1, 4096, 1, nullptr, 0);
  ASSERT_NE(d, nullptr);
  artifact_device_serve(d, ARTIFACT_DEVICE_READ, 4096, artifact_device_now_ns() - 5'000'000);
  uint64_t overruns = 0;
  artifact_device_counters(d, ARTIFACT_DEVICE_READ, nullptr, nullptr, nullptr, &overruns);
  EXPECT_EQ(overruns, 1u);
  artifact_device_destroy(d);
}

}  // namespace
