// Lab 2: LRU-WSR and ACE's write-back for it, as a plug-in policy of the bufferpool simulator.
//
// The simulator (systems/ace/sim) owns the pool: its frames, the page each holds and its dirty
// bit (frames_[f].valid, .dirty, .page). Your policy keeps its own order of the frames and answers
// the pool's questions; the interface is acesim::Policy in systems/ace/sim/src/policy.h, the one
// the simulator's own policies implement. This file starts as plain LRU, which compiles, runs and
// is valid: make it LRU-WSR where the TODOs say.
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

class StudentPolicy : public acesim::Policy {
 public:
  explicit StudentPolicy(const std::vector<FrameState>& frames)
      : Policy(frames),
        n_(static_cast<int>(frames.size())),
        prev_(frames.size(), kNoFrame),
        next_(frames.size(), kNoFrame) {}

  // A request found its page in frame f.
  void on_hit(Frame f, uint64_t /*now*/) override {
    // TODO (LRU-WSR): a page that is used again is no longer cold.
    if (head_ != f) {
      unlink(f);
      push_head(f);
    }
  }

  // Frame f has just received a page.
  void on_load(Frame f, uint64_t /*now*/) override {
    // TODO (LRU-WSR): a new page is not cold.
    push_head(f);
  }

  // A prefetched page in f: it goes where the policy evicts first.
  void make_evict_first(Frame f) override {
    // TODO (LRU-WSR): nor is a prefetched one.
    unlink(f);
    push_tail(f);
  }

  // f, returned by victim(), loses its page.
  void on_evict(Frame f) override { unlink(f); }

  // The frame to evict (the pool is full), never one of `pinned`.
  Frame victim(const std::vector<Frame>& pinned) override {
    // TODO (LRU-WSR): walking from the tail, take the first clean page, or the first dirty page
    // that is cold; a dirty page that is not cold becomes cold and gets a second chance at the
    // head. Bound the walk (a page may be met twice) and skip pinned frames.
    for (Frame id = tail_; id != kNoFrame; id = prev_[id])
      if (!contains(pinned, id)) return id;
    return kNoFrame;
  }

  // ACE's Writer: the victim is dirty and will be written; which other dirty frames (at most
  // `max`, never the victim or a pinned one) should be written with it, concurrently? They stay
  // in the pool, clean. Return them in the order your policy would evict them next.
  std::vector<Frame> writeback_candidates(Frame /*victim*/, int /*max*/,
                                          const std::vector<Frame>& /*pinned*/) override {
    // TODO (ACE): the dirty pages LRU-WSR would evict next, from the tail: the cold ones. A dirty
    // page that is not cold is treated as victim() treats it.
    return {};
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
  // TODO (LRU-WSR): a cold flag per frame.
};

}  // namespace

// --policy student
ACESIM_REGISTER_POLICY("student", StudentPolicy);
