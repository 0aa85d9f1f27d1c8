// The migration policies of thesis Chapter 6 (L1928-1954, L2000): Static (the oracle placement),
// tLFU, tLRU, LRFU, EXD, TEMP and ReStore. All adaptive policies promote a requested page by one
// tier (towards tier 0, the fastest) and, when the faster tier is full, demote that tier's
// lowest-scored page into the slot the promoted page left (a swap, so demotions never cascade).
// When the faster tier has room the promotion is unconditional.
//
// Policy is also the plug-in interface: every policy, built in or not, is found by name in one
// registry (--policy NAME). A plug-in is a .cc file linked into restore-sim (CMake's
// RESTORE_PLUGINS; lab 4 of labs/ builds students' policies this way) that registers its class
// with RESTORE_REGISTER_POLICY. The engines check every migration a policy reports and every
// placement it keeps (PlacementCheck).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "artifact/rng.h"
#include "model.h"
#include "rl.h"
#include "temperature.h"

namespace restore {

using artifact::derive_seed;
using artifact::SplitMix64;

// The four policies of ScorePolicy.
enum class ScoreKind { kTlfu, kTlru, kLrfu, kExd };

struct RlParams {
  TdParams td;
  uint32_t step = 100;        // requests per TD state step (original RL_update_freqs = 100)
  uint32_t fit_window = 500;  // membership fit: last 500 observations (original code)
  uint32_t fit_every = 4;     // refit every 4 observations (the original refits at each, below)
  // When the state is observed for the fit: 0, the two tiers' states at each decision and every
  // tier's at each TD step; N, every tier's once every N requests (the original code: N = 4,
  // a_b_update_freq_s1/s2, Run_RL.cpp L535-536 and L1445-1648, refitting at each observation,
  // so fit_every = 1: about 500 observations over 2,000 requests).
  uint32_t observe_every = 0;
  double b_scale = 10.0;  // b = 10 / range (thesis L1847)
  // The centre x-bar of the memberships: the mean of the window (the thesis's "expected value of
  // x_j", L1847), or its midrange (max + min) / 2 (the original code, Run_RL.cpp L1558, L1569).
  enum class Centre { kMean, kMidrange };
  Centre centre = Centre::kMean;
  // The floor of range(x), so that a constant input gives a steep but finite sigmoid: kSmall,
  // 1e-3 for s1 and the s2 of 1e-3 queued tasks; kOriginal, 0.1 / pages for s1 and the s2 of 2
  // queued tasks (Run_RL.cpp L1562, L1570).
  enum class Floor { kSmall, kOriginal };
  Floor floor = Floor::kSmall;
  // The fit before any observation: kEmpty, memberships centred at s1 = 0.5 (range 1) and s2 = 0
  // (range one queued task), empty windows; kOriginal, each window starts with the observation
  // s1 = 0.5, s2 = the s2 of 1 queued task, fitted at once (Run_RL.cpp L774-785, L816-821).
  enum class Start { kEmpty, kOriginal };
  Start start = Start::kEmpty;
  Basis basis = Basis::kProduct;  // rl.h: the thesis's product rules or the original's memberships
  // Eq. 6.4's compared quantity (see README): kMean weights each tier's v by its mean temperature
  // s1 ("the sum of their multiplication", L1877; the released code's commented-out variant
  // cost * state[0]), kTotal by its total temperature |K| s1, kPlain is Eq. 6.4 as printed.
  // kReleased is the released code's active rule (Run_RL.cpp, the two `left <= right` tests):
  // upgrade iff C_j,not + C_i,up >= C_j,up + C_i,not in costs (its own values are minus costs, as
  // its reward is negative, so there it reads `<=`), with its post-upgrade states (K moved alone,
  // no victim; two more queued tasks on each tier), and its zero rule: when either tier's present
  // cost is exactly 0 the four are taken as 0, so the page is upgraded.
  enum class Decision { kMean, kTotal, kPlain, kReleased };
  Decision decision = Decision::kMean;
  // The reward R_n of the TD update: kMeasured, the mean discounted response time of the tier's
  // requests (L1900); kModel, Eq. 6.1's model-based cost as the released code computes it, one
  // value for every agent: (1 / pages) sum_t 0.5 (r_t + alpha_t r_t) |K_t| e^{(1 + s1_t) / 2}
  // (Run_RL.cpp, reward_from_avgtemp; there negated, a reward).
  enum class Reward { kMeasured, kModel };
  Reward reward = Reward::kMeasured;
  // The TD transition: kSteps, a semi-Markov step every `step` requests (Eq. 6.5-6.6); kRequest,
  // the released code's: on a due request (the first `init_rounds` after the first access outside
  // Tier 1, then every `step`-th) the transition from the state before that request to the state
  // after its decision and moves, tau = 1 (Run_RL.cpp, the two `RL_start_update` blocks). Needs
  // the model reward (no response is known within one request).
  enum class Transition { kSteps, kRequest };
  Transition transition = Transition::kSteps;
  std::vector<double> epsilon = {0.0, 0.005};  // exploration per tier pair (original code)
  // What exploration does, with probability epsilon: flip a coin between the two actions, or
  // upgrade (the original code: `left <= right || rand < epsilon`).
  enum class Explore { kCoin, kUpgrade };
  Explore explore = Explore::kCoin;
  // Warm-up: a TD step at every request for this many requests after the first access outside
  // Tier 1, besides the steps every `step` requests (the original code's RL_init_rounds, 20).
  uint32_t init_rounds = 0;
};

struct PolicyParams {
  double lrfu_lambda = 0.32192809488736235;  // F(x) = 2^{-lambda x}: 2^{-lambda} = 0.8 (original)
  double exd_alpha = 2e-8;                   // S = 1 + S e^{-alpha dt} (original alpha_exd)
  TemperatureParams temp;
  // TEMP's admission: to enter tier t (fastest first) a page's temperature must also exceed that
  // of temp_admit[t] requests in the window, 1 - 0.5 e^{-increase n}. Empty: no such threshold.
  // The original code: 3 requests for Tier 1, 1 for Tier 2 (min_access_toT1/T2, Run_TEMP.cpp
  // L393-394, L723, L820).
  std::vector<uint32_t> temp_admit;
  // A full faster tier's page to demote: chosen before the promoted page enters (kBefore: the
  // thesis's "make room for the new hotter page"), or after (kAfter: the original code adds the
  // page, then demotes the tier's coldest, which may be the page itself, straight back;
  // Run_RL.cpp L1101-1147, Run_TEMP.cpp L728-773).
  enum class Victim { kBefore, kAfter };
  Victim victim = Victim::kBefore;
  // tLRU's margin: kNone, promote a page more recent than the faster tier's least recent; kCapacity,
  // only if more recent by more than the faster tier's capacity in requests (the original
  // Run_tLRU.cpp, its two `last_request_round > k_lru * ... + max_capacity` tests, k_lru = 1).
  enum class TlruMargin { kNone, kCapacity };
  TlruMargin tlru_margin = TlruMargin::kNone;
  RlParams rl;
  uint64_t seed = 1;
};

class Policy {
 public:
  Policy(const std::vector<TierSpec>& tiers, uint32_t pages);
  virtual ~Policy() = default;

  // The initial placement: the tier of every page (counts must fit the capacities).
  virtual void place(const std::vector<uint8_t>& tier_of);
  // One request at request index `now` (0-based, increasing). The page's tier is tier_of(page)
  // before the call; migrations the policy makes are appended to `moves` (promotion first).
  virtual void access(uint32_t page, Op op, uint64_t now, QueueProbe& probe, std::vector<Move>& moves) = 0;
  // The response time of a request served by `tier`, observed at request index `now`: in the
  // simulator the request's own index (its response is known at once), in the emulator the index
  // of the request about to be issued when its completion is absorbed (never earlier than its own).
  virtual void observe(int /*tier*/, double /*response_us*/, uint64_t /*now*/) {}
  // Bytes of the policy's data structures (placement included).
  virtual size_t memory_bytes() const;

  int tier_of(uint32_t page) const { return tier_[page]; }
  uint64_t size(int tier) const { return size_[static_cast<size_t>(tier)]; }
  int tiers() const { return static_cast<int>(tiers_.size()); }
  uint32_t pages() const { return pages_; }

 protected:
  // Moves `page` to the neighbouring tier `to` and reports it in `moves` (a plug-in's way to
  // migrate; the engine checks the move and the capacities after the request).
  void move(uint32_t page, int to, std::vector<Move>& moves);

  std::vector<TierSpec> tiers_;
  uint32_t pages_;
  std::vector<uint8_t> tier_;
  std::vector<uint64_t> size_;
};

// Policies that keep, per tier, a min-heap of pages by (key, tie, page id) to find the page to
// demote. A tier whose capacity holds every page is never full and keeps no heap.
class HeapPolicy : public Policy {
 public:
  HeapPolicy(const std::vector<TierSpec>& tiers, uint32_t pages);
  void place(const std::vector<uint8_t>& tier_of) override;
  size_t memory_bytes() const override;

  double key(uint32_t page) const { return key_[page]; }
  // The lowest page of a tier's heap (the tier must be heaped and non-empty).
  uint32_t lowest(int tier) const { return heaps_[static_cast<size_t>(tier)].front(); }
  bool full(int tier) const {
    return size_[static_cast<size_t>(tier)] >= tiers_[static_cast<size_t>(tier)].capacity_pages;
  }

 protected:
  void set_key(uint32_t page, double key, uint32_t tie);
  // Moves `page` one tier up, demoting the faster tier's lowest page if it is full (the lowest
  // before `page` enters, or after if victim_after_insert_: then possibly `page` itself).
  void promote(uint32_t page, std::vector<Move>& moves);
  virtual void moved(uint32_t /*page*/, int /*from*/, int /*to*/) {}
  bool victim_after_insert_ = false;

 private:
  bool less(uint32_t a, uint32_t b) const;
  void heap_insert(int tier, uint32_t page);
  void heap_remove(int tier, uint32_t page);
  void sift_up(std::vector<uint32_t>& h, size_t i);
  void sift_down(std::vector<uint32_t>& h, size_t i);
  void move_page(uint32_t page, int to, std::vector<Move>& moves);

  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  std::vector<double> key_;
  std::vector<uint32_t> tie_;
  std::vector<uint32_t> pos_;
  std::vector<std::vector<uint32_t>> heaps_;
  std::vector<bool> heaped_;
};

using PolicyFactory = std::unique_ptr<Policy> (*)(const std::vector<TierSpec>& tiers, uint32_t pages,
                                                  const PolicyParams& params);
struct NamedPolicy {
  std::string name;
  PolicyFactory factory;
};
// static, tlfu, tlru, lrfu, exd, temp, restore (builtin_policies.cc); none in
// librestore_plugins_only.a.
std::vector<NamedPolicy> builtin_policies();

// The registry (policy_registry.cc): the built-in policies, then those a plug-in adds before main()
// runs. A second policy by a name already taken, or a name other than [a-z0-9_]+, stops the program.
bool register_policy(const std::string& name, PolicyFactory factory);
// A name a policy may have: [a-z0-9_]+, not "all" (it is a CSV cell and a command-line choice).
bool plain_policy_name(const std::string& name);
bool known_policy(const std::string& name);
std::vector<std::string> policy_names();   // every registered name, built-in first
std::vector<std::string> builtin_names();  // what --policy all runs
// Throws std::invalid_argument for a name nobody registered.
std::unique_ptr<Policy> make_policy(const std::string& name, const std::vector<TierSpec>& tiers, uint32_t pages,
                                    const PolicyParams& params = {});

// A policy reported what cannot be: a move of a page from a tier it is not in, to a tier that is
// not a neighbour, a tier over its capacity after a request, a page whose tier changed with no
// move reported. The message names the policy, the page and the tiers.
class PolicyError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// The engines' own record of the placement, kept from the moves a policy reports and compared
// with the policy's own on every request (a few operations per request).
class PlacementCheck {
 public:
  PlacementCheck(std::string policy, const std::vector<TierSpec>& tiers, const std::vector<uint8_t>& tier_of);
  // The tier serving a request for `page`, once the policy's account agrees with the record.
  int tier(uint32_t page, const Policy& policy) const;
  // A request's moves, in order; the capacities are checked after all of them.
  void apply(const std::vector<Move>& moves);

 private:
  [[noreturn]] void fail(const std::string& what) const;
  std::string policy_;
  std::vector<uint64_t> capacity_, size_;
  std::vector<uint8_t> tier_;
};

// --- the concrete policies, exposed for the unit tests -------------------------------------

class StaticPolicy : public Policy {
 public:
  using Policy::Policy;
  void access(uint32_t, Op, uint64_t, QueueProbe&, std::vector<Move>&) override {}
};

// tLFU (key = request count), tLRU (key = last request index), LRFU (key = log2 CRF referred to
// time 0), EXD (key = ln S referred to time 0). Upgrade if key(page) > lowest key of the faster tier.
class ScorePolicy : public HeapPolicy {
 public:
  ScorePolicy(ScoreKind kind, const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams& params);
  void access(uint32_t page, Op op, uint64_t now, QueueProbe& probe, std::vector<Move>& moves) override;
  size_t memory_bytes() const override;
  // The policy's score of the page at request index `now` (count, recency, CRF or EXD score).
  double score(uint32_t page, uint64_t now) const;

 private:
  ScoreKind kind_;
  PolicyParams params_;
  std::vector<uint32_t> last_;  // request index + 1 of the last request (LRFU/EXD), 0 = never
};

// TEMP: upgrade if the page's temperature is above the faster tier's average temperature;
// demote the coldest page. Keeps every tier's temperature sum exactly (fixed point).
class TempPolicy : public HeapPolicy, public TemperatureListener {
 public:
  TempPolicy(const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams& params);
  void place(const std::vector<uint8_t>& tier_of) override;
  void access(uint32_t page, Op op, uint64_t now, QueueProbe& probe, std::vector<Move>& moves) override;
  size_t memory_bytes() const override;
  void temperature_changed(uint32_t page, double before, double after) override;

  double temperature(uint32_t page) const { return model_.temperature(page); }
  double total_temperature(int tier) const { return static_cast<double>(sum_[static_cast<size_t>(tier)]) * kUnit; }
  double mean_temperature(int tier) const;

 protected:
  void moved(uint32_t page, int from, int to) override;
  void heat(uint32_t page, uint64_t now);  // advance + touch + key
  void sum_tiers();                        // every tier's temperature sum from the placement

  static constexpr double kScale = 4294967296.0;  // fixed point: 2^32 per degree
  static constexpr double kUnit = 1.0 / kScale;
  static int64_t fixed(double t) { return static_cast<int64_t>(t * kScale + 0.5); }
  TemperatureModel model_;
  std::vector<int64_t> sum_;
  std::vector<double> admit_;  // the least temperature to enter each tier (-inf: none)
};

// ReStore: TEMP's temperature and demotion, with the upgrade decided by the per-tier agents (Eq. 6.4).
class RestorePolicy : public TempPolicy {
 public:
  RestorePolicy(const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams& params);
  void access(uint32_t page, Op op, uint64_t now, QueueProbe& probe, std::vector<Move>& moves) override;
  void observe(int tier, double response_us, uint64_t now) override;
  size_t memory_bytes() const override;

  struct Agent {
    explicit Agent(const RlParams& p) : td(p.td), fit1(p.fit_window), fit2(p.fit_window) {}
    TdAgent td;
    SlidingStats fit1, fit2;
    Membership m1, m2;
    double phi[kRules] = {0.25, 0.25, 0.25, 0.25};  // basis of the current state s_n
    bool started = false;
    double tau = 0;         // steps spent in s_n
    uint64_t since = 0;     // request index where s_n began
    double reward_sum = 0;  // sum of discounted response times in s_n
    uint64_t reward_n = 0;
    uint64_t updates = 0;
  };
  const Agent& agent(int tier) const { return agents_[static_cast<size_t>(tier)]; }
  // The value (a cost) tier `tier`'s agent gives the state (s1, s2).
  double cost(int tier, double s1, double s2) const;
  uint64_t decisions() const { return decisions_; }
  // Eq. 6.1's cost of the present placement, as the released code computes it (Reward::kModel).
  double model_cost() const;

 private:
  void observe_state(int tier, double s1, double s2);
  void observe_every_tier(QueueProbe& probe);
  void decide(uint32_t page, int tier, QueueProbe& probe, std::vector<Move>& moves);
  // With probability epsilon of the pair (j+1 -> j) exploration overrides `upgrade`; then moves.
  void explore_and_move(uint32_t page, int j, bool upgrade, std::vector<Move>& moves);
  void td_step(uint64_t now, QueueProbe& probe);
  double s2_of(int tier, uint64_t queued) const;
  bool released_step_due(uint64_t now) const;
  void released_step(QueueProbe& probe, const std::vector<Move>& moves);

  RlParams rl_;
  std::vector<Agent> agents_;
  SplitMix64 rng_;
  uint64_t decisions_ = 0;
  bool outside_seen_ = false;  // a page outside Tier 1 was accessed (the warm-up starts then)
  uint64_t first_outside_ = 0;
  std::vector<std::array<double, kRules>> before_;  // Transition::kRequest: each tier's basis before the request
};

}  // namespace restore

// In a plug-in's .cc, at namespace scope: CLASS (a Policy constructed from the tiers, the page
// count and the parameters) becomes --policy NAME.
#define RESTORE_REGISTER_POLICY(NAME, CLASS)                                                                       \
  static const bool restore_registered_##CLASS =                                                                   \
      ::restore::register_policy(NAME,                                                                             \
                                 [](const std::vector<::restore::TierSpec>& tiers, uint32_t pages,                 \
                                    const ::restore::PolicyParams& params) -> std::unique_ptr<::restore::Policy> { \
                                   return std::make_unique<CLASS>(tiers, pages, params);                           \
                                 })
