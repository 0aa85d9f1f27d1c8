// The C API of the device model (artifact/device.h).
#include "artifact/device.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "artifact/device_model.h"

struct artifact_device {
  explicit artifact_device(const artifact::DeviceParams& p) : model(p) {}
  artifact::DeviceModel model;
};

namespace {

void say(const std::string& text, char* error, size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const size_t n = std::min(text.size(), error_size - 1);
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

artifact_device* make(const artifact::DeviceParams& p, char* error, size_t error_size) {
  const std::string problem = artifact::check_params(p);
  if (!problem.empty()) {
    say(problem, error, error_size);
    return nullptr;
  }
  auto* device = new (std::nothrow) artifact_device(p);
  if (device == nullptr) say("out of memory", error, error_size);
  return device;
}

bool known(int op) { return op == ARTIFACT_DEVICE_READ || op == ARTIFACT_DEVICE_WRITE; }

}  // namespace

extern "C" {

artifact_device* artifact_device_create(double read_latency_us, double alpha, int k_r, int k_w, int page_size,
                                        double time_dilation, char* error, size_t error_size) {
  artifact::DeviceParams p;
  p.read_latency_us = read_latency_us;
  p.alpha = alpha;
  p.k_r = k_r;
  p.k_w = k_w;
  p.page_size = page_size;
  p.time_dilation = time_dilation;
  return make(p, error, error_size);
}

artifact_device* artifact_device_from_spec(const char* spec, char* error, size_t error_size) {
  artifact::DeviceParams p;
  std::string problem;
  if (!artifact::parse_params(spec ? spec : "", p, problem)) {
    say(problem, error, error_size);
    return nullptr;
  }
  return make(p, error, error_size);
}

void artifact_device_destroy(artifact_device* device) { delete device; }

int64_t artifact_device_now_ns(void) { return artifact::now_ns(); }

int artifact_device_serve(artifact_device* device, int op, uint64_t bytes, int64_t arrival_ns) {
  if (!known(op)) return -1;
  const int64_t now = artifact::now_ns();
  device->model.charge(static_cast<artifact::Op>(op), bytes, arrival_ns > 0 ? arrival_ns : now, now);
  return 0;
}

size_t artifact_device_stats_json(const artifact_device* device, char* out, size_t size) {
  const std::string json = device->model.stats_json();
  if (out != nullptr && size > 0) {
    const size_t n = std::min(json.size(), size - 1);
    std::memcpy(out, json.data(), n);
    out[n] = '\0';
  }
  return json.size() + 1;
}

int artifact_device_counters(const artifact_device* device, int op, uint64_t* count, uint64_t* bytes, uint64_t* pages,
                             uint64_t* overruns) {
  if (!known(op)) return -1;
  const artifact::OpCounters c = device->model.counters(static_cast<artifact::Op>(op));
  if (count) *count = c.count;
  if (bytes) *bytes = c.bytes;
  if (pages) *pages = c.pages;
  if (overruns) *overruns = c.overruns;
  return 0;
}

}  // extern "C"
