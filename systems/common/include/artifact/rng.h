// The random number generators of the simulators and of CAVE, implemented here so that the same
// seed gives the same numbers with every compiler and standard library (std:: distributions are
// not specified bit for bit). Outputs are checksummed byte for byte (checksums/*.sha256): a change
// to any sequence below changes them; tests/rng_test.cc pins reference values.
#pragma once

#include <cmath>
#include <cstdint>

namespace artifact {

// One step of SplitMix64 (Steele, Lea and Flood 2014, as in Vigna's reference code).
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// SplitMix64 as a generator: ace-sim's synthetic workload and ExpCache, restore-sim's workloads,
// arrivals and exploration.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() { return splitmix64(state_); }

  // Uniform in [0, 1): the top 53 bits, exact in a double.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in [0, n) for n > 0, by multiply-high (Lemire), without rejection: a bias of at most
  // n / 2^64, not worth a loop.
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }

  // Exponential with the given mean (inverse transform; 1 - u is in (0, 1]).
  double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }

 private:
  uint64_t state_;
};

// A seed derived from a base seed and a stream number, so that independent streams (hot sets,
// operations, exploration) do not share numbers.
inline uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  SplitMix64 g(seed ^ (0xd1b54a32d192ed03ULL * (stream + 1)));
  return g.next();
}

// xoshiro256** (Blackman and Vigna 2018), seeded by SplitMix64: CAVE's graph generators and
// random walks.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed = 1) {
    uint64_t sm = seed;
    for (auto& w : s_) w = splitmix64(sm);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1): the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in [0, n) for n > 0 (Lemire's multiply-shift with rejection: unbiased).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace artifact
