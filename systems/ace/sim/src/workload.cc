#include "workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace acesim {

namespace {

template <typename T>
bool parse_uint(std::string_view text, T* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read trace file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<Op> read_trace(const std::string& path, const std::string& format) {
  if (format != "pg" && format != "simple")
    throw InputError("--trace-format must be pg or simple, not '" + format + "'");
  const std::string text = slurp(path);
  std::vector<Op> ops;
  ops.reserve(text.size() / 24);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> forks;
  std::unordered_map<uint32_t, uint64_t> last_read;  // per pid
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    line_no++;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    auto bad = [&](const char* expected) {
      return InputError(path + ":" + std::to_string(line_no) + ": expected " + expected + ", got '" +
                        std::string(line.substr(0, 80)) + "'");
    };
    if (format == "pg") {
      std::string_view f[7];
      size_t n = 0, start = 0;
      for (size_t i = 0; i <= line.size() && n < 7; i++) {
        if (i == line.size() || line[i] == ',') {
          f[n++] = line.substr(start, i - start);
          start = i + 1;
        }
      }
      uint32_t pid, spc, db, rel, fork, block;
      if (n != 7 || start <= line.size() || !parse_uint(f[0], &pid) || !parse_uint(f[1], &spc) ||
          !parse_uint(f[2], &db) || !parse_uint(f[3], &rel) || !parse_uint(f[4], &fork) || !parse_uint(f[5], &block) ||
          (f[6] != "R" && f[6] != "W"))
        throw bad("pid,tablespace,database,relfilenode,fork,block,R|W");
      auto [it, inserted] = forks.try_emplace({spc, db, rel, fork}, static_cast<uint32_t>(forks.size()));
      const uint64_t page = make_page(it->second, block);
      Op::Kind kind = Op::kDirty;
      if (f[6] == "R") {
        auto [last, first] = last_read.try_emplace(pid, page);
        kind = !first && last->second == page ? Op::kRepin : Op::kRead;
        last->second = page;
      }
      ops.push_back(Op{page, pid, kind});
    } else {
      uint32_t block;
      if (line.size() < 3 || (line[0] != 'R' && line[0] != 'W') || line[1] != ' ' ||
          !parse_uint(line.substr(2), &block))
        throw bad("'R <page>' or 'W <page>' (page < 2^32)");
      ops.push_back(Op{make_page(0, block), 0, line[0] == 'R' ? Op::kRead : Op::kWrite});
    }
  }
  return ops;
}

SyntheticGenerator::SyntheticGenerator(const Synthetic& spec)
    : spec_(spec),
      hot_(static_cast<uint64_t>(std::floor(static_cast<double>(spec.pages) * spec.hot_pages_pct / 100.0))),
      rng_(spec.seed) {
  if (hot_ > spec_.pages) hot_ = spec_.pages;
}

Op SyntheticGenerator::next() {
  const bool read = rng_.uniform() * 100.0 < spec_.read_pct;
  const bool hot = rng_.uniform() * 100.0 < spec_.hot_ops_pct;
  uint64_t page;
  if (hot_ > 0 && (hot || hot_ == spec_.pages))
    page = rng_.below(hot_);
  else
    page = hot_ + rng_.below(spec_.pages - hot_);
  return Op{make_page(0, static_cast<uint32_t>(page)), 0, read ? Op::kRead : Op::kWrite};
}

std::vector<uint32_t> relation_sizes(const std::vector<Op>& ops) {
  std::vector<uint32_t> sizes;
  for (const Op& op : ops) {
    const uint32_t rel = page_rel(op.page);
    if (rel >= sizes.size()) sizes.resize(rel + 1, 0);
    sizes[rel] = std::max(sizes[rel], page_block(op.page) + 1);
  }
  return sizes;
}

void replay(Simulator& sim, const std::vector<Op>& ops, bool repins) {
  sim.set_nblocks(relation_sizes(ops));
  for (const Op& op : ops) {
    if (op.kind == Op::kDirty)
      sim.mark_dirty(op.page, op.pid);
    else
      sim.access(op.page, op.kind == Op::kWrite, op.pid, repins && op.kind == Op::kRepin);
  }
}

void replay(Simulator& sim, const Synthetic& spec) {
  sim.set_nblocks({static_cast<uint32_t>(spec.pages)});
  SyntheticGenerator gen(spec);
  for (uint64_t i = 0; i < spec.ops; i++) {
    Op op = gen.next();
    sim.access(op.page, op.kind == Op::kWrite, op.pid);
  }
}

}  // namespace acesim
