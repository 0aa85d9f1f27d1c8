#include "policy.h"

#include <algorithm>
#include <cmath>

namespace acesim {

namespace {
bool contains(const std::vector<Frame>& frames, Frame f) {
  return std::find(frames.begin(), frames.end(), f) != frames.end();
}
}  // namespace

// ------------------------------------------------------------------ list policies

ListPolicy::ListPolicy(const std::vector<FrameState>& frames, ListKind kind, double cflru_window)
    : Policy(frames),
      kind_(kind),
      n_(static_cast<int>(frames.size())),
      prev_(frames.size(), kNoFrame),
      next_(frames.size(), kNoFrame),
      cold_(frames.size(), false),
      stamp_(frames.size(), 0) {
  // As freelist.c: Max(1, (int) (cflru_window * NBuffers)); the other policies walk it all.
  window_ = kind == ListKind::kCflru ? std::max(1, static_cast<int>(cflru_window * static_cast<double>(n_))) : 2 * n_;
}

void ListPolicy::unlink(Frame f) {
  Frame p = prev_[f], n = next_[f];
  if (p != kNoFrame)
    next_[p] = n;
  else
    head_ = n;
  if (n != kNoFrame)
    prev_[n] = p;
  else
    tail_ = p;
  prev_[f] = next_[f] = kNoFrame;
}

void ListPolicy::push_head(Frame f) {
  prev_[f] = kNoFrame;
  next_[f] = head_;
  if (head_ != kNoFrame) prev_[head_] = f;
  head_ = f;
  if (tail_ == kNoFrame) tail_ = f;
}

void ListPolicy::push_tail(Frame f) {
  next_[f] = kNoFrame;
  prev_[f] = tail_;
  if (tail_ != kNoFrame) next_[tail_] = f;
  tail_ = f;
  if (head_ == kNoFrame) head_ = f;
}

void ListPolicy::restamp(Frame f, bool at_head) {
  if (kind_ != ListKind::kCflru) return;
  unstamp(f);
  stamp_[f] = at_head ? ++head_stamp_ : --tail_stamp_;
  order_.insert(stamp_[f]);
  if (!frames_[f].dirty) clean_.insert({stamp_[f], f});
}

void ListPolicy::unstamp(Frame f) {
  if (kind_ != ListKind::kCflru || stamp_[f] == 0) return;
  order_.erase(stamp_[f]);
  clean_.erase({stamp_[f], f});
  stamp_[f] = 0;
}

// StrategyAccessBuffer: the most recently used, and no longer cold.
void ListPolicy::on_hit(Frame f, uint64_t) {
  cold_[f] = false;
  if (head_ != f) {
    unlink(f);
    push_head(f);
    restamp(f, true);
  }
}

// StrategyPlaceBuffer(buf, false). A frame that lost its page was unlinked by on_evict.
void ListPolicy::on_load(Frame f, uint64_t) {
  cold_[f] = false;
  push_head(f);
  restamp(f, true);
}

// StrategyPlaceBuffer(buf, true), for prefetched pages.
void ListPolicy::make_evict_first(Frame f) {
  cold_[f] = false;
  unlink(f);
  push_tail(f);
  restamp(f, false);
}

void ListPolicy::on_dirty(Frame f) {
  if (kind_ == ListKind::kCflru && stamp_[f] != 0) clean_.erase({stamp_[f], f});
}

void ListPolicy::on_clean(Frame f) {
  if (kind_ == ListKind::kCflru && stamp_[f] != 0) clean_.insert({stamp_[f], f});
}

void ListPolicy::on_evict(Frame f) {
  unlink(f);
  unstamp(f);
}

// What the walk below finds for CFLRU: the first clean unpinned frame from the tail if it
// is within the window, else the first unpinned frame.
Frame ListPolicy::cflru_victim(const std::vector<Frame>& pinned) {
  for (const auto& [stamp, f] : clean_) {
    if (contains(pinned, f)) continue;
    if (static_cast<int>(order_.order_of_key(stamp)) < window_) return f;
    break;
  }
  for (Frame id = tail_; id != kNoFrame; id = prev_[id])
    if (!contains(pinned, id)) return id;
  return kNoFrame;
}

// ListPolicyGetBuffer: walk from the tail, skipping pinned frames. LRU takes the first;
// CFLRU the first clean one within its window, else the first (dirty) one; LRU-WSR the
// first clean or cold one, moving dirty warm ones to the head with the flag set. The walk
// is bounded by 2N because LRU-WSR may meet each moved frame a second time.
Frame ListPolicy::victim(const std::vector<Frame>& pinned) {
  if (kind_ == ListKind::kCflru && !reference_walk_) return cflru_victim(pinned);
  Frame victim = kNoFrame, first_unpinned = kNoFrame;
  int walked = 0;
  for (Frame id = tail_; id != kNoFrame && walked < 2 * n_;) {
    Frame toward_head = prev_[id];
    walked++;
    if (!contains(pinned, id)) {
      bool dirty = frames_[id].dirty;
      if (first_unpinned == kNoFrame) first_unpinned = id;
      if (kind_ == ListKind::kLru || (!dirty && walked <= window_)) {
        victim = id;
        break;
      }
      if (kind_ == ListKind::kLruWsr) {
        if (cold_[id]) {
          victim = id;
          break;
        }
        cold_[id] = true;
        unlink(id);
        push_head(id);
      }
    }
    if (kind_ == ListKind::kCflru && walked >= window_ && first_unpinned != kNoFrame) {
      victim = first_unpinned;
      break;
    }
    id = toward_head;
  }
  return victim != kNoFrame ? victim : first_unpinned;
}

// StrategyWriteBackCandidates for the lists: from the tail, the dirty unpinned frames;
// LRU-WSR takes only cold ones and moves the others to the head, cold (Figure 4.6b).
// CFLRU evicts a dirty frame only when its window holds no clean one, so its next dirty
// victims are LRU's.
std::vector<Frame> ListPolicy::writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) {
  std::vector<Frame> found;
  if (max <= 0) return found;
  int walked = 0;
  for (Frame id = tail_; id != kNoFrame && walked < 2 * n_ && static_cast<int>(found.size()) < max;) {
    Frame toward_head = prev_[id];
    walked++;
    if (id != victim && !contains(pinned, id) && frames_[id].valid && frames_[id].dirty) {
      if (kind_ != ListKind::kLruWsr || cold_[id]) {
        found.push_back(id);
      } else {
        cold_[id] = true;
        unlink(id);
        push_head(id);
      }
    }
    id = toward_head;
  }
  return found;
}

std::vector<Frame> ListPolicy::order_from_tail() const {
  std::vector<Frame> order;
  for (Frame id = tail_; id != kNoFrame; id = prev_[id]) order.push_back(id);
  return order;
}

// ------------------------------------------------------------------ Clock Sweep

ClockPolicy::ClockPolicy(const std::vector<FrameState>& frames)
    : Policy(frames), n_(static_cast<int>(frames.size())), usage_(frames.size(), 0) {}

// PinBuffer (first pin, no strategy): usage count + 1, at most BM_MAX_USAGE_COUNT.
void ClockPolicy::on_hit(Frame f, uint64_t) { usage_[f] = std::min(usage_[f] + 1, kMaxUsage); }

// BufferAlloc gives a new page BUF_USAGECOUNT_ONE.
void ClockPolicy::on_load(Frame f, uint64_t) { usage_[f] = 1; }

// AceInstallPrefetched: usage count zero, evicted at the hand's next pass.
void ClockPolicy::make_evict_first(Frame f) { usage_[f] = 0; }

// StrategyGetBuffer's sweep: ClockSweepTick returns the hand and advances it; an unpinned
// frame with a non-zero count loses one, the first with zero is the victim; after N pinned
// frames in a row there is none (PostgreSQL raises "no unpinned buffers available").
Frame ClockPolicy::victim(const std::vector<Frame>& pinned) {
  int trycounter = n_;
  for (;;) {
    Frame f = hand_;
    hand_ = (hand_ + 1) % n_;
    if (!contains(pinned, f)) {
      if (usage_[f] != 0) {
        usage_[f]--;
        trycounter = n_;
      } else {
        return f;
      }
    } else if (--trycounter == 0) {
      return kNoFrame;
    }
  }
}

// With no further accesses, a frame with usage count u at distance d ahead of the hand is
// evicted in the sweep's (u+1)-th pass at position d: the order is (u, d). Nothing is
// decremented. As freelist.c, the scan stops once `max` frames of count zero are found.
std::vector<Frame> ClockPolicy::writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) {
  std::vector<Frame> found;
  if (max <= 0) return found;
  std::vector<std::vector<Frame>> by_usage(kMaxUsage + 1);
  for (int d = 0; d < n_ && static_cast<int>(by_usage[0].size()) < max; d++) {
    Frame id = (hand_ + d) % n_;
    if (id == victim || contains(pinned, id) || !frames_[id].valid || !frames_[id].dirty) continue;
    auto& bucket = by_usage[usage_[id]];
    if (static_cast<int>(bucket.size()) < max) bucket.push_back(id);
  }
  for (const auto& bucket : by_usage)
    for (Frame f : bucket)
      if (static_cast<int>(found.size()) < max) found.push_back(f);
  return found;
}

// ------------------------------------------------------------------ ExpCache

ExpCachePolicy::ExpCachePolicy(const std::vector<FrameState>& frames, uint64_t seed, double tolerance)
    : Policy(frames),
      tolerance_(tolerance),
      capacity_(frames.size()),
      ghost_capacity_(std::max<size_t>(1, frames.size() / 2)),
      // a stream of its own: the synthetic workload draws from SplitMix64(seed) itself
      rng_(SplitMix64(seed ^ 0x4578704361636865ULL).next()),
      meta_(frames.size()) {}

void ExpCachePolicy::insert(Frame f) {
  const Meta& m = meta_[f];
  lru_[m.cache].insert({m.ts, f});
  lfu_[m.cache].insert({m.freq, m.ts, f});
}

void ExpCachePolicy::erase(Frame f) {
  const Meta& m = meta_[f];
  lru_[m.cache].erase({m.ts, f});
  lfu_[m.cache].erase({m.freq, m.ts, f});
}

// UpdateDataStructure: most recently used, and one more access (the LFU chain freq + 1).
void ExpCachePolicy::on_hit(Frame f, uint64_t now) {
  erase(f);
  meta_[f].freq++;
  meta_[f].ts = now;
  insert(f);
}

// Algorithm 2, lines 16-26: the ghost caches, then the experts' weights.
void ExpCachePolicy::on_miss(uint64_t page, uint64_t now) {
  pending_freq_ = 1;
  if (auto it = glru_.find(page); it != glru_.end()) {
    glru_order_.erase({it->second, page});
    glru_.erase(it);
    glru_hits_++;
  }
  if (auto it = glfu_.find(page); it != glfu_.end()) {
    pending_freq_ = it->second.first;
    glfu_order_.erase({it->second.first, it->second.second, page});
    glfu_.erase(it);
    glfu_hits_++;
  }
  update_expert(now);
  pending_page_ = page;
  have_pending_ = true;
}

// Algorithm 2, lines 44-47: admitted to R with tfreq (a write then moves it to W).
void ExpCachePolicy::on_load(Frame f, uint64_t now) {
  bool pending = have_pending_ && frames_[f].page == pending_page_;
  meta_[f] = Meta{pending ? pending_freq_ : 1, now, kR};
  have_pending_ = false;
  insert(f);
}

// Not used: the simulator refuses prefetching under ExpCache (its placement is undefined).
void ExpCachePolicy::make_evict_first(Frame) {}

// A write to a page of R moves it to W, keeping its frequency and timestamp.
void ExpCachePolicy::on_dirty(Frame f) {
  if (meta_[f].cache == kW) return;
  erase(f);
  meta_[f].cache = kW;
  insert(f);
}

// ACE wrote it: clean again, so back to R, in its place by timestamp and frequency.
void ExpCachePolicy::on_clean(Frame f) {
  if (meta_[f].cache == kR) return;
  erase(f);
  meta_[f].cache = kR;
  insert(f);
}

// Algorithm 3 (Yang 2021, Ch. 4; README.md, "Policies") with lines 13-14 read as w_LFU = 1 - w_LRU after normalising,
// and eta_pre = eta the first time.
void ExpCachePolicy::update_expert(uint64_t access_count) {
  const double t = static_cast<double>(access_count);
  const double loss_lru = 1.0 - static_cast<double>(glru_hits_) / t;
  const double loss_lfu = 1.0 - static_cast<double>(glfu_hits_) / t;
  const double share = 1.0 / t;  // Alg. 3's alpha (the fixed-share rate, not the asymmetry)
  double eta;
  if (access_count <= 3) {
    eta = std::sqrt(std::log(2.0 * 3.0) / t);
    eta_pre_ = eta;
  } else {
    eta = std::sqrt(std::log(2.0 * t) / t);
    if (!have_eta_) eta_pre_ = eta;
  }
  have_eta_ = true;
  const double e = eta / eta_pre_;
  double v_lru = std::pow(w_lru_, e) * std::exp(-eta * loss_lru);
  double v_lfu = std::pow(w_lfu_, e) * std::exp(-eta * loss_lfu);
  const double sum = v_lru + v_lfu;
  v_lru /= sum;
  v_lfu /= sum;
  w_lru_ = share / 2 + (1 - share) * v_lru;
  w_lfu_ = share / 2 + (1 - share) * v_lfu;
  eta_pre_ = eta;
  w_lru_ = w_lru_ / (w_lru_ + w_lfu_);
  w_lfu_ = 1 - w_lru_;
}

// Algorithm 2, line 29: the expert is drawn from (w_LRU, w_LFU). Nothing is ever pinned
// under ExpCache (no prefetching), so `pinned` is not consulted.
Frame ExpCachePolicy::victim(const std::vector<Frame>&) {
  bool lru = forced_ >= 0 ? forced_ == 1 : rng_.uniform() < w_lru_;
  forced_ = -1;
  last_lru_ = lru;
  return evict_victim(lru);
}

// Algorithm 4 (line 20's LRU(W) read as LFU(W)): evict from R unless W's candidate is
// older by more than the tolerance L * TF (in accesses), or, for LFU, less frequent.
Frame ExpCachePolicy::evict_victim(bool lru) {
  const bool r_empty = lru_[kR].empty(), w_empty = lru_[kW].empty();
  if (r_empty && w_empty) return kNoFrame;
  const double tolerance = static_cast<double>(capacity_) * tolerance_;
  if (lru) {
    if (r_empty || w_empty) return r_empty ? lru_[kW].begin()->second : lru_[kR].begin()->second;
    Frame r = lru_[kR].begin()->second, w = lru_[kW].begin()->second;
    uint64_t tr = meta_[r].ts, tw = meta_[w].ts;
    return (tr < tw || static_cast<double>(tr - tw) <= tolerance) ? r : w;
  }
  if (r_empty || w_empty) return r_empty ? std::get<2>(*lfu_[kW].begin()) : std::get<2>(*lfu_[kR].begin());
  Frame r = std::get<2>(*lfu_[kR].begin()), w = std::get<2>(*lfu_[kW].begin());
  if (meta_[r].freq != meta_[w].freq) return meta_[r].freq < meta_[w].freq ? r : w;
  uint64_t tr = meta_[r].ts, tw = meta_[w].ts;
  return (tr <= tw || static_cast<double>(tr - tw) <= tolerance) ? r : w;
}

// Algorithm 2, lines 35-42: the victim enters both ghost caches (each at most L/2).
void ExpCachePolicy::on_evict(Frame f) {
  const Meta m = meta_[f];
  const uint64_t page = frames_[f].page;
  erase(f);
  if (glru_.size() >= ghost_capacity_) {
    auto oldest = glru_order_.begin();
    glru_.erase(oldest->second);
    glru_order_.erase(oldest);
  }
  glru_[page] = m.ts;
  glru_order_.insert({m.ts, page});
  if (glfu_.size() >= ghost_capacity_) {
    auto least = glfu_order_.begin();
    glfu_.erase(std::get<2>(*least));
    glfu_order_.erase(least);
  }
  glfu_[page] = {m.freq, m.ts};
  glfu_order_.insert({m.freq, m.ts, page});
}

// ACE over ExpCache: the next dirty pages are those of the write cache, in its LRU order.
std::vector<Frame> ExpCachePolicy::writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) {
  std::vector<Frame> found;
  for (const auto& [ts, f] : lru_[kW]) {
    if (static_cast<int>(found.size()) >= max) break;
    if (f != victim && !contains(pinned, f) && frames_[f].dirty) found.push_back(f);
  }
  return found;
}

// ------------------------------------------------------------------ built in

namespace {
template <ListKind kind>
std::unique_ptr<Policy> make_list(const std::vector<FrameState>& frames, const PolicyOptions& o) {
  return std::make_unique<ListPolicy>(frames, kind, o.cflru_window);
}
}  // namespace

std::vector<NamedPolicy> builtin_policies() {
  return {{"lru", make_list<ListKind::kLru>},
          {"cflru", make_list<ListKind::kCflru>},
          {"lru_wsr", make_list<ListKind::kLruWsr>},
          {"clock",
           [](const std::vector<FrameState>& frames, const PolicyOptions&) -> std::unique_ptr<Policy> {
             return std::make_unique<ClockPolicy>(frames);
           }},
          {"expcache", [](const std::vector<FrameState>& frames, const PolicyOptions& o) -> std::unique_ptr<Policy> {
             return std::make_unique<ExpCachePolicy>(frames, o.seed);
           }}};
}

}  // namespace acesim
