#include "simulator.h"

#include <algorithm>
#include <stdexcept>

namespace acesim {

namespace {
uint64_t rounds(uint64_t m, int k) { return (m + static_cast<uint64_t>(k) - 1) / static_cast<uint64_t>(k); }
}  // namespace

Simulator::Simulator(const Config& config) : cfg_(config) {
  if (cfg_.pool_pages < 1) throw std::invalid_argument("pool_pages must be at least 1");
  frames_.resize(static_cast<size_t>(cfg_.pool_pages));
  const PolicyOptions options{cfg_.cflru_window, cfg_.seed};
  policy_ = cfg_.policy_factory ? cfg_.policy_factory(frames_, options) : make_policy(cfg_.policy, frames_, options);
  free_.resize(frames_.size());
  for (size_t i = 0; i < free_.size(); i++) free_[i] = static_cast<Frame>(i);
  map_.reserve(frames_.size() * 2);
}

Frame Simulator::frame_of(uint64_t page) const {
  auto it = map_.find(page);
  return it == map_.end() ? kNoFrame : it->second;
}

double Simulator::virtual_runtime_us() const {
  const Device& d = cfg_.device;
  return static_cast<double>(c_.read_rounds) * d.read_latency_us +
         static_cast<double>(c_.write_rounds) * d.alpha * d.read_latency_us +
         static_cast<double>(c_.accesses) * cfg_.cpu_us_per_access;
}

double Simulator::hit_ratio() const {
  return c_.accesses == 0 ? 0.0 : static_cast<double>(c_.hits) / static_cast<double>(c_.accesses);
}

void Simulator::access(uint64_t page, bool write, uint32_t pid, bool repin) {
  const uint64_t now = ++c_.accesses;
  auto it = map_.find(page);
  if (it != map_.end()) {
    c_.hits++;
    Frame f = it->second;
    if (frames_[f].prefetched) {  // StrategyNoteUse: the first request of a prefetched page
      frames_[f].prefetched = false;
      c_.prefetch_used++;
    }
    if (!repin) policy_->on_hit(f, now);
    if (write) set_dirty(f);
    return;
  }
  c_.misses++;
  load(page, write, pid, now);
}

void Simulator::mark_dirty(uint64_t page, uint32_t pid) {
  Frame f = frame_of(page);
  if (f != kNoFrame) {
    set_dirty(f);
    return;
  }
  // Only possible when processes interleave: PostgreSQL dirties pages it holds. The page is
  // loaded (and paid for) but counted apart, so that accesses are the trace's R lines.
  c_.w_nonresident++;
  load(page, true, pid, std::max<uint64_t>(c_.accesses, 1));
}

void Simulator::set_dirty(Frame f) {
  if (!frames_[f].dirty) {
    frames_[f].dirty = true;
    policy_->on_dirty(f);
  }
}

void Simulator::install(Frame f, uint64_t page, uint64_t now) {
  frames_[f] = FrameState{page, true, false, false};
  map_[page] = f;
  policy_->on_load(f, now);
}

// The pool holds every page it was given: whatever a policy answers, a victim must be a frame
// with a page that nobody pins, and what ACE writes with it distinct dirty frames, neither the
// victim nor pinned, at most n_w - 1. Checked on every answer (a few comparisons per eviction).
void Simulator::check_victim(Frame v, const std::vector<Frame>& pinned) const {
  const std::string who = "policy '" + cfg_.policy + "': victim() returned ";
  if (v == kNoFrame) throw PolicyError(who + "no frame, but not every frame is pinned");
  if (v < 0 || static_cast<size_t>(v) >= frames_.size())
    throw PolicyError(who + "frame " + std::to_string(v) + ", not a frame of the pool (0 to " +
                      std::to_string(frames_.size() - 1) + ")");
  if (!frames_[v].valid) throw PolicyError(who + "frame " + std::to_string(v) + ", which holds no page");
  if (std::find(pinned.begin(), pinned.end(), v) != pinned.end())
    throw PolicyError(who + "frame " + std::to_string(v) + ", which is pinned");
}

void Simulator::check_writeback(const std::vector<Frame>& others, Frame v, const std::vector<Frame>& pinned) const {
  const std::string who = "policy '" + cfg_.policy + "': writeback_candidates() returned ";
  if (others.size() > static_cast<size_t>(std::max(cfg_.n_w - 1, 0)))
    throw PolicyError(who + std::to_string(others.size()) + " frames, more than the " +
                      std::to_string(std::max(cfg_.n_w - 1, 0)) + " asked for");
  std::vector<bool> seen(frames_.size(), false);
  for (Frame g : others) {
    const std::string frame = "frame " + std::to_string(g);
    if (g < 0 || static_cast<size_t>(g) >= frames_.size()) throw PolicyError(who + frame + ", not a frame of the pool");
    if (g == v) throw PolicyError(who + frame + ", the victim itself (it is written anyway)");
    if (seen[g]) throw PolicyError(who + frame + " twice");
    seen[g] = true;
    if (!frames_[g].valid || !frames_[g].dirty) throw PolicyError(who + frame + ", which is not dirty");
    if (std::find(pinned.begin(), pinned.end(), g) != pinned.end())
      throw PolicyError(who + frame + ", which is pinned");
  }
}

void Simulator::log_phase(char op, const std::vector<uint64_t>& pages) {
  if (!io_log_) return;
  *io_log_ << op;
  for (uint64_t p : pages) *io_log_ << ' ' << p;
  *io_log_ << '\n';
}

// A free frame (PostgreSQL's freelist, used until the pool is full), else the policy's
// victim. A dirty victim is written first: alone, or with ACE's Writer together with the
// next n_w - 1 dirty pages of the policy's order, which stay resident and become clean.
Frame Simulator::obtain_frame(const std::vector<Frame>& pinned, Alloc* kind) {
  if (next_free_ < free_.size()) {
    *kind = Alloc::kFree;
    return free_[next_free_++];
  }
  Frame v = policy_->victim(pinned);
  check_victim(v, pinned);
  if (frames_[v].dirty) {
    *kind = Alloc::kDirtyVictim;
    c_.dirty_evictions++;
    std::vector<Frame> others;
    if (cfg_.ace) {
      others = policy_->writeback_candidates(v, cfg_.n_w - 1, pinned);
      check_writeback(others, v, pinned);
    }
    last_batch_.assign(1, frames_[v].page);
    frames_[v].dirty = false;
    for (Frame g : others) {
      last_batch_.push_back(frames_[g].page);
      frames_[g].dirty = false;
      policy_->on_clean(g);
    }
    log_phase('W', last_batch_);
    c_.pages_written += 1 + others.size();
    c_.write_batches++;
    c_.write_rounds += rounds(1 + others.size(), cfg_.device.k_w);
  } else {
    *kind = Alloc::kCleanVictim;
  }
  policy_->on_evict(v);
  map_.erase(frames_[v].page);
  frames_[v] = FrameState{};
  return v;
}

// The Reader (PostgreSQL's AceReadWithPrefetch): every miss feeds the predictors; only a
// miss that found the pool not full or wrote a dirty victim prefetches (Algorithm 1: after
// a clean victim the page is read alone). TaP first, from a run of 4; else the history.
std::vector<uint64_t> Simulator::predict(uint64_t page, uint32_t pid, Alloc kind) {
  std::vector<uint64_t> out;
  Predictor& p = predictors_[pid];
  const int run = p.tap_observe(page);
  if (cfg_.prefetch == Prefetch::kHistory) p.history_observe(page);
  if (kind == Alloc::kCleanVictim || cfg_.n_e <= 1) return out;

  const uint32_t rel = page_rel(page), block = page_block(page);
  std::vector<uint32_t> blocks;
  if (run >= kTapTrigger) {
    for (int i = 1; i < cfg_.n_e; i++) blocks.push_back(block + static_cast<uint32_t>(i));
    p.tap_continue(make_page(rel, block + static_cast<uint32_t>(cfg_.n_e)), run);
  } else if (cfg_.prefetch == Prefetch::kHistory) {
    blocks = p.history_predict(page, cfg_.n_e - 1);
  }
  const uint32_t limit = nblocks(rel);
  for (uint32_t b : blocks) {
    uint64_t candidate = make_page(rel, b);
    if (b < limit && !resident(candidate)) out.push_back(candidate);
  }
  // Room for all of them with the requested page pinned (PostgreSQL's pools are never this
  // small; a tiny simulated pool could otherwise pin every frame).
  if (out.size() > frames_.size() - 1) out.resize(frames_.size() - 1);
  return out;
}

void Simulator::load(uint64_t page, bool write, uint32_t pid, uint64_t now) {
  policy_->on_miss(page, now);
  Alloc kind;
  Frame f = obtain_frame({}, &kind);
  install(f, page, now);
  std::vector<uint64_t> predicted;
  if (cfg_.ace && cfg_.prefetch != Prefetch::kOff) predicted = predict(page, pid, kind);
  c_.read_rounds += rounds(1 + predicted.size(), cfg_.device.k_r);  // read together
  if (io_log_) {
    std::vector<uint64_t> read{page};
    read.insert(read.end(), predicted.begin(), predicted.end());
    log_phase('R', read);
  }
  if (write) set_dirty(f);

  // Then the prefetched pages get frames, one victim each (a dirty victim is written as
  // above), with the requested page and those already placed pinned; finally they move
  // where the policy evicts first, in the order they were placed (bufmgr.c
  // AceInstallPrefetched).
  std::vector<Frame> pinned{f};
  for (uint64_t p : predicted) {
    Alloc ignored;
    Frame g = obtain_frame(pinned, &ignored);
    install(g, p, now);
    pinned.push_back(g);
  }
  for (size_t i = 1; i < pinned.size(); i++) {
    policy_->make_evict_first(pinned[i]);
    frames_[pinned[i]].prefetched = true;
    c_.prefetch_issued++;
  }
}

}  // namespace acesim
