// Shared definitions: errors and the deterministic random number generator.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "artifact/rng.h"

namespace cave {

// A bad command line or option value: `cave` prints "cave: error: ..." and exits with 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failure while running (I/O error, malformed input file, ...): exit status 1.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// xoshiro256** seeded by SplitMix64 (systems/common/include/artifact/rng.h): the graph generators
// and the random walks.
using Rng = artifact::Xoshiro256;

std::string errno_text(int err);

}  // namespace cave
