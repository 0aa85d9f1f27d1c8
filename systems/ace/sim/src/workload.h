// Inputs: a page trace (the patched PostgreSQL's buffer_trace_file, or "R <page>" /
// "W <page>" lines) or the seeded synthetic generator of the thesis's workloads.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "artifact/command_line.h"
#include "simulator.h"

namespace acesim {

// Bad input (arguments, files): reported on stderr, exit status 2.
using artifact::InputError;

struct Op {
  // kDirty: PostgreSQL's W (not an access). kRepin: an R line that repeats the previous R
  // line of the same process, which PostgreSQL serves from the pin the process holds.
  enum Kind : uint8_t { kRead, kWrite, kDirty, kRepin };
  uint64_t page;
  uint32_t pid;
  Kind kind;
};

// pg: "pid,tablespace,database,relfilenode,fork,block,op" with op R or W. Each relation
// fork (tablespace, database, relfilenode, fork) gets a number in order of appearance.
// An R line on the page of the same process's previous R line is a re-pin (kRepin).
// simple: "R <page>" or "W <page>", one relation. Blank lines are skipped.
std::vector<Op> read_trace(const std::string& path, const std::string& format);

struct Synthetic {
  uint64_t ops = 0;
  uint64_t pages = 0;
  double read_pct = 50;  // thesis Table 4.2, MS
  double hot_ops_pct = 90;
  double hot_pages_pct = 10;
  uint64_t seed = 1;
};

// Each op draws, from SplitMix64(seed): u1, a read if 100 * u1 < read_pct; u2, in the hot
// region if 100 * u2 < hot_ops_pct; then a page uniform in the hot region (the first
// floor(pages * hot_pages_pct / 100) pages) or in the rest (an empty region gives way to
// the other).
class SyntheticGenerator {
 public:
  explicit SyntheticGenerator(const Synthetic& spec);
  Op next();

 private:
  Synthetic spec_;
  uint64_t hot_;
  SplitMix64 rng_;
};

// A trace's relation forks are as large as the largest block it requests from each, plus one.
std::vector<uint32_t> relation_sizes(const std::vector<Op>& ops);

// Feed the ops to the simulator (which learns relation_sizes first); with `repins`, a kRepin is a hit that leaves the
// policy alone (PinBuffer counts a use only on a process's first pin), else a plain access.
void replay(Simulator& sim, const std::vector<Op>& ops, bool repins = true);
void replay(Simulator& sim, const Synthetic& spec);

}  // namespace acesim
