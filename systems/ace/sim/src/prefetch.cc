#include "prefetch.h"

#include <algorithm>

namespace acesim {

// A miss on a page some earlier miss entered (as its successor) extends that run; every
// miss enters its own successor, with the longest run known for it.
int Predictor::tap_observe(uint64_t page) {
  int run = 1;
  if (TapEntry* e = tap_.find(page)) {
    run = e->run + 1;
    tap_.remove(page);
  }
  TapEntry* next = tap_.enter(page + 1);
  next->run = std::max(next->run, run);
  return run;
}

// Row `prev` learns that `page` followed it: a known successor gains one (at most 1000);
// a new one takes the first slot of weight zero, or else the smallest weight loses one.
void Predictor::history_observe(uint64_t page) {
  if (have_prev_ && page_rel(prev_) == page_rel(page) && prev_ != page) {
    HistoryRow* row = history_.enter(prev_);
    const uint32_t block = page_block(page);
    int free_slot = -1, weakest = 0, i;
    for (i = 0; i < kHistoryFanout; i++) {
      if (row->weight[i] > 0 && row->next[i] == block) {
        row->weight[i] = std::min(row->weight[i] + 1, 1000);
        break;
      }
      if (row->weight[i] == 0 && free_slot < 0) free_slot = i;
      if (row->weight[i] < row->weight[weakest]) weakest = i;
    }
    if (i == kHistoryFanout) {
      if (free_slot >= 0) {
        row->next[free_slot] = block;
        row->weight[free_slot] = 1;
      } else {
        row->weight[weakest]--;
      }
    }
  }
  prev_ = page;
  have_prev_ = true;
}

// The successors of weight >= kHistoryThreshold, heaviest first (ties in slot order), then
// the same from the heaviest one, and so on, until `max` blocks are found.
std::vector<uint32_t> Predictor::history_predict(uint64_t page, int max) {
  std::vector<uint32_t> out;
  uint64_t current = page;
  for (int depth = 0; depth < max && static_cast<int>(out.size()) < max; depth++) {
    HistoryRow* row = history_.find(current);
    if (row == nullptr) break;
    int order[kHistoryFanout];
    for (int i = 0; i < kHistoryFanout; i++) {  // insertion sort, stable, as the C code
      int j = i;
      for (; j > 0 && row->weight[order[j - 1]] < row->weight[i]; j--) order[j] = order[j - 1];
      order[j] = i;
    }
    if (row->weight[order[0]] < kHistoryThreshold) break;
    for (int i = 0; i < kHistoryFanout && static_cast<int>(out.size()) < max; i++) {
      if (row->weight[order[i]] < kHistoryThreshold) break;
      uint32_t candidate = row->next[order[i]];
      if (candidate != page_block(page) && std::find(out.begin(), out.end(), candidate) == out.end())
        out.push_back(candidate);
    }
    current = make_page(page_rel(page), row->next[order[0]]);
  }
  return out;
}

}  // namespace acesim
