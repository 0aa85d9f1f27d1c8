// SplitMix64 (Steele, Lea and Flood 2014, as in Vigna's reference code): a fixed
// generator implemented here, so that the same seed gives the same numbers with every
// compiler and standard library (std:: distributions are not specified bit for bit).
#pragma once

#include <cstdint>

namespace acesim {

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

  // Uniform in [0, n) for n > 0, by multiply-high (Lemire), no modulo bias worth noting.
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  uint64_t state_;
};

}  // namespace acesim
