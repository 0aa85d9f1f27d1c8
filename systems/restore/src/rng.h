// SplitMix64 (Steele, Lea and Flood 2014, as in Vigna's reference code), the same fixed
// generator as systems/ace/sim: the same seed gives the same numbers with every compiler and
// standard library (std:: distributions are not specified bit for bit).
#pragma once

#include <cmath>
#include <cstdint>

namespace restore {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1): the top 53 bits, exact in a double.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in [0, n) for n > 0, by multiply-high (Lemire).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

  // Exponential with the given mean (inverse transform; 1 - u is in (0, 1]).
  double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }

 private:
  uint64_t state_;
};

// A seed derived from a base seed and a stream number, so that independent streams
// (hot sets, operations, exploration) do not share numbers.
inline uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  SplitMix64 g(seed ^ (0xd1b54a32d192ed03ULL * (stream + 1)));
  return g.next();
}

}  // namespace restore
