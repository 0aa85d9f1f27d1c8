// An emulated SSD inside the engine (`cave run --emulate SPEC`): each block read of the io engines
// is charged to the artifact's device model (systems/common/include/artifact/device_model.h), as
// emussd charges it on a FUSE mount, so that CAVE runs on a device of declared latency and k_r
// without FUSE or privileges. The model lives in device.cc with internal linkage: this header
// only starts it, once, and no header a plug-in traversal includes reaches it.
#pragma once

#include <string>

namespace cave {

// Starts emulating the device of `spec`, emussd's EMUSSD_MODEL form
// ("read_latency_us=2000,alpha=1,k_r=8,k_w=1[,page_size=4096][,time_dilation=D]"), for every block
// read from then on. Once per process (cave run starts it before opening the graph): throws
// UsageError for a bad spec and RuntimeError when it was already started, so that code running
// before or after the command line (a plug-in's static initializer, a traversal) cannot change it.
void start_emulation(const std::string& spec);

// The emulated device's counters as JSON (emussd's .emussd_stats), "" when there is none.
std::string emulation_stats();

}  // namespace cave
