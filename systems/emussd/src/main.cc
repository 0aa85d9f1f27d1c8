// emussd: an emulated SSD with declared latency, asymmetry and concurrency.
#include <sys/prctl.h>

#include <cstdio>
#include <string>
#include <vector>

#include "device_model.h"
#include "fs.h"
#include "options.h"

int main(int argc, char** argv) {
  using namespace emussd;
  Options opts;
  std::string error;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!parse_args(args, opts, error)) {
    std::fprintf(stderr, "emussd: error: %s\n", error.c_str());
    return 2;
  }
  if (opts.help) {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  if (opts.check) {  // the "params" of the stats, for callers that check a declaration
    std::printf("%s\n", DeviceModel(opts.params).params_json().c_str());
    return 0;
  }
  if (!check_fuse_available(error)) {
    std::fprintf(stderr, "emussd: error: %s\n", error.c_str());
    return 3;
  }
  if (!check_paths(opts, error)) {
    std::fprintf(stderr, "emussd: error: %s\n", error.c_str());
    return 2;
  }
  // Threads inherit the timer slack of their creator: lower it before
  // libfuse starts its workers (the model lowers it again per thread).
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  DeviceModel model(opts.params);
  return run_fuse(opts, model);
}
