// Lab 4, reference solution: a migration policy for drifting workloads, as a plug-in of ReStore's
// tier simulator (systems/restore/src/policy.h).
//
// A page's score is its recent popularity: each request adds 1, and the score halves every
// `half_life` requests (an exponentially decayed count), so a page that was hot in an earlier
// phase cools down in a few half-lives. A requested page moves one tier up when its score is at
// least `margin` times the score of the coldest page of the faster tier, which then moves down
// into its slot (HeapPolicy::promote); the margin keeps two pages of about the same score from
// swapping back and forth (every swap costs four I/Os).
//
// Scores are kept as log2(score) + t / half_life, referred to time 0: comparing two of them
// compares the scores now, and a request changes only the requested page's key.
#include "policy.h"

#include <cmath>
#include <limits>
#include <vector>

namespace {

class DecayedPopularity : public restore::HeapPolicy {
 public:
  DecayedPopularity(const std::vector<restore::TierSpec>& tiers, uint32_t pages, const restore::PolicyParams&)
      : HeapPolicy(tiers, pages), half_life_(std::max(1.0, 1.0 * pages)), margin_(std::log2(4.0)) {
    for (uint32_t p = 0; p < pages; p++) set_key(p, -std::numeric_limits<double>::infinity(), 0);
  }

  void access(uint32_t page, restore::Op, uint64_t now, restore::QueueProbe&,
              std::vector<restore::Move>& moves) override {
    const double t = static_cast<double>(now) / half_life_;
    const double score = std::exp2(key(page) - t);  // 0 for a page never requested
    set_key(page, std::log2(1.0 + score) + t, static_cast<uint32_t>(now));
    const int from = tier_of(page);
    if (from == 0) return;
    if (!full(from - 1) || key(page) >= key(lowest(from - 1)) + margin_) promote(page, moves);
  }

 private:
  double half_life_;  // requests
  double margin_;     // log2 of the factor a page must beat the coldest page of the faster tier by
};

}  // namespace

RESTORE_REGISTER_POLICY("student", DecayedPopularity);
