// The FUSE glue: a pass-through file system over the backing directory whose
// reads and writes are served by the device model.
#pragma once

#include <string>

#include "artifact/device_model.h"
#include "options.h"

namespace emussd {

// The name of the read-only virtual file at the mount root with the counters.
inline constexpr const char* kStatsName = ".emussd_stats";

// Mounts, serves until unmounted (fusermount3 -u, SIGINT, SIGTERM, SIGHUP),
// unmounts and writes the final stats to opts.stats_out. Returns the exit code.
int run_fuse(const Options& opts, DeviceModel& model);

// The counters JSON with the declared parameters, the mount, uptime and CPU use.
std::string full_stats_json(const Options& opts, const DeviceModel& model, int64_t start_ns);

}  // namespace emussd
