// The FUSE glue: a pass-through file system over the backing directory whose
// reads and writes are served by the device model.
#pragma once

#include <string>

#include "device_model.h"
#include "options.h"

namespace emussd {

// The name of the read-only virtual file at the mount root with the counters.
inline constexpr const char* kStatsName = ".emussd_stats";

// Mounts, serves until unmounted (fusermount3 -u, SIGINT, SIGTERM, SIGHUP),
// unmounts and writes the final stats to opts.stats_out. Returns the exit code.
int run_fuse(const Options& opts, DeviceModel& model);

// The counters JSON with the declared parameters, the mount, uptime and CPU use.
std::string full_stats_json(const Options& opts, const DeviceModel& model, int64_t start_ns);

// Writes `text` to `path` atomically (temporary file in the same directory,
// fsync, rename), so a reader never sees a half-written file.
bool write_file_atomically(const std::string& path, const std::string& text, std::string& error);

}  // namespace emussd
