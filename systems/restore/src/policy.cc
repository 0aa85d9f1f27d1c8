#include "policy.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace restore {

// ---------------------------------------------------------------------------------------------

Policy::Policy(const std::vector<TierSpec>& tiers, uint32_t pages)
    : tiers_(tiers), pages_(pages), tier_(pages, 0), size_(tiers.size(), 0) {
  if (tiers.size() < 2 || tiers.size() > 8) throw std::invalid_argument("2 to 8 tiers are supported");
}

void Policy::place(const std::vector<uint8_t>& tier_of) {
  if (tier_of.size() != pages_) throw std::invalid_argument("placement size differs from the page count");
  std::fill(size_.begin(), size_.end(), 0);
  for (uint32_t p = 0; p < pages_; p++) {
    if (tier_of[p] >= tiers_.size()) throw std::invalid_argument("placement names a missing tier");
    tier_[p] = tier_of[p];
    size_[tier_of[p]]++;
  }
  for (size_t t = 0; t < tiers_.size(); t++)
    if (size_[t] > tiers_[t].capacity_pages) throw std::invalid_argument("placement overfills a tier");
}

void Policy::move(uint32_t page, int to, std::vector<Move>& moves) {
  const int from = tier_[page];
  tier_[page] = static_cast<uint8_t>(to);
  size_[static_cast<size_t>(from)]--;
  size_[static_cast<size_t>(to)]++;
  moves.push_back(Move{page, static_cast<uint8_t>(from), static_cast<uint8_t>(to)});
}

size_t Policy::memory_bytes() const { return tier_.capacity() + size_.capacity() * sizeof(uint64_t); }

// ---------------------------------------------------------------------------------------------

HeapPolicy::HeapPolicy(const std::vector<TierSpec>& tiers, uint32_t pages)
    : Policy(tiers, pages),
      key_(pages, 0.0),
      tie_(pages, 0),
      pos_(pages, kNone),
      heaps_(tiers.size()),
      heaped_(tiers.size()) {
  for (size_t t = 0; t < tiers.size(); t++) heaped_[t] = tiers[t].capacity_pages < pages;
}

void HeapPolicy::place(const std::vector<uint8_t>& tier_of) {
  Policy::place(tier_of);
  for (auto& h : heaps_) h.clear();
  std::fill(pos_.begin(), pos_.end(), kNone);
  for (uint32_t p = 0; p < pages_; p++)
    if (heaped_[tier_[p]]) heap_insert(tier_[p], p);
}

size_t HeapPolicy::memory_bytes() const {
  size_t bytes = Policy::memory_bytes() + key_.capacity() * sizeof(double) +
                 (tie_.capacity() + pos_.capacity()) * sizeof(uint32_t);
  for (const auto& h : heaps_) bytes += h.capacity() * sizeof(uint32_t);
  return bytes;
}

bool HeapPolicy::less(uint32_t a, uint32_t b) const {
  if (key_[a] != key_[b]) return key_[a] < key_[b];
  if (tie_[a] != tie_[b]) return tie_[a] < tie_[b];
  return a < b;
}

void HeapPolicy::sift_up(std::vector<uint32_t>& h, size_t i) {
  uint32_t page = h[i];
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!less(page, h[parent])) break;
    h[i] = h[parent];
    pos_[h[i]] = static_cast<uint32_t>(i);
    i = parent;
  }
  h[i] = page;
  pos_[page] = static_cast<uint32_t>(i);
}

void HeapPolicy::sift_down(std::vector<uint32_t>& h, size_t i) {
  uint32_t page = h[i];
  const size_t n = h.size();
  while (true) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && less(h[child + 1], h[child])) child++;
    if (!less(h[child], page)) break;
    h[i] = h[child];
    pos_[h[i]] = static_cast<uint32_t>(i);
    i = child;
  }
  h[i] = page;
  pos_[page] = static_cast<uint32_t>(i);
}

void HeapPolicy::heap_insert(int tier, uint32_t page) {
  auto& h = heaps_[static_cast<size_t>(tier)];
  h.push_back(page);
  sift_up(h, h.size() - 1);
}

void HeapPolicy::heap_remove(int tier, uint32_t page) {
  auto& h = heaps_[static_cast<size_t>(tier)];
  size_t i = pos_[page];
  pos_[page] = kNone;
  uint32_t last = h.back();
  h.pop_back();
  if (i < h.size()) {
    h[i] = last;
    pos_[last] = static_cast<uint32_t>(i);
    sift_up(h, i);
    sift_down(h, pos_[last]);
  }
}

void HeapPolicy::set_key(uint32_t page, double key, uint32_t tie) {
  key_[page] = key;
  tie_[page] = tie;
  uint32_t i = pos_[page];
  if (i == kNone) return;
  auto& h = heaps_[tier_[page]];
  sift_up(h, i);
  sift_down(h, pos_[page]);
}

void HeapPolicy::move_page(uint32_t page, int to, std::vector<Move>& moves) {
  const int from = tier_[page];
  if (heaped_[static_cast<size_t>(from)]) heap_remove(from, page);
  move(page, to, moves);
  if (heaped_[static_cast<size_t>(to)]) heap_insert(to, page);
  moved(page, from, to);
}

void HeapPolicy::promote(uint32_t page, std::vector<Move>& moves) {
  const int from = tier_[page];
  const int to = from - 1;
  if (full(to) && victim_after_insert_) {
    move_page(page, to, moves);
    move_page(lowest(to), from, moves);  // `page` itself if it is the coldest: it goes straight back
  } else if (full(to)) {
    const uint32_t victim = lowest(to);
    move_page(page, to, moves);
    move_page(victim, from, moves);
  } else {
    move_page(page, to, moves);
  }
}

// ---------------------------------------------------------------------------------------------

PlacementCheck::PlacementCheck(std::string policy, const std::vector<TierSpec>& tiers,
                               const std::vector<uint8_t>& tier_of)
    : policy_(std::move(policy)), size_(tiers.size(), 0), tier_(tier_of) {
  for (const TierSpec& t : tiers) capacity_.push_back(t.capacity_pages);
  for (uint8_t t : tier_) size_[t]++;
}

void PlacementCheck::fail(const std::string& what) const { throw PolicyError("policy '" + policy_ + "': " + what); }

int PlacementCheck::tier(uint32_t page, const Policy& policy) const {
  const int ours = tier_[page], theirs = policy.tier_of(page);
  if (ours != theirs)
    fail("page " + std::to_string(page) + " is in tier " + std::to_string(theirs + 1) +
         " by the policy's account, but its moves left it in tier " + std::to_string(ours + 1) +
         " (a move not reported in `moves`?)");
  return ours;
}

void PlacementCheck::apply(const std::vector<Move>& moves) {
  const int tiers = static_cast<int>(size_.size());
  for (const Move& m : moves) {
    const std::string page = "page " + std::to_string(m.page);
    if (m.page >= tier_.size()) fail("moved " + page + ", which does not exist");
    if (m.from != tier_[m.page])
      fail("moved " + page + " from tier " + std::to_string(m.from + 1) + ", but it is in tier " +
           std::to_string(tier_[m.page] + 1));
    if (m.to >= tiers || (m.to != m.from + 1 && m.to + 1 != m.from))
      fail("moved " + page + " from tier " + std::to_string(m.from + 1) + " to tier " + std::to_string(m.to + 1) +
           ": pages move to a neighbouring tier");
    tier_[m.page] = m.to;
    size_[m.from]--;
    size_[m.to]++;
  }
  for (int t = 0; t < tiers; t++)
    if (size_[t] > capacity_[t])
      fail("tier " + std::to_string(t + 1) + " holds " + std::to_string(size_[t]) +
           " pages after a request, more than its capacity of " + std::to_string(capacity_[t]));
}

}  // namespace restore
