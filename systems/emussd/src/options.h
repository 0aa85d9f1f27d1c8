// Command line of emussd, and the checks made before mounting.
#pragma once

#include <string>
#include <vector>

#include "artifact/device_model.h"

namespace emussd {

// The device model is the artifact's one (systems/common), shared with the library device.
using artifact::DeviceModel;
using artifact::DeviceParams;
using artifact::now_ns;
using artifact::Op;

struct Options {
  std::string backing;     // absolute path after validation
  std::string mountpoint;  // absolute path after validation
  std::string stats_out;   // empty: none
  bool foreground = false;
  bool debug = false;
  bool help = false;
  bool check = false;  // --check: validate and print the device parameters only
  DeviceParams params;
};

std::string usage();

// Parses and validates the arguments only (no file system access).
// On error returns false and sets `error` to what is wrong and what is allowed.
bool parse_args(const std::vector<std::string>& args, Options& opts, std::string& error);

// Checks the paths (backing is a directory; mount point exists, is empty and
// not a mount point; the two do not nest; the stats directory exists) and
// makes them absolute. On error returns false with a message saying what to do.
bool check_paths(Options& opts, std::string& error);

// Checks that /dev/fuse and fusermount3 are there, saying what to install or do.
bool check_fuse_available(std::string& error);

}  // namespace emussd
