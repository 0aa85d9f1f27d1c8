// Lab 4: a migration policy for drifting workloads, as a plug-in of ReStore's tier simulator.
//
// The simulator (systems/restore) serves each request from the tier that holds the page (tier 0
// is the fastest) and then calls your policy's access(). Your policy may move pages between
// neighbouring tiers; every move costs a read on one tier and a write on the other, issued at
// once. The interface is restore::Policy in systems/restore/src/policy.h, the one the simulator's
// own Static, tLFU, tLRU, LRFU, EXD, TEMP and ReStore implement; restore::HeapPolicy (same file)
// adds what most policies need: a key per page, each tier's lowest-keyed page, and promote().
//
// This starter never migrates: it compiles, runs and is valid. Make it adapt where the TODOs say.
#include "policy.h"

#include <vector>

namespace {

class StudentPolicy : public restore::HeapPolicy {
 public:
  StudentPolicy(const std::vector<restore::TierSpec>& tiers, uint32_t pages, const restore::PolicyParams&)
      : HeapPolicy(tiers, pages) {
    // TODO: every page's starting key (set_key(page, key, tie)); 0 for all of them by default.
  }

  // One request for `page` (a read or a write) at request index `now` (0, 1, 2, ...), after it was
  // served from tier_of(page). Report every page you move in `moves`: promote(page, moves) moves a
  // page one tier up and, when that tier is full, its lowest-keyed page down into the slot.
  void access(uint32_t page, restore::Op /*op*/, uint64_t now, restore::QueueProbe& /*probe*/,
              std::vector<restore::Move>& moves) override {
    // TODO: update the page's key (set_key) so that it says how likely the page is to be requested
    // soon: the workload's hot set changes from phase to phase.
    // TODO: decide whether the page should move up: when the faster tier has room, or when the
    // page is worth more than the faster tier's lowest page (key(lowest(tier_of(page) - 1))).
    // Each swap costs four I/Os: move only when it pays.
    (void)page;
    (void)now;
    (void)moves;
  }
};

}  // namespace

// --policy student
RESTORE_REGISTER_POLICY("student", StudentPolicy);
