#include "cli.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace acesim {

const char* usage() {
  return R"(usage: ace-sim --pool-pages N (--trace FILE [--trace-format pg|simple] | --synthetic --ops N --pages P
               [--read-pct R] [--hot-ops-pct S] [--hot-pages-pct D]) [options]
       ace-sim --grid CONFIGS.csv [options shared by every row]

  --policy lru|cflru|lru_wsr|clock|expcache   replacement policy (lru)
  --ace on|off                  ACE's Writer: a dirty victim is written with the next n_w-1 dirty pages (off)
  --prefetch off|sequential|history   ACE's Reader, needs --ace on, not with expcache (off)
  --n-w N, --n-e N              pages per write batch / read at once when prefetching (8, 8)
  --cflru-window F              CFLRU's clean-first region, fraction of the pool (1/3)
  --read-latency-us F --alpha F --k-r N --k-w N --page-size N
                                the device (100, 2.8, 80, 8, 8192: thesis Table 4.1's PCIe SSD)
  --cpu-us-per-access F         virtual time of every access (0)
  --pg-repins on|off            pg traces: an R line repeating the process's previous R line is a
                                re-pin, a hit that leaves the policy alone, as in PostgreSQL (on)
  --seed X                      synthetic workload and ExpCache's expert sampling (1)
  --out FILE                    CSV output (stdout)
  --io-log FILE                 every I/O phase, one line each: R|W and the pages read or written at once
  --grid FILE                   one configuration per row: a header of option names, then values
)";
}

namespace {

template <typename T>
T parse_number(const std::string& name, const std::string& text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  bool ok = ec == std::errc() && end == text.data() + text.size() && !text.empty();
  if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(value);
  if (!ok) throw InputError("--" + name + " needs a number, got '" + text + "'");
  return value;
}

template <typename T>
T in_range(const std::string& name, T value, T lo, T hi) {
  if (value < lo || value > hi) {
    std::ostringstream msg;
    msg << "--" << name << " must be in [" << lo << ", " << hi << "], got " << value;
    throw InputError(msg.str());
  }
  return value;
}

std::string fmt(double v) {  // shortest text that reads back as the same double
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

const char* prefetch_name(Prefetch p) {
  switch (p) {
    case Prefetch::kOff: return "off";
    case Prefetch::kSequential: return "sequential";
    case Prefetch::kHistory: return "history";
  }
  return "?";
}

}  // namespace

Options parse_args(const std::vector<std::string>& args) {
  Options o;
  bool synthetic_option = false;  // --ops etc. given
  const double max_pages = 4294967296.0;
  for (size_t i = 0; i < args.size(); i++) {
    std::string arg = args[i], value;
    if (arg.rfind("--", 0) != 0) throw InputError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2);
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (name != "synthetic" && name != "help") {
      if (i + 1 >= args.size()) throw InputError("--" + name + " needs a value");
      value = args[++i];
    }
    Config& c = o.config;
    if (name == "help") {
      o.help = true;
    } else if (name == "synthetic") {
      o.synthetic = true;
    } else if (name == "policy") {
      if (!known_policy(value))
        throw InputError("--policy must be one of " + policy_names() + ", not '" + value + "'");
      c.policy = value;
    } else if (name == "ace") {
      if (value != "on" && value != "off") throw InputError("--ace must be on or off, not '" + value + "'");
      c.ace = value == "on";
    } else if (name == "prefetch") {
      if (value == "off") c.prefetch = Prefetch::kOff;
      else if (value == "sequential") c.prefetch = Prefetch::kSequential;
      else if (value == "history") c.prefetch = Prefetch::kHistory;
      else throw InputError("--prefetch must be off, sequential or history, not '" + value + "'");
    } else if (name == "n-w") {
      c.n_w = in_range(name, parse_number<int>(name, value), 1, 1024);
    } else if (name == "n-e") {
      c.n_e = in_range(name, parse_number<int>(name, value), 1, 1024);
    } else if (name == "pool-pages") {
      c.pool_pages = in_range(name, parse_number<int>(name, value), 1, 1 << 30);
    } else if (name == "cflru-window") {
      c.cflru_window = in_range(name, parse_number<double>(name, value), 0.0, 1.0);
    } else if (name == "read-latency-us") {
      c.device.read_latency_us = in_range(name, parse_number<double>(name, value), 1e-9, 1e12);
    } else if (name == "alpha") {
      c.device.alpha = in_range(name, parse_number<double>(name, value), 1e-9, 1e6);
    } else if (name == "k-r") {
      c.device.k_r = in_range(name, parse_number<int>(name, value), 1, 1 << 20);
    } else if (name == "k-w") {
      c.device.k_w = in_range(name, parse_number<int>(name, value), 1, 1 << 20);
    } else if (name == "page-size") {
      c.device.page_size = in_range(name, parse_number<int>(name, value), 1, 1 << 30);
    } else if (name == "cpu-us-per-access") {
      c.cpu_us_per_access = in_range(name, parse_number<double>(name, value), 0.0, 1e12);
    } else if (name == "seed") {
      c.seed = o.workload.seed = parse_number<uint64_t>(name, value);
    } else if (name == "trace") {
      o.trace = value;
    } else if (name == "trace-format") {
      if (value != "pg" && value != "simple")
        throw InputError("--trace-format must be pg or simple, not '" + value + "'");
      o.trace_format = value;
    } else if (name == "pg-repins") {
      if (value != "on" && value != "off") throw InputError("--pg-repins must be on or off, not '" + value + "'");
      o.pg_repins = value == "on";
    } else if (name == "ops") {
      o.workload.ops = parse_number<uint64_t>(name, value);
      synthetic_option = true;
    } else if (name == "pages") {
      o.workload.pages = static_cast<uint64_t>(
          in_range(name, static_cast<double>(parse_number<uint64_t>(name, value)), 1.0, max_pages));
      synthetic_option = true;
    } else if (name == "read-pct") {
      o.workload.read_pct = in_range(name, parse_number<double>(name, value), 0.0, 100.0);
      synthetic_option = true;
    } else if (name == "hot-ops-pct") {
      o.workload.hot_ops_pct = in_range(name, parse_number<double>(name, value), 0.0, 100.0);
      synthetic_option = true;
    } else if (name == "hot-pages-pct") {
      o.workload.hot_pages_pct = in_range(name, parse_number<double>(name, value), 0.0, 100.0);
      synthetic_option = true;
    } else if (name == "out") {
      o.out = value;
    } else if (name == "io-log") {
      o.io_log = value;
    } else if (name == "grid") {
      o.grid = value;
    } else {
      throw InputError("unknown option --" + name);
    }
  }
  if (!o.grid.empty() && !o.io_log.empty()) throw InputError("--io-log logs one configuration, not a --grid");
  if (o.help || !o.grid.empty()) return o;  // a grid's rows are checked one by one

  const Config& c = o.config;
  if (c.pool_pages == 0) throw InputError("--pool-pages is required");
  if (o.synthetic == !o.trace.empty()) throw InputError("give either --trace FILE or --synthetic");
  if (!o.synthetic && synthetic_option)
    throw InputError("--ops, --pages, --read-pct, --hot-ops-pct and --hot-pages-pct need --synthetic");
  if (o.synthetic && (o.workload.ops == 0 || o.workload.pages == 0))
    throw InputError("--synthetic needs --ops N and --pages P (both at least 1)");
  if (c.prefetch != Prefetch::kOff && !c.ace) throw InputError("--prefetch needs --ace on");
  if (c.prefetch != Prefetch::kOff && c.policy == "expcache")
    throw InputError("--prefetch is not available with --policy expcache (where a prefetched page "
                     "would go is not defined)");
  return o;
}

std::vector<std::vector<std::string>> grid_rows(const std::string& path,
                                                const std::vector<std::string>& base) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read grid file " + path);
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    return cells;
  };
  std::string line;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    line_no++;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cells = split(line);
    if (header.empty()) {
      for (std::string name : cells) {
        for (char& ch : name)
          if (ch == '_') ch = '-';
        if (name == "grid" || name == "out" || name == "io-log")
          throw InputError(path + ": a grid cannot set --" + name);
        header.push_back(name);
      }
      continue;
    }
    if (cells.size() != header.size())
      throw InputError(path + ":" + std::to_string(line_no) + ": " + std::to_string(cells.size()) +
                       " cells for " + std::to_string(header.size()) + " columns");
    std::vector<std::string> args = base;
    for (size_t i = 0; i < cells.size(); i++) {
      if (cells[i].empty()) continue;
      if (header[i] == "synthetic") {
        if (cells[i] == "1" || cells[i] == "true" || cells[i] == "yes" || cells[i] == "on")
          args.push_back("--synthetic");
        continue;
      }
      args.push_back("--" + header[i]);
      args.push_back(cells[i]);
    }
    rows.push_back(args);
  }
  if (header.empty()) throw InputError(path + ": empty grid (a header line of option names is needed)");
  return rows;
}

std::string csv_header() {
  return "policy,ace,prefetch,n_w,n_e,pool_pages,cflru_window,read_latency_us,alpha,k_r,k_w,"
         "page_size,cpu_us_per_access,pg_repins,workload,ops,pages,read_pct,hot_ops_pct,hot_pages_pct,seed,"
         "accesses,hits,misses,hit_ratio,dirty_evictions,pages_written,write_batches,"
         "prefetch_issued,prefetch_used,w_nonresident,virtual_runtime_us\n";
}

std::string csv_row(const Options& o, const Simulator& sim) {
  const Config& c = o.config;
  const Counters& k = sim.counters();
  std::ostringstream row;
  row << c.policy << ',' << (c.ace ? "on" : "off") << ',' << prefetch_name(c.prefetch)
      << ',' << c.n_w << ',' << c.n_e << ',' << c.pool_pages << ',' << fmt(c.cflru_window) << ','
      << fmt(c.device.read_latency_us) << ',' << fmt(c.device.alpha) << ',' << c.device.k_r << ','
      << c.device.k_w << ',' << c.device.page_size << ',' << fmt(c.cpu_us_per_access) << ','
      << (!o.synthetic && o.trace_format == "pg" ? (o.pg_repins ? "on" : "off") : "") << ',';
  if (o.synthetic) {
    const Synthetic& w = o.workload;
    row << "synthetic," << w.ops << ',' << w.pages << ',' << fmt(w.read_pct) << ','
        << fmt(w.hot_ops_pct) << ',' << fmt(w.hot_pages_pct) << ',';
  } else {
    std::string name = basename(o.trace);
    if (name.find(',') != std::string::npos) name = "\"" + name + "\"";
    row << name << ",,,,,,";
  }
  row << c.seed << ',' << k.accesses << ',' << k.hits << ',' << k.misses << ','
      << fixed(sim.hit_ratio(), 6) << ',' << k.dirty_evictions << ',' << k.pages_written << ','
      << k.write_batches << ',' << k.prefetch_issued << ',' << k.prefetch_used << ','
      << k.w_nonresident << ',' << fixed(sim.virtual_runtime_us(), 3) << '\n';
  return row.str();
}

namespace {
// Written whole and renamed, so that a file with this name is always complete.
void write_whole(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text) || !out.flush()) throw InputError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw InputError("cannot rename " + tmp + " to " + path);
}
}  // namespace

std::string Runner::run(const Options& o) {
  Simulator sim(o.config);
  std::ostringstream io_log;
  if (!o.io_log.empty()) sim.set_io_log(&io_log);
  if (o.synthetic) {
    replay(sim, o.workload);
  } else {
    auto key = std::make_pair(o.trace, o.trace_format);
    auto& ops = traces_[key];
    if (!ops) ops = std::make_shared<std::vector<Op>>(read_trace(o.trace, o.trace_format));
    replay(sim, *ops, o.pg_repins);
  }
  if (!o.io_log.empty()) write_whole(o.io_log, io_log.str());
  return csv_row(o, sim);
}

int main_with_args(const std::vector<std::string>& args) {
  try {
    Options o = parse_args(args);
    if (o.help) {
      std::cout << usage();
      return 0;
    }
    Runner runner;
    std::string text = csv_header();
    if (o.grid.empty()) {
      text += runner.run(o);
    } else {
      std::vector<std::string> base;  // the shared options: everything but --grid
      for (size_t i = 0; i < args.size(); i++) {
        if (args[i] == "--grid") i++;
        else if (args[i].rfind("--grid=", 0) != 0) base.push_back(args[i]);
      }
      size_t n = 0;
      for (const auto& row : grid_rows(o.grid, base)) {
        n++;
        try {
          text += runner.run(parse_args(row));
        } catch (const InputError& e) {
          throw InputError(o.grid + ": configuration " + std::to_string(n) + ": " + e.what());
        }
      }
    }
    if (o.out.empty()) {
      std::cout << text;
      return std::cout.good() ? 0 : 1;
    }
    write_whole(o.out, text);
    return 0;
  } catch (const InputError& e) {
    std::cerr << "ace-sim: error: " << e.what() << "\n(ace-sim --help lists the options)\n";
    return 2;
  } catch (const PolicyError& e) {
    std::cerr << "ace-sim: error: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "ace-sim: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace acesim
