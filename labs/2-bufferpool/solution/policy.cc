// Lab 2, reference solution: LRU-WSR (Jung et al. 2008) and ACE's write-back for it, as a
// plug-in policy of the bufferpool simulator (systems/ace/sim/src/policy.h).
//
// One list, most recently used at the head. A hit or a load puts the page at the head and clears
// its cold flag. The victim is the first page from the tail that is clean, or dirty and cold; a
// dirty page that is not cold gets the flag and a second chance at the head. ACE's write-back
// candidates are the dirty pages LRU-WSR would evict next: from the tail, the cold dirty pages; a
// dirty page met without the flag gets it and moves to the head, as in the victim's walk.
#include "policy.h"

#include <algorithm>
#include <vector>

namespace {

using acesim::Frame;
using acesim::FrameState;
using acesim::kNoFrame;

bool contains(const std::vector<Frame>& frames, Frame f) {
  return std::find(frames.begin(), frames.end(), f) != frames.end();
}

class LruWsr : public acesim::Policy {
 public:
  explicit LruWsr(const std::vector<FrameState>& frames)
      : Policy(frames),
        n_(static_cast<int>(frames.size())),
        prev_(frames.size(), kNoFrame),
        next_(frames.size(), kNoFrame),
        cold_(frames.size(), false) {}

  void on_hit(Frame f, uint64_t) override {
    cold_[f] = false;
    if (head_ != f) {
      unlink(f);
      push_head(f);
    }
  }
  void on_load(Frame f, uint64_t) override {
    cold_[f] = false;
    push_head(f);
  }
  void make_evict_first(Frame f) override {
    cold_[f] = false;
    unlink(f);
    push_tail(f);
  }
  void on_evict(Frame f) override { unlink(f); }

  // The walk may meet every page twice (once to give it the flag): bounded by 2N.
  Frame victim(const std::vector<Frame>& pinned) override {
    Frame first_unpinned = kNoFrame;
    int walked = 0;
    for (Frame id = tail_; id != kNoFrame && walked < 2 * n_; walked++) {
      Frame toward_head = prev_[id];
      if (!contains(pinned, id)) {
        if (first_unpinned == kNoFrame) first_unpinned = id;
        if (!frames_[id].dirty || cold_[id]) return id;
        cold_[id] = true;
        unlink(id);
        push_head(id);
      }
      id = toward_head;
    }
    return first_unpinned;
  }

  std::vector<Frame> writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) override {
    std::vector<Frame> found;
    int walked = 0;
    for (Frame id = tail_; id != kNoFrame && walked < 2 * n_ && static_cast<int>(found.size()) < max; walked++) {
      Frame toward_head = prev_[id];
      if (id != victim && !contains(pinned, id) && frames_[id].valid && frames_[id].dirty) {
        if (cold_[id]) {
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

 private:
  void unlink(Frame f) {
    Frame p = prev_[f], n = next_[f];
    if (p != kNoFrame)
      next_[p] = n;
    else if (head_ == f)
      head_ = n;
    if (n != kNoFrame)
      prev_[n] = p;
    else if (tail_ == f)
      tail_ = p;
    prev_[f] = next_[f] = kNoFrame;
  }
  void push_head(Frame f) {
    prev_[f] = kNoFrame;
    next_[f] = head_;
    if (head_ != kNoFrame) prev_[head_] = f;
    head_ = f;
    if (tail_ == kNoFrame) tail_ = f;
  }
  void push_tail(Frame f) {
    next_[f] = kNoFrame;
    prev_[f] = tail_;
    if (tail_ != kNoFrame) next_[tail_] = f;
    tail_ = f;
    if (head_ == kNoFrame) head_ = f;
  }

  int n_;
  Frame head_ = kNoFrame, tail_ = kNoFrame;
  std::vector<Frame> prev_, next_;  // prev_: toward the head, next_: toward the tail
  std::vector<bool> cold_;
};

}  // namespace

ACESIM_REGISTER_POLICY("student", LruWsr);
