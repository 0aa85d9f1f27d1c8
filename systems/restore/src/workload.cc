#include "workload.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "artifact/quote.h"

namespace restore {

using artifact::escaped;
using artifact::excerpt;

namespace {

bool parse_double(const std::string& s, double* out) {
  if (s.empty()) return false;
  size_t used = 0;
  try {
    *out = std::stod(s, &used);
  } catch (...) {
    return false;
  }
  return used == s.size() && std::isfinite(*out);
}

bool parse_uint(const std::string& s, uint64_t* out) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) return false;
  try {
    *out = std::stoull(s);
  } catch (...) {
    return false;
  }
  return true;
}

std::string preset(const std::string& name) {
  if (name == "5hf90") return "5hf90@0";
  if (name == "10hf90") return "10hf90@1";
  if (name == "10hf80") return "10hf80@1";
  if (name == "A") return "5hf90@0+10hf80@1";
  if (name == "B") return "5hf90@0+10hf80@1+20hf80@2";
  if (name == "C") return "5hf90*10";
  if (name == "D") return "5hf90*50";
  if (name == "ycsb") return "zipf0.99";
  return name;
}

uint64_t fnv1a64(uint64_t v) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < 8; i++) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

bool parse_workload(const std::string& name, std::vector<Phase>* phases, std::string* error) {
  phases->clear();
  const std::string text = preset(name);
  uint32_t auto_set = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t plus = text.find('+', start);
    std::string term = text.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
    start = plus == std::string::npos ? text.size() + 1 : plus + 1;
    uint64_t repeat = 1;
    if (size_t star = term.find('*'); star != std::string::npos) {
      if (!parse_uint(term.substr(star + 1), &repeat) || repeat < 1 || repeat > 100000) {
        *error = "bad repeat count in " + excerpt(term);
        return false;
      }
      term = term.substr(0, star);
    }
    Phase ph;
    bool explicit_set = false;
    if (size_t at = term.find('@'); at != std::string::npos) {
      uint64_t set = 0;
      if (!parse_uint(term.substr(at + 1), &set) || set > 1000000) {
        *error = "bad hot-set number in " + excerpt(term);
        return false;
      }
      ph.set = static_cast<uint32_t>(set);
      explicit_set = true;
      term = term.substr(0, at);
    }
    if (term == "uniform") {
      ph.kind = Phase::kUniform;
    } else if (term.rfind("zipf", 0) == 0) {
      ph.kind = Phase::kZipf;
      if (term.size() > 4 && (!parse_double(term.substr(4), &ph.theta) || ph.theta <= 0 || ph.theta >= 1)) {
        *error = "zipf THETA must be in (0, 1) in " + excerpt(term);
        return false;
      }
    } else if (size_t hf = term.find("hf"); hf != std::string::npos) {
      if (!parse_double(term.substr(0, hf), &ph.hot_pages_pct) || !parse_double(term.substr(hf + 2), &ph.hot_ops_pct) ||
          ph.hot_pages_pct <= 0 || ph.hot_pages_pct > 100 || ph.hot_ops_pct < 0 || ph.hot_ops_pct > 100) {
        *error = excerpt(term) + " is not XhfY with X in (0, 100] and Y in [0, 100]";
        return false;
      }
    } else {
      *error = "unknown workload term " + excerpt(term) +
               " (presets: 5hf90, 10hf90, 10hf80, A, B, C, D, ycsb; or XhfY[@SET][*N], zipf[THETA], uniform "
               "joined by +)";
      return false;
    }
    for (uint64_t k = 0; k < repeat; k++) {
      Phase p = ph;
      if (!explicit_set)
        p.set = auto_set++;
      else
        p.set = ph.set + static_cast<uint32_t>(k);
      phases->push_back(p);
    }
  }
  if (phases->empty()) {
    *error = "empty workload";
    return false;
  }
  return true;
}

SyntheticWorkload::SyntheticWorkload(std::vector<Phase> phases, uint32_t pages, uint64_t requests, double read_pct,
                                     uint64_t seed)
    : phases_(std::move(phases)),
      pages_(pages),
      requests_(requests),
      read_pct_(read_pct),
      seed_(seed),
      pick_(0),
      ops_(0) {
  if (pages == 0 || phases_.empty()) throw std::invalid_argument("a workload needs pages and phases");
  reset();
}

uint64_t SyntheticWorkload::phase_end(size_t k) const {
  // Equal phase lengths; the last phase takes the remainder.
  const uint64_t n = phases_.size();
  return k + 1 >= n ? requests_ : static_cast<uint64_t>((static_cast<unsigned __int128>(requests_) * (k + 1)) / n);
}

std::vector<uint32_t> SyntheticWorkload::hot_set(size_t phase) const {
  const Phase& ph = phases_[phase];
  uint64_t h = static_cast<uint64_t>(std::llround(ph.hot_pages_pct / 100.0 * pages_));
  h = std::clamp<uint64_t>(h, 1, pages_);
  // The first h entries of a permutation seeded by (seed, set): a partial Fisher-Yates shuffle.
  std::vector<uint32_t> perm(pages_);
  for (uint32_t i = 0; i < pages_; i++) perm[i] = i;
  SplitMix64 g(derive_seed(seed_, 1000 + ph.set));
  for (uint64_t i = 0; i < h; i++) std::swap(perm[i], perm[i + g.below(pages_ - i)]);
  perm.resize(h);
  std::sort(perm.begin(), perm.end());
  return perm;
}

void SyntheticWorkload::start_phase(size_t k) {
  phase_ = k;
  end_ = phase_end(k);
  const Phase& ph = phases_[k];
  hot_.clear();
  is_hot_.clear();
  if (ph.kind == Phase::kHot) {
    hot_ = hot_set(k);
    is_hot_.assign(pages_, 0);
    for (uint32_t p : hot_) is_hot_[p] = 1;
  } else if (ph.kind == Phase::kZipf) {
    // YCSB's ZipfianGenerator (Gray et al., SIGMOD'94) over items 0..n-1.
    const double n = pages_, theta = ph.theta;
    double zetan = 0;
    for (uint64_t i = 1; i <= pages_; i++) zetan += 1.0 / std::pow(static_cast<double>(i), theta);
    const double zeta2 = 1.0 + 1.0 / std::pow(2.0, theta);
    zetan_ = zetan;
    zalpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2 / zetan);
    half_pow_theta_ = 1.0 + std::pow(0.5, theta);
    scramble_ = derive_seed(seed_, 2000 + ph.set);
  }
}

void SyntheticWorkload::reset() {
  pick_ = SplitMix64(derive_seed(seed_, 1));
  ops_ = SplitMix64(derive_seed(seed_, 2));
  issued_ = 0;
  start_phase(0);
}

void SyntheticWorkload::next(uint32_t* page, Op* op) {
  while (issued_ >= end_ && phase_ + 1 < phases_.size()) start_phase(phase_ + 1);
  issued_++;
  const Phase& ph = phases_[phase_];
  switch (ph.kind) {
    case Phase::kUniform: *page = static_cast<uint32_t>(pick_.below(pages_)); break;
    case Phase::kZipf: {
      const double u = pick_.uniform();
      const double uz = u * zetan_;
      uint64_t item;
      if (uz < 1.0)
        item = 0;
      else if (uz < half_pow_theta_)
        item = 1;
      else
        item = static_cast<uint64_t>(pages_ * std::pow(eta_ * u - eta_ + 1.0, zalpha_));
      if (item >= pages_) item = pages_ - 1;
      *page = static_cast<uint32_t>(fnv1a64(item ^ scramble_) % pages_);  // YCSB's scrambling
      break;
    }
    case Phase::kHot: {
      const bool hot = hot_.size() == pages_ || pick_.uniform() * 100.0 < ph.hot_ops_pct;
      if (hot) {
        *page = hot_[pick_.below(hot_.size())];
      } else {
        uint32_t p;
        do p = static_cast<uint32_t>(pick_.below(pages_));
        while (is_hot_[p]);
        *page = p;
      }
      break;
    }
  }
  *op = ops_.uniform() * 100.0 < read_pct_ ? Op::kRead : Op::kWrite;
}

TraceWorkload::TraceWorkload(std::shared_ptr<const std::vector<uint32_t>> requests, uint32_t pages, uint64_t limit)
    : data_(std::move(requests)), pages_(pages), n_(std::min<uint64_t>(limit, data_->size())) {}

namespace {

// A page id: digits only (from_chars takes no sign or space), below 2^31.
bool parse_page(std::string_view s, uint64_t* out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size() && *out < (1ULL << 31);
}

// Empty, or digits with at most one '.' and at least one digit.
bool valid_timestamp(std::string_view s) {
  size_t digits = 0, points = 0;
  for (const char c : s) {
    if (c >= '0' && c <= '9')
      digits++;
    else if (c == '.')
      points++;
    else
      return false;
  }
  return s.empty() || (digits > 0 && points <= 1);
}

}  // namespace

Trace read_trace(const std::string& path) {
  const std::string file = escaped(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read trace file " + file);
  auto data = std::make_shared<std::vector<uint32_t>>();
  Trace t;
  std::vector<char> buffer(kMaxTraceLine + 1);  // getline stores at most size - 1 bytes
  uint64_t line_no = 0;
  uint64_t max_page = 0;
  bool any = false, first = true;
  for (bool more = true; more;) {
    in.getline(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<size_t>(in.gcount());  // the line break included, when there is one
    more = !in.eof();
    if (in.bad()) throw std::runtime_error("cannot read trace file " + file + " after line " + std::to_string(line_no));
    if (in.fail() && more)  // kMaxTraceLine bytes and no line break after them
      throw std::runtime_error(file + ":" + std::to_string(line_no + 1) + ": a line longer than " +
                               std::to_string(kMaxTraceLine) +
                               " bytes; a page trace has one short request per line (page,op[,timestamp])");
    if (got == 0 && !more) break;  // the end, after a line break
    line_no++;
    std::string_view line(buffer.data(), more ? got - 1 : got);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    // The header by its exact names only, on the first line that is not a comment: anything else
    // is a request, checked (a first line "-1,R" is an error, not a header).
    if (first) {
      first = false;
      if (line == "page,op" || line == "page,op,timestamp") continue;
    }
    const auto where = [&] { return file + ":" + std::to_string(line_no) + ": "; };  // made only for an error
    if (std::count(line.begin(), line.end(), ',') > 2)
      throw std::runtime_error(where() + "expected page,op[,timestamp], got more fields: " + excerpt(line));
    // The commas, or the line's end: a field that is not there is empty (and an empty page or op is refused).
    const size_t c1 = std::min(line.find(','), line.size());
    const size_t c2 = std::min(line.find(',', c1 + 1), line.size());
    const std::string_view page_text = line.substr(0, c1);
    const std::string_view op_text = c1 < line.size() ? line.substr(c1 + 1, c2 - c1 - 1) : std::string_view();
    const std::string_view timestamp = c2 < line.size() ? line.substr(c2 + 1) : std::string_view();
    uint64_t page = 0;
    if (!parse_page(page_text, &page))
      throw std::runtime_error(where() + "page must be an integer in [0, 2^31), got " + excerpt(page_text));
    Op op;
    if (op_text == "R" || op_text == "r")
      op = Op::kRead;
    else if (op_text == "W" || op_text == "w")
      op = Op::kWrite;
    else
      throw std::runtime_error(where() + "op must be R or W, got " + excerpt(op_text));
    if (!valid_timestamp(timestamp))
      throw std::runtime_error(where() +
                               "timestamp must be empty or a non-negative decimal number (digits with at most one "
                               "'.'), got " +
                               excerpt(timestamp));
    data->push_back(static_cast<uint32_t>(page << 1) | static_cast<uint32_t>(op));
    if (op == Op::kRead) t.reads++;
    max_page = std::max(max_page, page);
    any = true;
  }
  if (!any) throw std::runtime_error("trace file " + file + " has no requests");
  t.pages = static_cast<uint32_t>(max_page + 1);
  t.requests = data;
  return t;
}

std::vector<uint32_t> count_accesses(Workload& w) {
  std::vector<uint32_t> counts(w.pages(), 0);
  w.reset();
  uint32_t page;
  Op op;
  for (uint64_t i = 0; i < w.requests(); i++) {
    w.next(&page, &op);
    counts[page]++;
  }
  w.reset();
  return counts;
}

}  // namespace restore
