#include "cli.h"

#include <cmath>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "artifact/atomic_file.h"
#include "artifact/command_line.h"
#include "artifact/options.h"
#include "artifact/quote.h"
#include "artifact/rng.h"
#include "artifact/wire.h"
#include "remote_policy.h"
#include "temperature.h"

namespace restore {

using artifact::excerpt;

const char* usage() {
  return R"(usage: restore-sim [--engine sim|emu] [--policy P[:P...]|all] (--workload NAME | --trace FILE) [options]
       restore-sim --grid CONFIGS.csv [options shared by every row]
       restore-sim --temperature-demo [--demo-timesteps N] [--demo-requests N] [--seed X] [--temp-* ...]

 run
  --engine sim|emu              sim: discrete-event simulation in virtual time; emu: real-time
                                emulator, threads sleeping for the service time (sim)
  --policy LIST                 static, tlfu, tlru, lrfu, exd, temp, restore (or a plug-in's), colon-separated, or all
                                (restore); one output row per policy
  --seed X                      workload, arrivals and exploration (1)
  --policy-seed X               the policies' own random numbers only (--seed's)
  --remote-fds IN,OUT           run the policy --policy NAME in another process, a policy host
                                (policy_host.cc) that reads the engine's requests on its IN and
                                answers on its OUT: this engine writes to OUT and reads from IN
                                (file descriptors it inherited); one policy, --engine sim only
 workload
  --workload NAME               5hf90, 10hf90, 10hf80, A, B, C, D, ycsb, or phases XhfY[@SET][*N],
                                zipf[THETA], uniform joined by + (5hf90)
  --pages N --requests N        synthetic size (10000, 1000000); with --trace, --requests limits it
  --read-pct R                  synthetic reads in percent (50)
  --trace FILE                  page trace, CSV lines page,op[,timestamp], op R or W
 tiers (colon-separated, one value per tier, fastest first; one value applies to every tier)
  --read-latency-us L           (30:200:500, thesis L1991)
  --alpha A                     write latency = A x read latency (1.5:2:4, thesis L1991)
  --k-r K --k-w K               read / write concurrency (8:4:2 and 8:4:2, the original code's pools)
  --capacity-pct P              capacity in percent of the pages (3:8:100), or
  --capacity-pages N            capacity in pages
  --page-size B                 bytes per page, reported only (4096)
  --server-model shared|split   shared: one FIFO pool of k_r servers per tier; split: k_r read and
                                k_w write servers (shared)
 arrivals
  --arrival closed|poisson|burst  closed loop with --clients outstanding requests; open Poisson at
                                --rate requests/s; burst: every request submitted at time 0 (closed)
  --clients N                   (32)
  --rate R                      requests per second, for --arrival poisson
  --initial fill|slowest        start placement of the adaptive policies: pages 0.. fill the fastest
                                tier first (the original code), or all pages in the slowest (fill)
 CPU time
  --cpu-timing on|off           measure the time spent in the policy per access (on); off gives
                                byte-identical output for a seed
  --cpu-us-per-access F         use this modelled CPU time per access for cpu_us instead
 policies
  --lrfu-lambda F               LRFU's F(x) = 2^(-F x), x in requests (0.321928: 2^-F = 0.8, original code)
  --exd-alpha F                 EXD's S = 1 + S e^(-F dt), dt in requests (2e-8, original code)
  --temp-increase F             temperature = 1 - 0.5 e^(-F req) (0.2, thesis L1906)
  --temp-window N               req counts the requests of the last N timesteps (10)
  --temp-drop F --temp-drop-period N   temperature falls F after every N idle timesteps (0.05, 5; L1908)
  --temp-timestep N             requests per timestep (0: pages / 10)
  --temp-initial F              temperature of a page never requested (0; the original code: 0.5)
  --temp-admit none|N[:N...]    TEMP also needs a temperature above that of N requests to enter
                                each tier, fastest first (none; the original code: 3:1)
  --demote-victim before|after  a full faster tier demotes its coldest page before the promoted
                                page enters, or after, when it may be that page (before; the
                                original code: after)
  --rl-lambda F --rl-beta F     TD(lambda) trace decay and discount rate, gamma = e^(-beta tau) (0.8, 0.1)
  --rl-lr F --rl-lr-decay F     learning rate F / (1 + decay sum phi) (0.1, 100; thesis Eq. 6.6)
  --rl-p-init F                 initial rule parameters p^i (0)
  --rl-step N                   requests per TD state step (100)
  --rl-fit-window N --rl-fit-every N   membership fit over the last N observations, every M (500, 4)
  --rl-observe-every N          observe the states for the fit at each decision and TD step (0), or
                                every tier's every N requests (the original code: 4, with
                                --rl-fit-every 1)
  --rl-fit-centre mean|midrange  centre the memberships on the window's mean (mean, thesis L1847)
                                or on (max + min) / 2 (the original code)
  --rl-range-floor small|original  least range: 1e-3 for s1 and 1e-3 queued tasks for s2 (small),
                                or 0.1 / pages and 2 queued tasks (original)
  --rl-fit-start empty|original  before any observation, fixed memberships (empty), or windows
                                that start with s1 = 0.5 and s2 of 1 queued task (original)
  --rl-basis product|independent  rules mu(s1) mu(s2) (product, thesis Eq. 6.3) or the four
                                memberships alone (independent, the original code)
  --rl-b-scale F                b = F / range (10, thesis L1847)
  --rl-decision weighted|total|plain|released  Eq. 6.4 over sum_tier s1 v(s) (weighted, L1877), over
                                sum_tier |K| s1 v(s) (total), sum_tier v(s) as printed (plain), or the
                                released code's rule: upgrade iff C_j,not + C_i,up >= C_j,up + C_i,not
                                in costs, 0 if a present cost is 0 (weighted)
  --rl-reward measured|model    TD's reward: the tier's measured response times (measured, L1900) or
                                Eq. 6.1's model cost of the placement, one for all agents (the released
                                code) (measured)
  --rl-transition steps|request  a TD step every --rl-step requests (steps, Eq. 6.5), or the released
                                code's: from before to after one due request, tau 1 (needs
                                --rl-reward model) (steps)
  --rl-epsilon E[:E...]         exploration per tier pair, fastest pair first (0:0.005, original code)
  --rl-explore coin|upgrade     with probability epsilon: a coin flip between the actions (coin), or
                                an upgrade, as the original code (coin)
  --rl-init-rounds N            a TD step at each of the N requests after the first access outside
                                Tier 1, besides every --rl-step (0; the original code: 20)
  --tlru-margin none|capacity   tLRU promotes a page more recent than the faster tier's least recent
                                (none), or by more than that tier's capacity in requests (capacity,
                                the original code) (none)
  --preset released             every choice of the authors' released code (README, "The released
                                configuration"); options given beside it win, wherever they are
 output
  --dump-trace FILE             write the workload as a page trace (page,op) to FILE and run nothing
  --out FILE                    CSV output (stdout)
  --grid FILE                   one configuration per row: a header of option names, then values
  --args-file FILE              first, if given: the arguments from FILE, one per line (options other
                                processes must not see on the command line), then the rest
  --help
)";
}

namespace {

using artifact::fixed;
using artifact::in_range;
using artifact::on_off;
using artifact::one_of;
using artifact::parse_number;
using artifact::shortest;

template <typename T>
std::vector<T> parse_list(const std::string& name, const std::string& text, T lo, T hi) {
  std::vector<T> out;
  std::stringstream ss(text);
  std::string cell;
  while (std::getline(ss, cell, ':')) out.push_back(in_range(name, parse_number<T>(name, cell), lo, hi));
  if (out.empty() || out.size() > 8 || (!text.empty() && text.back() == ':'))
    throw InputError("--" + name + " needs 1 to 8 colon-separated values, got " + excerpt(text));
  return out;
}

template <typename T, typename F>
std::string join(const std::vector<T>& v, F f) {
  std::string s;
  for (size_t i = 0; i < v.size(); i++) {
    if (i) s.push_back(':');
    s.append(f(v[i]));
  }
  return s;
}

// --preset released: the choices of the authors' released code (BU-DiSC/ReStore at 8144333f,
// Run_RL.cpp, Run_TEMP.cpp, Run_tLRU.cpp), described in the README, "The released configuration".
void apply_preset(const std::string& value, Options& o) {
  if (value != "released") throw InputError("--preset must be released, not " + excerpt(value));
  PolicyParams& pp = o.config.params;
  RlParams& rl = pp.rl;
  rl.decision = RlParams::Decision::kReleased;
  rl.reward = RlParams::Reward::kModel;
  rl.transition = RlParams::Transition::kRequest;
  rl.td = TdParams{0.8, 0.1, 1e-4, 0.0, 0.0};  // lambda, beta, a fixed learning rate 1e-4, p = 0
  rl.step = 100;
  rl.init_rounds = 20;
  rl.observe_every = 4;
  rl.fit_every = 1;
  rl.fit_window = 500;
  rl.centre = RlParams::Centre::kMidrange;
  rl.floor = RlParams::Floor::kOriginal;
  rl.start = RlParams::Start::kOriginal;
  rl.basis = Basis::kIndependent;
  rl.b_scale = 5;
  rl.epsilon = {0.0, 0.005};
  rl.explore = RlParams::Explore::kUpgrade;
  // Its temperature: 1 - 0.5 e^{-0.05 req} over the last 10^4 requests, 0.02 off per 1,000 idle
  // requests, 0.5 before a page's first request; TEMP's admission 3:1; the victim chosen after.
  pp.temp.increase = 0.05;
  o.temp_timestep = 1000;
  pp.temp.window = 10;
  pp.temp.drop = 0.02;
  pp.temp.drop_period = 1;
  pp.temp.initial = 0.5;
  pp.temp_admit = {3, 1};
  pp.victim = PolicyParams::Victim::kAfter;
  pp.tlru_margin = PolicyParams::TlruMargin::kCapacity;
}

}  // namespace

// The options that take a value (parse_args reads each).
// clang-format off
const std::set<std::string> kValued = {
    "preset", "engine", "policy", "remote-fds", "seed", "policy-seed", "workload", "trace", "pages", "requests",
    "read-pct", "read-latency-us", "alpha", "k-r", "k-w", "capacity-pct", "capacity-pages", "page-size",
    "server-model", "arrival", "clients", "rate", "initial", "cpu-timing", "cpu-us-per-access", "lrfu-lambda",
    "exd-alpha", "temp-increase", "temp-window", "temp-drop", "temp-drop-period", "temp-initial", "temp-admit",
    "demote-victim", "temp-timestep", "rl-lambda", "rl-beta", "rl-lr", "rl-lr-decay", "rl-p-init", "rl-step",
    "rl-fit-window", "rl-fit-every", "rl-observe-every", "rl-fit-centre", "rl-range-floor", "rl-fit-start",
    "rl-basis", "rl-b-scale", "rl-decision", "rl-reward", "rl-transition", "tlru-margin", "rl-epsilon",
    "rl-explore", "rl-init-rounds", "demo-timesteps", "demo-requests", "dump-trace", "out", "grid"};
// clang-format on

Options parse_args(const std::vector<std::string>& args) {
  const artifact::Options given("restore-sim", args, 0, kValued, {"help", "temperature-demo"},
                                artifact::Options::Repeats::kLaterWins);
  Options o;
  o.help = given.has("help");
  o.temperature_demo = given.has("temperature-demo");
  std::vector<double> lat = {30, 200, 500}, alpha = {1.5, 2, 4};
  std::vector<int> k_r = {8, 4, 2}, k_w = {8, 4, 2};
  int page_size = 4096;
  std::string policy;                   // --policy's value
  std::optional<uint64_t> policy_seed;  // --policy-seed's, else --seed's
  SimConfig& c = o.config;
  PolicyParams& pp = c.params;
  if (given.has("preset")) apply_preset(given.str("preset"), o);  // first, so that every other option wins
  for (const auto& [name, value] : given.values()) {
    if (name == "preset") {
      // applied above
    } else if (name == "engine") {
      o.emulator = one_of<bool>(name, value, {{"sim", false}, {"emu", true}});
    } else if (name == "policy") {
      policy = value;  // checked once --remote-fds is known
    } else if (name == "remote-fds") {
      try {
        artifact::wire::parse_fds(value, &c.remote_in, &c.remote_out);
      } catch (const std::invalid_argument& e) {
        throw InputError(std::string("--remote-fds: ") + e.what());
      }
      for (int fd : {c.remote_in, c.remote_out})
        if (fd == 1 || fd == 2)
          throw InputError("--remote-fds cannot use file descriptor " + std::to_string(fd) +
                           ": stdout and stderr carry the CSV and the messages");
      o.remote_fds = value;
    } else if (name == "seed") {
      o.seed = pp.seed = parse_number<uint64_t>(name, value);
    } else if (name == "policy-seed") {
      policy_seed = parse_number<uint64_t>(name, value);
    } else if (name == "workload") {
      std::vector<Phase> phases;
      std::string error;
      if (!parse_workload(value, &phases, &error)) throw InputError("--workload: " + error);
      o.workload = value;
    } else if (name == "trace") {
      o.trace = value;
    } else if (name == "pages") {
      o.pages = in_range(name, parse_number<uint32_t>(name, value), 1u, 2147483647u);
    } else if (name == "requests") {
      o.requests = in_range<uint64_t>(name, parse_number<uint64_t>(name, value), 1, 4294967294ULL);
      o.requests_given = true;
    } else if (name == "read-pct") {
      o.read_pct = in_range(name, parse_number<double>(name, value), 0.0, 100.0);
    } else if (name == "read-latency-us") {
      lat = parse_list<double>(name, value, 1e-3, 1e9);
    } else if (name == "alpha") {
      alpha = parse_list<double>(name, value, 1e-3, 1e6);
    } else if (name == "k-r") {
      k_r = parse_list<int>(name, value, 1, 4096);
    } else if (name == "k-w") {
      k_w = parse_list<int>(name, value, 1, 4096);
    } else if (name == "capacity-pct") {
      o.capacity_pct = parse_list<double>(name, value, 0.0, 100.0);
    } else if (name == "capacity-pages") {
      o.capacity_pages = parse_list<uint64_t>(name, value, 0, 1ULL << 40);
    } else if (name == "page-size") {
      page_size = in_range(name, parse_number<int>(name, value), 1, 1 << 30);
    } else if (name == "server-model") {
      c.server_model =
          one_of<ServerModel>(name, value, {{"shared", ServerModel::kShared}, {"split", ServerModel::kSplit}});
    } else if (name == "arrival") {
      c.arrival = one_of<Arrival>(
          name, value, {{"closed", Arrival::kClosed}, {"poisson", Arrival::kPoisson}, {"burst", Arrival::kBurst}});
    } else if (name == "clients") {
      c.clients = in_range(name, parse_number<uint32_t>(name, value), 1u, 1000000u);
    } else if (name == "rate") {
      c.rate_per_s = in_range(name, parse_number<double>(name, value), 1e-6, 1e12);
    } else if (name == "initial") {
      c.initial = one_of<Initial>(name, value, {{"fill", Initial::kFill}, {"slowest", Initial::kSlowest}});
    } else if (name == "cpu-timing") {
      c.cpu_timing = on_off(name, value);
    } else if (name == "cpu-us-per-access") {
      o.cpu_us_per_access = in_range(name, parse_number<double>(name, value), 0.0, 1e9);
    } else if (name == "lrfu-lambda") {
      pp.lrfu_lambda = in_range(name, parse_number<double>(name, value), 0.0, 1e3);
    } else if (name == "exd-alpha") {
      pp.exd_alpha = in_range(name, parse_number<double>(name, value), 0.0, 1e3);
    } else if (name == "temp-increase") {
      pp.temp.increase = in_range(name, parse_number<double>(name, value), 1e-9, 1e3);
    } else if (name == "temp-window") {
      pp.temp.window = in_range(name, parse_number<uint32_t>(name, value), 1u, 1000000u);
    } else if (name == "temp-drop") {
      pp.temp.drop = in_range(name, parse_number<double>(name, value), 0.0, 1.0);
    } else if (name == "temp-drop-period") {
      pp.temp.drop_period = in_range(name, parse_number<uint32_t>(name, value), 1u, 1000000u);
    } else if (name == "temp-initial") {
      pp.temp.initial = in_range(name, parse_number<double>(name, value), 0.0, 0.999);
    } else if (name == "temp-admit") {
      pp.temp_admit = value == "none" ? std::vector<uint32_t>{} : parse_list<uint32_t>(name, value, 0u, 1000000u);
    } else if (name == "demote-victim") {
      pp.victim = one_of<PolicyParams::Victim>(
          name, value, {{"before", PolicyParams::Victim::kBefore}, {"after", PolicyParams::Victim::kAfter}});
    } else if (name == "temp-timestep") {
      o.temp_timestep = in_range<uint64_t>(name, parse_number<uint64_t>(name, value), 0, 1ULL << 32);
    } else if (name == "rl-lambda") {
      pp.rl.td.lambda = in_range(name, parse_number<double>(name, value), 0.0, 1.0);
    } else if (name == "rl-beta") {
      pp.rl.td.beta = in_range(name, parse_number<double>(name, value), 0.0, 100.0);
    } else if (name == "rl-lr") {
      pp.rl.td.lr0 = in_range(name, parse_number<double>(name, value), 0.0, 10.0);
    } else if (name == "rl-lr-decay") {
      pp.rl.td.lr_decay = in_range(name, parse_number<double>(name, value), 0.0, 1e9);
    } else if (name == "rl-p-init") {
      pp.rl.td.p_init = in_range(name, parse_number<double>(name, value), -1e12, 1e12);
    } else if (name == "rl-step") {
      pp.rl.step = in_range(name, parse_number<uint32_t>(name, value), 1u, 100000000u);
    } else if (name == "rl-fit-window") {
      pp.rl.fit_window = in_range(name, parse_number<uint32_t>(name, value), 2u, 10000000u);
    } else if (name == "rl-fit-every") {
      pp.rl.fit_every = in_range(name, parse_number<uint32_t>(name, value), 1u, 10000000u);
    } else if (name == "rl-observe-every") {
      pp.rl.observe_every = in_range(name, parse_number<uint32_t>(name, value), 0u, 10000000u);
    } else if (name == "rl-fit-centre") {
      pp.rl.centre = one_of<RlParams::Centre>(
          name, value, {{"mean", RlParams::Centre::kMean}, {"midrange", RlParams::Centre::kMidrange}});
    } else if (name == "rl-range-floor") {
      pp.rl.floor = one_of<RlParams::Floor>(
          name, value, {{"small", RlParams::Floor::kSmall}, {"original", RlParams::Floor::kOriginal}});
    } else if (name == "rl-fit-start") {
      pp.rl.start = one_of<RlParams::Start>(
          name, value, {{"empty", RlParams::Start::kEmpty}, {"original", RlParams::Start::kOriginal}});
    } else if (name == "rl-basis") {
      pp.rl.basis = one_of<Basis>(name, value, {{"product", Basis::kProduct}, {"independent", Basis::kIndependent}});
    } else if (name == "rl-b-scale") {
      pp.rl.b_scale = in_range(name, parse_number<double>(name, value), 1e-6, 1e6);
    } else if (name == "rl-decision") {
      pp.rl.decision = one_of<RlParams::Decision>(name, value,
                                                  {{"weighted", RlParams::Decision::kMean},
                                                   {"total", RlParams::Decision::kTotal},
                                                   {"plain", RlParams::Decision::kPlain},
                                                   {"released", RlParams::Decision::kReleased}});
    } else if (name == "rl-reward") {
      pp.rl.reward = one_of<RlParams::Reward>(
          name, value, {{"measured", RlParams::Reward::kMeasured}, {"model", RlParams::Reward::kModel}});
    } else if (name == "rl-transition") {
      pp.rl.transition = one_of<RlParams::Transition>(
          name, value, {{"steps", RlParams::Transition::kSteps}, {"request", RlParams::Transition::kRequest}});
    } else if (name == "tlru-margin") {
      pp.tlru_margin = one_of<PolicyParams::TlruMargin>(
          name, value, {{"none", PolicyParams::TlruMargin::kNone}, {"capacity", PolicyParams::TlruMargin::kCapacity}});
    } else if (name == "rl-epsilon") {
      pp.rl.epsilon = parse_list<double>(name, value, 0.0, 1.0);
    } else if (name == "rl-explore") {
      pp.rl.explore = one_of<RlParams::Explore>(
          name, value, {{"coin", RlParams::Explore::kCoin}, {"upgrade", RlParams::Explore::kUpgrade}});
    } else if (name == "rl-init-rounds") {
      pp.rl.init_rounds = in_range(name, parse_number<uint32_t>(name, value), 0u, 100000000u);
    } else if (name == "demo-timesteps") {
      o.demo_timesteps = in_range(name, parse_number<uint32_t>(name, value), 1u, 100000000u);
    } else if (name == "demo-requests") {
      o.demo_requests = in_range(name, parse_number<uint32_t>(name, value), 0u, 100000000u);
    } else if (name == "dump-trace") {
      o.dump_trace = value;
    } else if (name == "out") {
      o.out = value;
    } else if (name == "grid") {
      o.grid = value;
    } else {
      throw std::logic_error("--" + name + " is accepted but never read");
    }
  }
  if (o.help) return o;
  if (pp.rl.transition == RlParams::Transition::kRequest && pp.rl.reward == RlParams::Reward::kMeasured)
    throw InputError("--rl-transition request needs --rl-reward model: no response is measured within one request");
  if (!o.remote_fds.empty()) {
    // The other process serves one run of one policy, whatever its name (this binary need not know it).
    auto refuse = [&](const std::string& why) {
      throw InputError("--remote-fds runs one policy in another process with the simulator: " + why);
    };
    if (given.has("grid")) refuse("not with --grid (one run per policy process)");
    if (o.temperature_demo) refuse("--temperature-demo runs no policy");
    if (given.has("dump-trace")) refuse("--dump-trace runs no policy");
    if (o.emulator) refuse("not with --engine emu (the emulator runs its policy in its own process)");
    if (policy.empty()) refuse("name it with --policy NAME");
    if (policy == "all" || policy.find(':') != std::string::npos)
      refuse("give it one --policy NAME, not " + excerpt(policy));
    if (!plain_policy_name(policy) || policy.size() > remote::kMaxName)
      refuse("--policy NAME must be lowercase letters, digits and _ (at most " + std::to_string(remote::kMaxName) +
             "), not " + excerpt(policy));
    o.policies = {policy};
  } else if (given.has("policy")) {
    o.policies.clear();
    if (policy == "all") {
      o.policies = builtin_names();
    } else {
      std::stringstream ss(policy);
      std::string cell;
      while (std::getline(ss, cell, ':')) {
        if (!known_policy(cell)) {
          std::string names;
          for (const std::string& n : policy_names()) names += n + ", ";
          throw InputError("--policy must be " + names + "(colon-separated) or all, not " + excerpt(cell));
        }
        o.policies.push_back(cell);
      }
      if (o.policies.empty()) throw InputError("--policy needs a value");
    }
  }
  if (!o.grid.empty()) return o;  // a grid's rows are checked one by one
  if (o.temperature_demo) {
    if (o.demo_requests > o.demo_timesteps)
      throw InputError("--demo-requests must be at most --demo-timesteps (one request per timestep at most)");
    return o;
  }

  if (!o.trace.empty() && (given.has("workload") || given.has("pages") || given.has("read-pct")))
    throw InputError("--trace replaces --workload, --pages and --read-pct");
  // Tiers.
  size_t n = lat.size();
  for (size_t len : {alpha.size(), k_r.size(), k_w.size(), o.capacity_pct.size(), o.capacity_pages.size()})
    if (len > 1) n = std::max(n, len);
  auto pick = [&](const char* what, auto& v, size_t t) {
    if (v.size() != 1 && v.size() != n)
      throw InputError(std::string("--") + what + " has " + std::to_string(v.size()) + " values for " +
                       std::to_string(n) + " tiers");
    return v.size() == 1 ? v[0] : v[t];
  };
  if (n < 2)
    throw InputError("at least 2 tiers are needed (colon-separated values, e.g. --read-latency-us 30:200:500)");
  if (!o.capacity_pct.empty() && !o.capacity_pages.empty())
    throw InputError("give either --capacity-pct or --capacity-pages");
  if (o.capacity_pct.empty() && o.capacity_pages.empty()) o.capacity_pct = {3, 8, 100};
  c.tiers.assign(n, TierSpec{});
  for (size_t t = 0; t < n; t++) {
    TierSpec& s = c.tiers[t];
    s.read_latency_us = pick("read-latency-us", lat, t);
    s.alpha = pick("alpha", alpha, t);
    s.k_r = pick("k-r", k_r, t);
    s.k_w = pick("k-w", k_w, t);
    s.page_size = page_size;
  }
  c.params.seed = policy_seed.value_or(o.seed);
  if (c.arrival == Arrival::kPoisson && c.rate_per_s <= 0) throw InputError("--arrival poisson needs --rate R");
  if (o.emulator && c.arrival == Arrival::kBurst)
    throw InputError("--engine emu supports --arrival closed or poisson, not burst");
  return o;
}

// Capacities in pages once the page count is known.
static void resolve_tiers(Options& o, uint32_t pages) {
  auto& tiers = o.config.tiers;
  const size_t n = tiers.size();
  for (size_t t = 0; t < n; t++) {
    if (!o.capacity_pages.empty()) {
      tiers[t].capacity_pages = o.capacity_pages.size() == 1 ? o.capacity_pages[0] : o.capacity_pages[t];
    } else {
      const double pct = o.capacity_pct.size() == 1 ? o.capacity_pct[0] : o.capacity_pct[t];
      tiers[t].capacity_pages = static_cast<uint64_t>(std::llround(pct / 100.0 * pages));
    }
  }
  uint64_t total = 0;
  for (const TierSpec& s : tiers) total += s.capacity_pages;
  if (total < pages)
    throw InputError("the tiers hold " + std::to_string(total) + " pages, fewer than the workload's " +
                     std::to_string(pages) + " (the slowest tier is usually 100%)");
  for (size_t t = 0; t + 1 < n; t++)
    if (tiers[t].capacity_pages == 0)
      throw InputError("tier " + std::to_string(t + 1) + " has capacity 0 (at " + std::to_string(pages) + " pages)");
  o.config.params.temp.timestep = o.temp_timestep > 0 ? o.temp_timestep : std::max<uint64_t>(1, pages / 10);
}

const artifact::Grid kGrid = {{"grid", "out", "remote-fds"}, {}};

std::string csv_header() {
  return "engine,policy,workload,seed,pages,requests,read_pct,tiers,capacity_pages,read_latency_us,alpha,k_r,k_w,"
         "page_size,server_model,arrival,clients,reads,writes,accesses,promotions,demotions,accesses_t1,accesses_t2,"
         "accesses_t3,migrations_t2_t1,migrations_t3_t2,demotions_t1_t2,demotions_t2_t3,migrations_total,"
         "mean_latency_us,data_access_us,cpu_us,runtime_us,overhead_us_per_access,policy_memory_bytes,"
         "policy_heap_bytes,sim_wall_s\n";
}

static std::string csv_row(const Options& o, const std::string& policy, const std::string& workload, uint32_t pages,
                           double read_pct, const RunStats& s) {
  const SimConfig& c = o.config;
  auto u64 = [](uint64_t v) { return std::to_string(v); };
  auto at = [&](const std::vector<uint64_t>& v, size_t i) { return i < v.size() ? u64(v[i]) : std::string(); };
  uint64_t total = 0;
  for (uint64_t v : s.promotions) total += v;
  for (uint64_t v : s.demotions) total += v;
  const bool measured = o.cpu_us_per_access < 0;
  const double cpu_us = measured ? s.policy_ns * 1e-3 : o.cpu_us_per_access * static_cast<double>(s.requests);
  const bool show_cpu = !measured || c.cpu_timing;
  std::ostringstream row;
  row << (o.emulator ? "emu" : "sim") << ',' << policy << ',' << workload << ',' << o.seed << ',' << pages << ','
      << s.requests << ',' << shortest(read_pct) << ',' << c.tiers.size() << ','
      << join(c.tiers, [](const TierSpec& t) { return std::to_string(t.capacity_pages); }) << ','
      << join(c.tiers, [](const TierSpec& t) { return shortest(t.read_latency_us); }) << ','
      << join(c.tiers, [](const TierSpec& t) { return shortest(t.alpha); }) << ','
      << join(c.tiers, [](const TierSpec& t) { return std::to_string(t.k_r); }) << ','
      << join(c.tiers, [](const TierSpec& t) { return std::to_string(t.k_w); }) << ',' << c.tiers[0].page_size << ','
      << (c.server_model == ServerModel::kShared ? "shared" : "split") << ','
      << (c.arrival == Arrival::kClosed    ? "closed"
          : c.arrival == Arrival::kPoisson ? "poisson"
                                           : "burst")
      << ',' << (c.arrival == Arrival::kClosed ? std::to_string(c.clients) : std::string()) << ',' << s.reads << ','
      << s.writes << ',' << join(s.accesses, u64) << ',' << join(s.promotions, u64) << ',' << join(s.demotions, u64)
      << ',' << at(s.accesses, 0) << ',' << at(s.accesses, 1) << ',' << at(s.accesses, 2) << ',' << at(s.promotions, 0)
      << ',' << at(s.promotions, 1) << ',' << at(s.demotions, 0) << ',' << at(s.demotions, 1) << ',' << total << ','
      << fixed(s.latency_sum_us / static_cast<double>(s.requests), 4) << ',' << fixed(s.data_access_us, 3) << ','
      << (show_cpu ? fixed(cpu_us, 3) : "") << ',' << (show_cpu ? fixed(s.data_access_us + cpu_us, 3) : "") << ','
      << (show_cpu ? fixed(cpu_us / static_cast<double>(s.requests), 5) : "") << ',' << s.policy_memory_bytes << ','
      << s.policy_heap_bytes << ',' << (c.cpu_timing ? fixed(s.wall_s, 4) : "") << '\n';
  return row.str();
}

std::string Runner::run(const Options& given) {
  Options o = given;
  std::unique_ptr<Workload> w;
  std::string name;
  double read_pct = o.read_pct;
  if (!o.trace.empty()) {
    auto it = traces_.find(o.trace);
    if (it == traces_.end()) {
      try {
        it = traces_.emplace(o.trace, read_trace(o.trace)).first;
      } catch (const std::runtime_error& e) {
        throw InputError(e.what());
      }
    }
    const Trace& t = it->second;
    const uint64_t limit = o.requests_given ? o.requests : t.requests->size();
    w = std::make_unique<TraceWorkload>(t.requests, t.pages, limit);
    name = artifact::basename(o.trace);
    if (name.find(',') != std::string::npos || name.find('"') != std::string::npos)
      throw InputError("a trace file name may not contain a comma or a quote: " + excerpt(name));
  } else {
    std::vector<Phase> phases;
    std::string error;
    if (!parse_workload(o.workload, &phases, &error)) throw InputError("--workload: " + error);
    w = std::make_unique<SyntheticWorkload>(phases, o.pages, o.requests, o.read_pct, o.seed);
    name = o.workload;
  }
  if (!o.dump_trace.empty()) {
    artifact::AtomicFile out(o.dump_trace);
    out.write("page,op\n");
    uint32_t page;
    Op op;
    std::string line;
    for (uint64_t i = 0; i < w->requests(); i++) {
      w->next(&page, &op);
      line = std::to_string(page);
      line += op == Op::kRead ? ",R\n" : ",W\n";
      out.write(line);
    }
    out.commit();
    return "";
  }
  resolve_tiers(o, w->pages());
  std::string text;
  for (const std::string& p : o.policies) {
    o.config.policy = p;
    RunStats s = o.emulator ? emulate(o.config, *w) : simulate(o.config, *w);
    if (!o.trace.empty()) read_pct = 100.0 * static_cast<double>(s.reads) / static_cast<double>(s.requests);
    text += csv_row(o, p, name, w->pages(), read_pct, s);
  }
  return text;
}

std::string temperature_demo(const Options& o) {
  // One page, timestep = 1 request unit: `demo_requests` distinct random timesteps in
  // [0, demo_timesteps) carry a request (thesis Fig 6.5: 100 random requests in 1000 timesteps).
  TemperatureParams p = o.config.params.temp;
  p.timestep = 1;
  TemperatureModel model(1, p, nullptr);
  std::vector<uint8_t> requested(o.demo_timesteps, 0);
  SplitMix64 g(derive_seed(o.seed, 11));
  for (uint32_t k = 0; k < o.demo_requests;) {
    uint64_t t = g.below(o.demo_timesteps);
    if (!requested[t]) {
      requested[t] = 1;
      k++;
    }
  }
  std::string out = "timestep,requested,temperature\n";
  for (uint32_t t = 0; t < o.demo_timesteps; t++) {
    model.advance(t);
    if (requested[t]) model.touch(0, t);
    out += std::to_string(t) + ',' + (requested[t] ? "1" : "0") + ',' + fixed(model.temperature(0), 6) + '\n';
  }
  return out;
}

int main_with_args(const std::vector<std::string>& given) {
  return artifact::guarded_main<PolicyError>("restore-sim", [&] {
    const std::vector<std::string> args = artifact::with_args_file(given);
    Options o = parse_args(args);
    if (o.help) {
      std::cout << usage();
      return 0;
    }
    std::string text;
    if (o.temperature_demo) {
      text = temperature_demo(o);
    } else {
      Runner runner;
      text = o.dump_trace.empty() ? csv_header() : "";
      if (o.grid.empty())
        text += runner.run(o);
      else
        text += artifact::run_grid(o.grid, args, kGrid, [&](const auto& row) { return runner.run(parse_args(row)); });
    }
    return artifact::write_output(o.out, text);
  });
}

}  // namespace restore
