// The device parameters the model's tests build their devices from.
#pragma once

#include "artifact/device_model.h"

namespace artifact {

inline DeviceParams params(double lat_us, double alpha, int k_r, int k_w, int channels = 0, double dilation = 1.0) {
  DeviceParams p;
  p.read_latency_us = lat_us;
  p.alpha = alpha;
  p.k_r = k_r;
  p.k_w = k_w;
  p.channels = channels;
  p.time_dilation = dilation;
  return p;
}

}  // namespace artifact
