#include "cli.h"

#include <fcntl.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "artifact/atomic_file.h"
#include "artifact/command_line.h"
#include "artifact/options.h"
#include "artifact/wire.h"
#include "remote_policy.h"

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
  --args-file FILE              first, if given: the arguments from FILE, one per line (options other
                                processes must not see on the command line), then the rest
  --remote-fds IN,OUT           --policy runs in another process (a policy host, remote_policy.h): this one
                                writes its questions to file descriptor OUT and reads the answers from IN
)";
}

namespace {

using artifact::fixed;
using artifact::in_range;
using artifact::parse_number;
using artifact::shortest;

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
  const artifact::Options given(
      "ace-sim", args, 0,
      {"policy",          "ace",          "prefetch",  "n-w",  "n-e",       "pool-pages",        "cflru-window",
       "read-latency-us", "alpha",        "k-r",       "k-w",  "page-size", "cpu-us-per-access", "seed",
       "trace",           "trace-format", "pg-repins", "ops",  "pages",     "read-pct",          "hot-ops-pct",
       "hot-pages-pct",   "out",          "io-log",    "grid", "remote-fds"},
      {"synthetic", "help"}, artifact::Options::Repeats::kLaterWins);
  Options o;
  o.help = given.has("help");
  o.synthetic = given.has("synthetic");
  bool synthetic_option = false;  // --ops etc. given
  const double max_pages = 4294967296.0;
  for (const auto& [name, value] : given.values()) {
    Config& c = o.config;
    if (name == "policy") {
      c.policy = value;  // checked below, once --remote-fds is known
    } else if (name == "ace") {
      c.ace = artifact::on_off(name, value);
    } else if (name == "prefetch") {
      c.prefetch = artifact::one_of<Prefetch>(
          name, value,
          {{"off", Prefetch::kOff}, {"sequential", Prefetch::kSequential}, {"history", Prefetch::kHistory}});
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
      o.trace_format = artifact::one_of<std::string>(name, value, {{"pg", "pg"}, {"simple", "simple"}});
    } else if (name == "pg-repins") {
      o.pg_repins = artifact::on_off(name, value);
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
    } else if (name == "remote-fds") {
      try {
        artifact::wire::parse_fds(value, &o.remote_in, &o.remote_out);
      } catch (const std::invalid_argument& e) {
        throw InputError(std::string("--remote-fds ") + e.what());
      }
      for (int fd : {o.remote_in, o.remote_out})
        if (fd == 1 || fd == 2)
          throw InputError("--remote-fds cannot use file descriptor " + std::to_string(fd) +
                           ": stdout and stderr carry the CSV and the messages");
      o.remote = true;
    } else {
      throw std::logic_error("--" + name + " is accepted but never read");
    }
  }
  if (!o.grid.empty() && !o.io_log.empty()) throw InputError("--io-log logs one configuration, not a --grid");
  if (!o.grid.empty() && o.remote)
    throw InputError("--remote-fds runs one configuration with one policy process, not a --grid");
  const std::string& policy = o.config.policy;
  if (!o.remote && !known_policy(policy))
    throw InputError("--policy must be one of " + policy_names() + ", not '" + policy + "'");
  // the policy process's policy: only its name is known here, which the CSV shows
  if (o.remote && (policy.empty() || !std::all_of(policy.begin(), policy.end(), [](char ch) {
                     return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
                   })))
    throw InputError("--policy must be a name of lowercase letters, digits and _, not '" + policy + "'");
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
    throw InputError(
        "--prefetch is not available with --policy expcache (where a prefetched page "
        "would go is not defined)");
  return o;
}

const artifact::Grid kGrid = {{"grid", "out", "io-log", "remote-fds"}, {"synthetic"}};

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
  row << c.policy << ',' << (c.ace ? "on" : "off") << ',' << prefetch_name(c.prefetch) << ',' << c.n_w << ',' << c.n_e
      << ',' << c.pool_pages << ',' << shortest(c.cflru_window) << ',' << shortest(c.device.read_latency_us) << ','
      << shortest(c.device.alpha) << ',' << c.device.k_r << ',' << c.device.k_w << ',' << c.device.page_size << ','
      << shortest(c.cpu_us_per_access) << ','
      << (!o.synthetic && o.trace_format == "pg" ? (o.pg_repins ? "on" : "off") : "") << ',';
  if (o.synthetic) {
    const Synthetic& w = o.workload;
    row << "synthetic," << w.ops << ',' << w.pages << ',' << shortest(w.read_pct) << ',' << shortest(w.hot_ops_pct)
        << ',' << shortest(w.hot_pages_pct) << ',';
  } else {
    std::string name = artifact::basename(o.trace);
    if (name.find(',') != std::string::npos) name = "\"" + name + "\"";
    row << name << ",,,,,,";
  }
  row << c.seed << ',' << k.accesses << ',' << k.hits << ',' << k.misses << ',' << fixed(sim.hit_ratio(), 6) << ','
      << k.dirty_evictions << ',' << k.pages_written << ',' << k.write_batches << ',' << k.prefetch_issued << ','
      << k.prefetch_used << ',' << k.w_nonresident << ',' << fixed(sim.virtual_runtime_us(), 3) << '\n';
  return row.str();
}

std::string Runner::run(const Options& o) {
  const std::vector<Op>* ops = nullptr;  // the trace, read before a policy process is asked anything
  if (!o.synthetic) {
    auto& trace = traces_[std::make_pair(o.trace, o.trace_format)];
    if (!trace) trace = std::make_shared<std::vector<Op>>(read_trace(o.trace, o.trace_format));
    ops = trace.get();
  }
  Config config = o.config;
  RemotePolicy* remote = nullptr;
  if (o.remote) {
    for (int fd : {o.remote_in, o.remote_out})
      if (::fcntl(fd, F_GETFD) == -1)
        throw InputError("--remote-fds: file descriptor " + std::to_string(fd) + " is not open");
    config.policy_factory = [&](const std::vector<FrameState>& frames, const PolicyOptions& options) {
      auto policy = std::make_unique<RemotePolicy>(frames, o.config.policy, options, o.remote_in, o.remote_out);
      remote = policy.get();
      return std::unique_ptr<Policy>(std::move(policy));
    };
  }
  Simulator sim(config);
  std::ostringstream io_log;
  if (!o.io_log.empty()) sim.set_io_log(&io_log);
  if (ops)
    replay(sim, *ops, o.pg_repins);
  else
    replay(sim, o.workload);
  if (remote) remote->finish();  // every notification reached the policy, and none threw
  if (!o.io_log.empty()) artifact::write_file_atomically(o.io_log, io_log.str());
  return csv_row(o, sim);
}

int main_with_args(const std::vector<std::string>& given) {
  return artifact::guarded_main<PolicyError>("ace-sim", [&] {
    const std::vector<std::string> args = artifact::with_args_file(given);
    Options o = parse_args(args);
    if (o.help) {
      std::cout << usage();
      return 0;
    }
    Runner runner;
    std::string text = csv_header();
    if (o.grid.empty())
      text += runner.run(o);
    else
      text += artifact::run_grid(o.grid, args, kGrid, [&](const auto& row) { return runner.run(parse_args(row)); });
    return artifact::write_output(o.out, text);
  });
}

}  // namespace acesim
