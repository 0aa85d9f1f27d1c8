// Replacement policies over a pool of frames. The pool (simulator.h) owns the frames and
// their dirty bits; a policy keeps its own order and answers three questions: which
// frame to evict (victim), which dirty frames it would evict next (ACE's Writer), and
// where a page goes when it arrives. The list policies and Clock Sweep mirror the
// patched PostgreSQL's freelist.c (systems/ace/patches/0002-*.patch).
//
// Policy is also the plug-in interface: every policy, built in or not, is a subclass found by
// name in one registry (--policy NAME). A plug-in is a .cc file linked into ace-sim (CMake's
// ACE_SIM_PLUGINS; lab 2 of labs/ builds students' policies this way) that registers its class
// with ACESIM_REGISTER_POLICY. The pool checks every answer a policy gives (PolicyError).
#pragma once

#include <cstdint>
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "artifact/rng.h"

namespace acesim {

using artifact::SplitMix64;

using Frame = int;
constexpr Frame kNoFrame = -1;

struct FrameState {
  uint64_t page = 0;
  bool valid = false;
  bool dirty = false;
  bool prefetched = false;  // holds a prefetched page nobody has requested yet
};

// The three policies of one list (ListPolicy).
enum class ListKind { kLru, kCflru, kLruWsr };

class Policy {
 public:
  explicit Policy(const std::vector<FrameState>& frames) : frames_(frames) {}
  virtual ~Policy() = default;

  // A request found its page in `f`; `now` is the access number (1, 2, ...).
  virtual void on_hit(Frame f, uint64_t now) = 0;
  // A request for `page` missed, before a frame is found for it.
  virtual void on_miss(uint64_t /*page*/, uint64_t /*now*/) {}
  // `f` has just received a page (at the most recently used end).
  virtual void on_load(Frame f, uint64_t now) = 0;
  // A prefetched page in `f`: move it where the policy evicts first.
  virtual void make_evict_first(Frame f) = 0;
  // `f` became dirty (a write) or clean (written back while staying resident).
  virtual void on_dirty(Frame /*f*/) {}
  virtual void on_clean(Frame /*f*/) {}
  // The frame to evict, never one of `pinned`; kNoFrame if every frame is pinned.
  // The pool is full. May change the policy's state (a clock hand, LRU-WSR's moves).
  virtual Frame victim(const std::vector<Frame>& pinned) = 0;
  // `f`, returned by victim(), loses its page.
  virtual void on_evict(Frame f) = 0;
  // ACE's populate_pages_to_writeback(): up to `max` dirty frames other than `victim`
  // and `pinned`, in the order the policy would evict them next.
  virtual std::vector<Frame> writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) = 0;

 protected:
  const std::vector<FrameState>& frames_;
};

// LRU, CFLRU and LRU-WSR: one doubly linked list, most recently used at the head.
class ListPolicy : public Policy {
 public:
  ListPolicy(const std::vector<FrameState>& frames, ListKind kind, double cflru_window);
  void on_hit(Frame f, uint64_t now) override;
  void on_load(Frame f, uint64_t now) override;
  void make_evict_first(Frame f) override;
  void on_dirty(Frame f) override;
  void on_clean(Frame f) override;
  Frame victim(const std::vector<Frame>& pinned) override;
  void on_evict(Frame f) override;
  std::vector<Frame> writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) override;

  // For the tests: frames from the least recently used (tail) to the head, and the flag.
  std::vector<Frame> order_from_tail() const;
  bool cold(Frame f) const { return cold_[f]; }
  void set_cold(Frame f, bool cold) { cold_[f] = cold; }
  // For the tests: CFLRU's victims by the walk (as freelist.c) instead of the stamps.
  void set_reference_walk(bool on) { reference_walk_ = on; }

 private:
  void unlink(Frame f);
  void push_head(Frame f);
  void push_tail(Frame f);
  Frame cflru_victim(const std::vector<Frame>& pinned);

  ListKind kind_;
  int window_;  // CFLRU's clean-first region, in frames
  bool reference_walk_ = false;
  int n_;
  Frame head_ = kNoFrame, tail_ = kNoFrame;
  std::vector<Frame> prev_, next_;  // prev_: toward the head, next_: toward the tail
  std::vector<bool> cold_;

  // CFLRU only: the walk over a window full of dirty pages costs N/3 steps per eviction, so
  // the list order is also kept as stamps (head: increasing, tail: decreasing) in an
  // order-statistics tree, and the clean frames by stamp: the first clean frame from the
  // tail and its position come in O(log N). Same victims as the walk.
  using StampTree = __gnu_pbds::tree<int64_t, __gnu_pbds::null_type, std::less<int64_t>, __gnu_pbds::rb_tree_tag,
                                     __gnu_pbds::tree_order_statistics_node_update>;
  void restamp(Frame f, bool at_head);
  void unstamp(Frame f);
  std::vector<int64_t> stamp_;
  int64_t head_stamp_ = 0, tail_stamp_ = 0;
  StampTree order_;
  std::set<std::pair<int64_t, Frame>> clean_;
};

// PostgreSQL 15's Clock Sweep (freelist.c StrategyGetBuffer, bufmgr.c PinBuffer).
class ClockPolicy : public Policy {
 public:
  static constexpr int kMaxUsage = 5;  // BM_MAX_USAGE_COUNT
  explicit ClockPolicy(const std::vector<FrameState>& frames);
  void on_hit(Frame f, uint64_t now) override;
  void on_load(Frame f, uint64_t now) override;
  void make_evict_first(Frame f) override;
  Frame victim(const std::vector<Frame>& pinned) override;
  void on_evict(Frame /*f*/) override {}
  std::vector<Frame> writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) override;

  int usage(Frame f) const { return usage_[f]; }
  void set_usage(Frame f, int u) { usage_[f] = u; }
  Frame hand() const { return hand_; }
  void set_hand(Frame f) { hand_ = f; }

 private:
  int n_;
  Frame hand_ = 0;  // nextVictimBuffer
  std::vector<int> usage_;
};

// ExpCache (Yang 2021, Algorithms 2-4): a read cache R (clean pages) and a write cache W
// (dirty pages), each ordered by recency and by frequency; ghost caches of L/2 entries
// per expert; the expert (LRU or LFU) that evicts is drawn from fixed-share weights.
class ExpCachePolicy : public Policy {
 public:
  ExpCachePolicy(const std::vector<FrameState>& frames, uint64_t seed, double tolerance = 0.10);
  void on_hit(Frame f, uint64_t now) override;
  void on_miss(uint64_t page, uint64_t now) override;
  void on_load(Frame f, uint64_t now) override;
  void make_evict_first(Frame f) override;
  void on_dirty(Frame f) override;
  void on_clean(Frame f) override;
  Frame victim(const std::vector<Frame>& pinned) override;
  void on_evict(Frame f) override;
  std::vector<Frame> writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) override;

  double w_lru() const { return w_lru_; }
  uint64_t freq(Frame f) const { return meta_[f].freq; }
  bool in_write_cache(Frame f) const { return meta_[f].cache == kW; }
  uint64_t ghost_lru_hits() const { return glru_hits_; }
  uint64_t ghost_lfu_hits() const { return glfu_hits_; }
  bool last_choice_was_lru() const { return last_lru_; }
  // For the tests: force the next eviction's expert instead of sampling it.
  void force_expert(int lru) { forced_ = lru; }

 private:
  enum Cache { kR = 0, kW = 1 };
  struct Meta {
    uint64_t freq = 0, ts = 0;
    Cache cache = kR;
  };
  void insert(Frame f);
  void erase(Frame f);
  void update_expert(uint64_t access_count);
  Frame evict_victim(bool lru);

  double tolerance_;
  size_t capacity_, ghost_capacity_;
  SplitMix64 rng_;
  std::vector<Meta> meta_;
  std::set<std::pair<uint64_t, Frame>> lru_[2];                       // (timestamp, frame)
  std::set<std::tuple<uint64_t, uint64_t, Frame>> lfu_[2];            // (freq, timestamp, frame)
  std::unordered_map<uint64_t, uint64_t> glru_;                       // page -> timestamp
  std::set<std::pair<uint64_t, uint64_t>> glru_order_;                // (timestamp, page)
  std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>> glfu_;  // page -> (freq, ts)
  std::set<std::tuple<uint64_t, uint64_t, uint64_t>> glfu_order_;     // (freq, ts, page)
  uint64_t glru_hits_ = 0, glfu_hits_ = 0;
  double w_lru_ = 0.5, w_lfu_ = 0.5, eta_pre_ = 0;
  bool have_eta_ = false;
  uint64_t pending_page_ = 0, pending_freq_ = 1;  // the missed page's frequency (Alg. 2 tfreq)
  bool have_pending_ = false;
  int forced_ = -1;
  bool last_lru_ = true;
};

// What a policy may be built with: the command line's --cflru-window and --seed.
struct PolicyOptions {
  double cflru_window = 1.0 / 3.0;
  uint64_t seed = 1;
};
using PolicyFactory = std::unique_ptr<Policy> (*)(const std::vector<FrameState>& frames, const PolicyOptions& options);

struct NamedPolicy {
  std::string name;
  PolicyFactory factory;
};
// lru, cflru, lru_wsr, clock and expcache (policy.cc); none in libace_sim_plugins_only.a.
std::vector<NamedPolicy> builtin_policies();

// The registry (policy_registry.cc): the built-in policies, then those a plug-in adds before
// main() runs. A second policy by a name already taken stops the program.
bool register_policy(const std::string& name, PolicyFactory factory);
bool known_policy(const std::string& name);
std::string policy_names();  // "lru, cflru, ...", in the order they were registered
// Throws std::invalid_argument for a name nobody registered.
std::unique_ptr<Policy> make_policy(const std::string& name, const std::vector<FrameState>& frames,
                                    const PolicyOptions& options = {});

}  // namespace acesim

// In a plug-in's .cc, at namespace scope: CLASS (a Policy constructed from the frames alone)
// becomes --policy NAME.
#define ACESIM_REGISTER_POLICY(NAME, CLASS)                                                                         \
  static const bool acesim_registered_##CLASS =                                                                     \
      ::acesim::register_policy(NAME,                                                                               \
                                [](const std::vector<::acesim::FrameState>& frames, const ::acesim::PolicyOptions&) \
                                    -> std::unique_ptr<::acesim::Policy> { return std::make_unique<CLASS>(frames); })
