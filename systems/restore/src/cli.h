// restore-sim's command line (README.md documents every option and output column).
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "artifact/command_line.h"
#include "simulator.h"
#include "workload.h"

namespace restore {

using artifact::InputError;

struct Options {
  SimConfig config;
  std::vector<std::string> policies = {"restore"};
  bool emulator = false;
  std::string workload = "5hf90";
  std::string trace;
  uint32_t pages = 10000;
  uint64_t requests = 1000000;  // synthetic: the count; trace: a limit (0 = whole trace)
  bool requests_given = false;
  double read_pct = 50;
  uint64_t seed = 1;
  std::vector<double> capacity_pct;      // one per tier, or
  std::vector<uint64_t> capacity_pages;  // one per tier
  uint64_t temp_timestep = 0;            // 0: pages / 10
  double cpu_us_per_access = -1;         // >= 0: modelled CPU time instead of the measured one
  bool temperature_demo = false;
  uint32_t demo_timesteps = 1000, demo_requests = 100;
  std::string out, grid;
  std::string dump_trace;  // write the workload as a page trace and run nothing
  std::string remote_fds;  // IN,OUT: the policy runs in another process (config.remote_in/out)
  bool help = false;
};

const char* usage();
// Parses and checks the arguments (without the program name); throws InputError. An option given
// twice takes its later value: a grid's row is the shared options followed by the row's own.
Options parse_args(const std::vector<std::string>& args);
std::string csv_header();

// Runs configurations, keeping traces in memory between them.
class Runner {
 public:
  std::string run(const Options& o);  // CSV rows (one per policy)

 private:
  std::map<std::string, Trace> traces_;
};

std::string temperature_demo(const Options& o);
int main_with_args(const std::vector<std::string>& args);

}  // namespace restore
