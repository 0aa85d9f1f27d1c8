// The command line, the grid mode and the CSV row (README.md documents them).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "simulator.h"
#include "workload.h"

namespace acesim {

struct Options {
  Config config;
  std::string trace;
  std::string trace_format = "pg";
  bool pg_repins = true;  // a pg trace's re-pins leave the policy alone
  bool synthetic = false;
  Synthetic workload;
  std::string out;     // empty: stdout
  std::string io_log;  // empty: none (Simulator::set_io_log)
  std::string grid;    // a CSV of configurations, one per row
  // --remote-fds IN,OUT: the policy runs in another process (remote_policy.h), asked over these
  bool remote = false;
  int remote_in = -1, remote_out = -1;
  bool help = false;
};

// Parses and checks the arguments (without the program name); throws InputError. An option given
// twice takes its later value: a grid's row is the shared options followed by the row's own.
Options parse_args(const std::vector<std::string>& args);

std::string csv_header();
std::string csv_row(const Options& o, const Simulator& sim);

// Runs one configuration; traces are read once per (path, format) across calls.
class Runner {
 public:
  std::string run(const Options& o);

 private:
  std::map<std::pair<std::string, std::string>, std::shared_ptr<std::vector<Op>>> traces_;
};

int main_with_args(const std::vector<std::string>& args);
const char* usage();

}  // namespace acesim
