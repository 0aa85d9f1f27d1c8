// ACE's Reader: the TaP sequential detector and the history-based predictor, as the
// patched PostgreSQL's ace_predict.c implements them (AceTapObserve, AceHistoryObserve,
// AceHistoryPredict). A page is (relation fork << 32) | block; predictions stay within the
// fork of the missed page. PostgreSQL keeps one predictor per process; so does the
// simulator, per pid of the trace.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace acesim {

inline uint64_t make_page(uint32_t rel, uint32_t block) { return (static_cast<uint64_t>(rel) << 32) | block; }
inline uint32_t page_rel(uint64_t page) { return static_cast<uint32_t>(page >> 32); }
inline uint32_t page_block(uint64_t page) { return static_cast<uint32_t>(page); }

constexpr int kTapEntries = 256;
constexpr int kTapTrigger = 4;
constexpr int kHistoryEntries = 65536;
constexpr int kHistoryFanout = 3;
constexpr int kHistoryThreshold = 2;

// ace_predict.c's FifoTable: a bounded map; when full, the key entered first leaves. A key
// removed early keeps its slot in the order until that slot's turn, and that turn then
// removes the key if it is present again: exactly what the C code does.
template <typename Entry>
class FifoTable {
 public:
  explicit FifoTable(int capacity) : capacity_(capacity), order_(capacity) {}
  Entry* find(uint64_t key) {
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }
  void remove(uint64_t key) { map_.erase(key); }
  const std::unordered_map<uint64_t, Entry>& entries() const { return map_; }
  Entry* enter(uint64_t key) {
    if (Entry* e = find(key)) return e;
    if (used_ == capacity_) {
      map_.erase(order_[oldest_]);
      oldest_ = (oldest_ + 1) % capacity_;
      used_--;
    }
    order_[(oldest_ + used_) % capacity_] = key;
    used_++;
    return &(map_[key] = Entry{});
  }

 private:
  int capacity_;
  std::vector<uint64_t> order_;
  int oldest_ = 0, used_ = 0;
  std::unordered_map<uint64_t, Entry> map_;
};

class Predictor {
 public:
  Predictor() : tap_(kTapEntries), history_(kHistoryEntries) {}
  // TaP: the length of the sequential run this miss belongs to (1 if none).
  int tap_observe(uint64_t page);
  // TaP triggered: the stream's next miss is expected at `after`, continuing `run`.
  void tap_continue(uint64_t after, int run) { tap_.enter(after)->run = run; }
  // History: this miss followed the previous one (of the same fork).
  void history_observe(uint64_t page);
  // History: up to `max` likely next blocks after `page`, most likely first.
  std::vector<uint32_t> history_predict(uint64_t page, int max);

  struct HistoryRow {  // NextPages and Weights of one row (thesis Figure 4.7)
    uint32_t next[kHistoryFanout] = {0, 0, 0};
    int weight[kHistoryFanout] = {0, 0, 0};
  };
  // The history table as it stands, by page (ace-sim-history draws it).
  std::map<uint64_t, HistoryRow> history_table() const {
    return {history_.entries().begin(), history_.entries().end()};
  }

 private:
  struct TapEntry {
    int run = 0;
  };
  FifoTable<TapEntry> tap_;
  FifoTable<HistoryRow> history_;
  uint64_t prev_ = 0;
  bool have_prev_ = false;
};

}  // namespace acesim
