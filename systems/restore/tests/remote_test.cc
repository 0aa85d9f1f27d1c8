// A policy run in another process (remote_policy.h): a remote run's row is the in-process one byte
// for byte, for every built-in policy on every kind of run; a hostile policy process ends the run
// with a PolicyError that says what it did, never a crash. The host is a forked child of the test
// serving through serve(), the code of policy_host.cc, or a fake host that breaks the protocol.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.h"
#include "remote_policy.h"
#include "scratch.h"
#include "simulator.h"
#include "workload.h"

namespace {

using restore::Move;
using restore::Op;

// Policies wrong on purpose, served by the host's own code (its PlacementCheck, its exceptions).
class Unreported : public restore::Policy {  // changes its placement without reporting the move
 public:
  Unreported(const std::vector<restore::TierSpec>& tiers, uint32_t pages, const restore::PolicyParams&)
      : Policy(tiers, pages) {}
  void access(uint32_t page, Op, uint64_t, restore::QueueProbe&, std::vector<Move>&) override {
    if (tier_of(page) == 2) tier_[page] = 1;
  }
};
class Throws : public restore::Policy {  // throws at request 30
 public:
  Throws(const std::vector<restore::TierSpec>& tiers, uint32_t pages, const restore::PolicyParams&)
      : Policy(tiers, pages) {}
  void access(uint32_t, Op, uint64_t now, restore::QueueProbe&, std::vector<Move>&) override {
    if (now == 30) throw std::runtime_error("the student's bug");
  }
};
class Restless : public restore::Policy {  // moves one page up and down four times per request
 public:
  Restless(const std::vector<restore::TierSpec>& tiers, uint32_t pages, const restore::PolicyParams&)
      : Policy(tiers, pages) {}
  void access(uint32_t page, Op, uint64_t, restore::QueueProbe&, std::vector<Move>& moves) override {
    if (tier_of(page) != 2) return;
    for (int i = 0; i < 4; i++) {
      move(page, 1, moves);
      move(page, 2, moves);
    }
  }
};
class Prober : public restore::Policy {  // asks for a tier that does not exist
 public:
  Prober(const std::vector<restore::TierSpec>& tiers, uint32_t pages, const restore::PolicyParams&)
      : Policy(tiers, pages) {}
  void access(uint32_t, Op, uint64_t, restore::QueueProbe& probe, std::vector<Move>&) override { probe.queued(7); }
};

}  // namespace

RESTORE_REGISTER_POLICY("test_remote_unreported", Unreported);
RESTORE_REGISTER_POLICY("test_remote_throws", Throws);
RESTORE_REGISTER_POLICY("test_remote_restless", Restless);
RESTORE_REGISTER_POLICY("test_remote_prober", Prober);

namespace restore {
namespace {

using artifact::wire::Error;
using artifact::wire::Reader;
using artifact::wire::Writer;

// A policy process: `host(in, out)` in a forked child, its return value the child's exit status.
class Child {
 public:
  explicit Child(const std::function<int(int, int)>& host) {
    int requests[2], replies[2];
    if (pipe(requests) != 0 || pipe(replies) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      close(requests[1]);
      close(replies[0]);
      int status = 1;
      try {
        status = host(requests[0], replies[1]);
      } catch (...) {
      }
      _exit(status);
    }
    close(requests[0]);
    close(replies[1]);
    in_ = replies[0];
    out_ = requests[1];
  }
  ~Child() { status(); }
  std::string fds() const { return std::to_string(in_) + "," + std::to_string(out_); }
  int in() const { return in_; }
  int out() const { return out_; }
  // Closes the engine's ends and waits: the child's exit status (128 + signal if killed).
  int status() {
    if (pid_ <= 0) return status_;
    close(in_);
    close(out_);
    int s = 0;
    waitpid(pid_, &s, 0);
    pid_ = -1;
    status_ = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, status_ = -1;
};

std::string in_process(const std::vector<std::string>& args) {
  Runner runner;
  return runner.run(parse_args(args));
}

// The row of a remote run served by serve() (the host's exit status must be 0).
std::string remote(std::vector<std::string> args) {
  Child child(serve);
  args.push_back("--remote-fds");
  args.push_back(child.fds());
  Runner runner;
  const std::string row = runner.run(parse_args(args));
  EXPECT_EQ(child.status(), 0);
  return row;
}

// The message of a remote run's PolicyError ("" if it ran to the end).
std::string remote_error(std::vector<std::string> args, const std::function<int(int, int)>& host,
                         int* host_status = nullptr) {
  Child child(host);
  args.push_back("--remote-fds");
  args.push_back(child.fds());
  std::string message;
  try {
    Runner runner;
    runner.run(parse_args(args));
  } catch (const PolicyError& e) {
    message = e.what();
  }
  const int status = child.status();
  if (host_status) *host_status = status;
  return message;
}

const std::vector<std::string> kSmall = {"--pages", "300", "--requests", "4000", "--seed", "3", "--cpu-timing", "off"};

std::vector<std::string> with(std::vector<std::string> args) {
  args.insert(args.begin(), kSmall.begin(), kSmall.end());
  return args;
}

// --- a remote run is the in-process run --------------------------------------------------------

struct Kind {
  const char* name;
  std::vector<std::string> args;
};

const Kind kKinds[] = {
    {"three_tiers_drifting", {"--workload", "5hf90*4"}},
    {"two_tiers",
     {"--workload", "10hf90*4", "--capacity-pct", "5:100", "--read-latency-us", "30:500", "--alpha", "1.5:4", "--k-r",
      "8:2", "--k-w", "8:2"}},
    {"four_tiers",
     {"--workload", "10hf90*4", "--capacity-pct", "2:5:10:100", "--read-latency-us", "30:100:200:500", "--alpha",
      "1.5:2:3:4", "--k-r", "8:4:4:2", "--k-w", "8:4:4:2"}},
    {"zipf_all_reads", {"--workload", "zipf0.99", "--read-pct", "100"}},
    {"uniform_all_writes", {"--workload", "uniform", "--read-pct", "0"}},
    {"initial_slowest", {"--workload", "5hf90*4", "--initial", "slowest"}},
    {"fastest_tier_of_one_page", {"--workload", "5hf90*4", "--capacity-pages", "1:10:300"}},
    {"ten_pages", {"--pages", "10", "--workload", "20hf90*4", "--capacity-pages", "1:2:10"}},
    {"phases_and_split_servers", {"--workload", "B", "--server-model", "split", "--arrival", "burst"}},
    {"poisson", {"--workload", "10hf80", "--arrival", "poisson", "--rate", "30000"}},
    // Every PolicyParams field away from its default: HELLO must carry them all.
    {"original_code_settings",
     {"--workload",
      "C",
      "--seed",
      "7",
      "--rl-observe-every",
      "4",
      "--rl-fit-every",
      "1",
      "--rl-fit-centre",
      "midrange",
      "--rl-range-floor",
      "original",
      "--rl-fit-start",
      "original",
      "--rl-basis",
      "independent",
      "--temp-initial",
      "0.5",
      "--temp-admit",
      "3:1",
      "--demote-victim",
      "after",
      "--rl-init-rounds",
      "20",
      "--rl-explore",
      "upgrade",
      "--rl-decision",
      "total",
      "--lrfu-lambda",
      "0.1",
      "--exd-alpha",
      "1e-3",
      "--temp-timestep",
      "50",
      "--rl-epsilon",
      "0.1:0.05",
      "--rl-lambda",
      "0.5",
      "--rl-beta",
      "0.2",
      "--rl-lr",
      "0.3",
      "--rl-lr-decay",
      "10",
      "--rl-p-init",
      "5",
      "--rl-step",
      "20",
      "--rl-fit-window",
      "50",
      "--rl-b-scale",
      "5",
      "--temp-increase",
      "0.1",
      "--temp-window",
      "4",
      "--temp-drop",
      "0.1",
      "--temp-drop-period",
      "3"}},
};

// A row with its policy_heap_bytes as "*". That column is measured by the allocator of the process
// that holds the policy, and glibc's answer depends on the process's past (chunks of at most 1 KiB
// its per-thread cache keeps, its dynamic mmap threshold): this test process has run other tests,
// the host is its forked child. RemoteBinaries compares it too, between fresh processes.
std::string without_heap(const std::string& row) {
  size_t begin = 0;
  for (int comma = 0; comma < 36; comma++) begin = row.find(',', begin) + 1;
  const size_t end = row.find(',', begin);
  return row.substr(0, begin) + "*" + row.substr(end);
}

class RemoteRun : public ::testing::TestWithParam<std::tuple<std::string, size_t>> {};

TEST_P(RemoteRun, GivesTheInProcessRowByteForByte) {
  const auto& [policy, kind] = GetParam();
  std::vector<std::string> args = kSmall;
  args.insert(args.end(), kKinds[kind].args.begin(), kKinds[kind].args.end());
  args.push_back("--policy");
  args.push_back(policy);
  const std::string expected = in_process(args);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(without_heap(remote(args)), without_heap(expected));
}

INSTANTIATE_TEST_SUITE_P(
    Policies, RemoteRun,
    ::testing::Combine(::testing::Values("static", "tlfu", "tlru", "lrfu", "exd", "temp", "restore"),
                       ::testing::Range<size_t>(0, std::size(kKinds))),
    [](const auto& info) { return std::get<0>(info.param) + "_" + kKinds[std::get<1>(info.param)].name; });

TEST(Remote, StaticGetsTheOraclePlacementAndNeverMigrates) {
  const std::vector<std::string> args = with({"--policy", "static", "--workload", "5hf90"});
  const std::string row = remote(args);
  EXPECT_EQ(without_heap(row), without_heap(in_process(args)));
  EXPECT_NE(row.find(",0:0,0:0,"), std::string::npos) << row;  // promotions, demotions
}

TEST(Remote, CpuTimingMeasuresTheRoundTrip) {
  std::vector<std::string> args = with({"--policy", "tlfu", "--cpu-timing", "on"});
  const std::string row = remote(args);
  ASSERT_FALSE(row.empty());
  EXPECT_EQ(row.find(",,"), std::string::npos) << row;  // cpu_us, runtime_us, ..., sim_wall_s all given
}

TEST(Remote, HelloCarriesEveryField) {
  remote::Hello h;
  h.policy = "student_2";
  h.pages = 12345;
  h.tiers = {TierSpec{30.5, 1.5, 8, 7, 100, 512}, TierSpec{200, 2, 4, 3, 1000, 512},
             TierSpec{500, 4.25, 2, 1, 12345, 512}};
  PolicyParams& p = h.params;
  p.lrfu_lambda = 0.125;
  p.exd_alpha = 3e-7;
  p.temp = TemperatureParams{0.3, 11, 0.07, 6, 77, 0.4};
  p.temp_admit = {3, 1};
  p.victim = PolicyParams::Victim::kAfter;
  p.rl.td = TdParams{0.7, 0.2, 0.05, 50, -3};
  p.rl.step = 33;
  p.rl.fit_window = 44;
  p.rl.fit_every = 2;
  p.rl.observe_every = 4;
  p.rl.b_scale = 5;
  p.rl.centre = RlParams::Centre::kMidrange;
  p.rl.floor = RlParams::Floor::kOriginal;
  p.rl.start = RlParams::Start::kOriginal;
  p.rl.basis = Basis::kIndependent;
  p.rl.decision = RlParams::Decision::kPlain;
  p.rl.epsilon = {0.25, 0.5};
  p.rl.explore = RlParams::Explore::kUpgrade;
  p.rl.init_rounds = 20;
  p.seed = 0xfedcba9876543210ULL;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  Writer w(fds[1]);
  remote::write_hello(w, h);
  w.flush();
  Reader r(fds[0], "the pipe");
  ASSERT_EQ(r.u8(), remote::kHello);
  const remote::Hello g = remote::read_hello(r);
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(g.policy, h.policy);
  EXPECT_EQ(g.pages, h.pages);
  ASSERT_EQ(g.tiers.size(), 3u);
  for (size_t t = 0; t < 3; t++) {
    EXPECT_EQ(g.tiers[t].read_latency_us, h.tiers[t].read_latency_us);
    EXPECT_EQ(g.tiers[t].alpha, h.tiers[t].alpha);
    EXPECT_EQ(g.tiers[t].k_r, h.tiers[t].k_r);
    EXPECT_EQ(g.tiers[t].k_w, h.tiers[t].k_w);
    EXPECT_EQ(g.tiers[t].capacity_pages, h.tiers[t].capacity_pages);
    EXPECT_EQ(g.tiers[t].page_size, h.tiers[t].page_size);
  }
  const PolicyParams& q = g.params;
  EXPECT_EQ(q.lrfu_lambda, p.lrfu_lambda);
  EXPECT_EQ(q.exd_alpha, p.exd_alpha);
  EXPECT_EQ(q.temp.increase, p.temp.increase);
  EXPECT_EQ(q.temp.window, p.temp.window);
  EXPECT_EQ(q.temp.drop, p.temp.drop);
  EXPECT_EQ(q.temp.drop_period, p.temp.drop_period);
  EXPECT_EQ(q.temp.timestep, p.temp.timestep);
  EXPECT_EQ(q.temp.initial, p.temp.initial);
  EXPECT_EQ(q.temp_admit, p.temp_admit);
  EXPECT_EQ(q.victim, p.victim);
  EXPECT_EQ(q.rl.td.lambda, p.rl.td.lambda);
  EXPECT_EQ(q.rl.td.beta, p.rl.td.beta);
  EXPECT_EQ(q.rl.td.lr0, p.rl.td.lr0);
  EXPECT_EQ(q.rl.td.lr_decay, p.rl.td.lr_decay);
  EXPECT_EQ(q.rl.td.p_init, p.rl.td.p_init);
  EXPECT_EQ(q.rl.step, p.rl.step);
  EXPECT_EQ(q.rl.fit_window, p.rl.fit_window);
  EXPECT_EQ(q.rl.fit_every, p.rl.fit_every);
  EXPECT_EQ(q.rl.observe_every, p.rl.observe_every);
  EXPECT_EQ(q.rl.b_scale, p.rl.b_scale);
  EXPECT_EQ(q.rl.centre, p.rl.centre);
  EXPECT_EQ(q.rl.floor, p.rl.floor);
  EXPECT_EQ(q.rl.start, p.rl.start);
  EXPECT_EQ(q.rl.basis, p.rl.basis);
  EXPECT_EQ(q.rl.decision, p.rl.decision);
  EXPECT_EQ(q.rl.epsilon, p.rl.epsilon);
  EXPECT_EQ(q.rl.explore, p.rl.explore);
  EXPECT_EQ(q.rl.init_rounds, p.rl.init_rounds);
  EXPECT_EQ(q.seed, p.seed);
}

// --- the command line --------------------------------------------------------------------------

std::string parse_error(const std::vector<std::string>& args) {
  try {
    parse_args(args);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Remote, TheCommandLineRefusesWhatCannotWork) {
  const std::pair<std::vector<std::string>, const char*> cases[] = {
      {{"--policy", "all"}, "one --policy NAME, not 'all'"},
      {{"--policy", "static:tlfu"}, "one --policy NAME, not 'static:tlfu'"},
      {{}, "name it with --policy NAME"},
      {{"--policy", "tlfu", "--engine", "emu"}, "not with --engine emu"},
      {{"--policy", "tlfu", "--grid", "x.csv"}, "not with --grid"},
      {{"--policy", "tlfu", "--dump-trace", "x.csv"}, "--dump-trace runs no policy"},
      {{"--policy", "tlfu", "--temperature-demo"}, "--temperature-demo runs no policy"},
      {{"--policy", "Student"}, "lowercase letters, digits and _"},
      {{"--policy", "a,b"}, "lowercase letters, digits and _"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--remote-fds", "3,4"});
    EXPECT_NE(parse_error(a).find(message), std::string::npos) << parse_error(a);
  }
  EXPECT_NE(parse_error({"--policy", "tlfu", "--remote-fds", "3"}).find("--remote-fds: expected two"),
            std::string::npos);
  EXPECT_NE(parse_error({"--policy", "tlfu", "--remote-fds", "0,1"}).find("cannot use file descriptor 1"),
            std::string::npos);
  // The name need not be one this binary knows: the other process serves it.
  EXPECT_EQ(parse_error({"--policy", "student", "--remote-fds", "3,4"}), "");
  EXPECT_NE(parse_error({"--policy", "student"}).find("--policy must be"), std::string::npos);
}

TEST(Remote, TheEmulatorRefusesARemotePolicy) {
  SimConfig c;
  c.tiers.resize(2);
  c.tiers[0].capacity_pages = 2;
  c.tiers[1].capacity_pages = 10;
  c.remote_in = 0;
  c.remote_out = 1;
  SyntheticWorkload w({Phase{Phase::kUniform}}, 10, 10, 50, 1);
  EXPECT_THROW(emulate(c, w), std::invalid_argument);
}

TEST(Remote, AClosedFileDescriptorIsAnInputError) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  close(fds[1]);
  const std::string spec = std::to_string(fds[0]) + "," + std::to_string(fds[1]);
  try {
    in_process(with({"--policy", "tlfu", "--remote-fds", spec}));
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is not open"), std::string::npos) << e.what();
  }
}

// --- the host's own checks ---------------------------------------------------------------------

TEST(Remote, TheHostChecksThePolicysOwnAccountAsTheEngineDoesInProcess) {
  const std::vector<std::string> args = with({"--policy", "test_remote_unreported"});
  std::string in_process_message;
  try {
    in_process(args);
  } catch (const PolicyError& e) {
    in_process_message = e.what();
  }
  ASSERT_NE(in_process_message, "");
  int status = 0;
  const std::string message = remote_error(args, serve, &status);
  EXPECT_EQ(status, 3);
  const std::string account = in_process_message.substr(in_process_message.find(": ") + 2);
  EXPECT_NE(account.find("by the policy's account, but its moves left it in tier"), std::string::npos);
  EXPECT_NE(message.find("policy 'test_remote_unreported' (in the policy process, request "), std::string::npos)
      << message;
  EXPECT_NE(message.find(account), std::string::npos) << message << "\n" << in_process_message;
}

TEST(Remote, APolicyThatThrowsSendsTheTextAndExitsNonZero) {
  int status = 0;
  const std::string message = remote_error(with({"--policy", "test_remote_throws"}), serve, &status);
  EXPECT_EQ(status, 3);
  EXPECT_NE(message.find("request 30): its process stopped the run: the policy's code threw an exception: the "
                         "student's bug"),
            std::string::npos)
      << message;
}

TEST(Remote, ThePolicyProcessRefusesMoreMovesThanItMaySend) {
  int status = 0;
  const std::string message = remote_error(with({"--policy", "test_remote_restless"}), serve, &status);
  EXPECT_EQ(status, 3);
  EXPECT_NE(message.find("made 8 moves for one request"), std::string::npos) << message;
  EXPECT_NE(message.find("more than the 6 (2 x tiers)"), std::string::npos) << message;
}

TEST(Remote, AProbeOfAMissingTierIsThePolicysError) {
  int status = 0;
  const std::string message = remote_error(with({"--policy", "test_remote_prober"}), serve, &status);
  EXPECT_EQ(status, 3);
  EXPECT_NE(message.find("QueueProbe::queued(7): the tiers are 0 to 2"), std::string::npos) << message;
}

TEST(Remote, AnUnknownNameIsTheHostsError) {
  int status = 0;
  const std::string message = remote_error(with({"--policy", "nobody"}), serve, &status);
  EXPECT_EQ(status, 3);
  EXPECT_NE(message.find("before the first request): its process stopped the run: this policy process has no "
                         "policy named 'nobody'"),
            std::string::npos)
      << message;
}

TEST(Remote, TheHostEndsWhenTheEngineSendsGarbage) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const uint8_t garbage[] = {0x42, 1, 2, 3};
  ASSERT_EQ(write(fds[1], garbage, sizeof garbage), 4);
  close(fds[1]);
  int replies[2];
  ASSERT_EQ(pipe(replies), 0);
  EXPECT_EQ(serve(fds[0], replies[1]), 1);
  close(fds[0]);
  close(replies[0]);
  close(replies[1]);
}

// --- hostile policy processes ------------------------------------------------------------------

enum class Misdeed {
  kNone,
  kGarbageReady,
  kPageOutOfRange,
  kTierOutOfRange,
  kWrongTier,
  kTwoTiersAtOnce,
  kOverCapacity,
  kTooManyMoves,
  kGarbageType,
  kTruncated,
  kEnds,
  kHugeText,
  kErrorText,
  kGarbageDone,
};

// Serves the policy HELLO names like serve(), but does `misdeed` at request `at`.
int fake_host(int in, int out, Misdeed misdeed, uint64_t at) {
  Reader rd(in, "the engine");
  Writer wr(out);
  if (rd.u8() != remote::kHello) return 1;
  const remote::Hello h = remote::read_hello(rd);
  if (rd.u8() != remote::kPlace) return 1;
  const std::string placement = rd.str(h.pages);
  std::vector<uint8_t> tier_of(placement.begin(), placement.end());
  auto policy = make_policy(h.policy, h.tiers, h.pages, h.params);
  policy->place(tier_of);
  if (misdeed == Misdeed::kGarbageReady) {
    wr.u8(0x42);
    wr.flush();
    return 0;
  }
  wr.u8(remote::kReady);
  wr.flush();
  class Probe : public QueueProbe {
   public:
    uint64_t queued(int tier) override { return q[tier]; }
    uint64_t q[8] = {};
  } probe;
  std::vector<Move> moves;
  while (true) {
    const uint8_t type = rd.u8();
    if (type == remote::kObserve) {
      const int32_t tier = rd.i32();
      const double us = rd.f64();
      policy->observe(tier, us, rd.u64());
      continue;
    }
    if (type == remote::kEnd) {
      if (misdeed == Misdeed::kGarbageDone) {
        wr.u8(remote::kDone);
        wr.u64(1);
        wr.flush();
        return 0;  // DONE cut short
      }
      wr.u8(remote::kDone);
      wr.u64(policy->memory_bytes());
      wr.u64(0);
      wr.flush();
      return 0;
    }
    if (type != remote::kAccess) return 1;
    const uint32_t page = rd.u32();
    const Op op = static_cast<Op>(rd.u8());
    const uint64_t now = rd.u64();
    for (size_t t = 0; t < h.tiers.size(); t++) probe.q[t] = rd.u64();
    const uint8_t tier = static_cast<uint8_t>(policy->tier_of(page));  // the engine's record too
    moves.clear();
    policy->access(page, op, now, probe, moves);
    std::vector<Move> sent = moves;
    if (now == at) {
      switch (misdeed) {
        case Misdeed::kPageOutOfRange: sent = {Move{h.pages + 5, 1, 0}}; break;
        case Misdeed::kTierOutOfRange: sent = {Move{page, tier, 200}}; break;
        case Misdeed::kWrongTier: sent = {Move{page, static_cast<uint8_t>((tier + 1) % 3), tier}}; break;
        case Misdeed::kTwoTiersAtOnce:
          sent = {Move{page, tier, static_cast<uint8_t>(tier == 2 ? 0 : 2)}};
          if (tier == 1) sent = {Move{page, 1, 1}};
          break;
        case Misdeed::kOverCapacity: {
          // Every page of the slowest tier that is not `page` into tier 2 (full after the first).
          sent.clear();
          for (uint32_t p = 0; p < h.pages && sent.size() < 2; p++)
            if (policy->tier_of(p) == 2) sent.push_back(Move{p, 2, 1});
          if (sent.size() < 2) sent.push_back(Move{0, 0, 0});
          break;
        }
        case Misdeed::kTooManyMoves:
          wr.u8(remote::kMoves);
          wr.u32(100);
          for (int i = 0; i < 100; i++) {
            wr.u32(page);
            wr.u8(tier);
            wr.u8(tier);
          }
          wr.flush();
          return 0;
        case Misdeed::kGarbageType:
          wr.u8(0x42);
          wr.flush();
          return 0;
        case Misdeed::kTruncated:
          wr.u8(remote::kMoves);
          wr.u32(2);
          wr.u32(page);
          wr.flush();
          return 0;
        case Misdeed::kEnds: return 0;
        case Misdeed::kHugeText:
          wr.u8(remote::kError);
          wr.u32(100u << 20);  // 100 MB declared
          for (int i = 0; i < 1000; i++) wr.u8('x');
          wr.flush();
          return 0;
        case Misdeed::kErrorText: remote::write_error(wr, "the student's \x1b[31mred\x1b[0m bug\n"); return 3;
        default: break;
      }
    }
    wr.u8(remote::kMoves);
    wr.u32(static_cast<uint32_t>(sent.size()));
    for (const Move& m : sent) {
      wr.u32(m.page);
      wr.u8(m.from);
      wr.u8(m.to);
    }
    wr.flush();
  }
}

TEST(Remote, AFakeHostThatBehavesGivesTheInProcessRow) {
  const std::vector<std::string> args = with({"--policy", "restore"});
  Child child([](int in, int out) { return fake_host(in, out, Misdeed::kNone, 0); });
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--remote-fds", child.fds()});
  Runner runner;
  const std::string row = runner.run(parse_args(a));
  EXPECT_EQ(child.status(), 0);
  // Its DONE says 0 heap bytes: the row's last columns (policy_heap_bytes, sim_wall_s) are its word.
  const std::string expected = in_process(args);
  EXPECT_EQ(row.substr(0, row.rfind(',', row.size() - 3)),
            expected.substr(0, expected.rfind(',', expected.size() - 3)));
  EXPECT_NE(row.find(",0,\n"), std::string::npos) << row;
}

TEST(Remote, AHostileHostEndsTheRunWithAClearMessage) {
  const std::pair<Misdeed, std::vector<const char*>> cases[] = {
      {Misdeed::kGarbageReady,
       {"before the first request): its process answered HELLO and PLACE with message type 0x42, not 0x81 (READY)"}},
      {Misdeed::kPageOutOfRange,
       {"request 50): moved page 305, which does not exist (the workload has 300 pages, 0 to 299)"}},
      {Misdeed::kTierOutOfRange, {"request 50): moved page ", " to tier 201, but there are 3 tiers"}},
      {Misdeed::kWrongTier, {"request 50): moved page ", ", but it is in tier"}},
      {Misdeed::kTwoTiersAtOnce, {"request 50): moved page ", "pages move to a neighbouring tier"}},
      {Misdeed::kOverCapacity, {"pages after a request, more than its capacity of"}},
      {Misdeed::kTooManyMoves, {"request 50): the policy process sent 100 moves for one request (at most 6)"}},
      {Misdeed::kGarbageType, {"request 50): its process answered ACCESS with message type 0x42, not 0x84 (MOVES)"}},
      {Misdeed::kTruncated, {"request 50): the policy process has ended (it exited or crashed before answering)"}},
      {Misdeed::kEnds, {"request 50): the policy process has ended (it exited or crashed before answering)"}},
      {Misdeed::kHugeText, {"request 50): the policy process sent a text of 104857600 bytes (at most 4096)"}},
      {Misdeed::kErrorText, {"request 50): its process stopped the run: the student's \\x1b[31mred\\x1b[0m bug\\x0a"}},
      {Misdeed::kGarbageDone, {"(in the policy process, at the end of the run): the policy process has ended"}},
  };
  for (const auto& [misdeed, messages] : cases) {
    SCOPED_TRACE(messages[0]);
    const std::string message = remote_error(
        with({"--policy", "tlfu"}), [misdeed = misdeed](int in, int out) { return fake_host(in, out, misdeed, 50); });
    EXPECT_NE(message.find("policy 'tlfu' (in the policy process, "), std::string::npos) << message;
    for (const char* m : messages) EXPECT_NE(message.find(m), std::string::npos) << message;
  }
}

TEST(Remote, RestoreSimReportsAHostileHostOnStderrWithStatus3) {
  Child child([](int in, int out) { return fake_host(in, out, Misdeed::kEnds, 10); });
  const std::string out = artifact::testing::scratch_path("restore_remote_out") + ".csv";
  ::testing::internal::CaptureStderr();
  const int status = main_with_args({"--policy", "tlfu", "--pages", "100", "--requests", "1000", "--cpu-timing", "off",
                                     "--remote-fds", child.fds(), "--out", out});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 3);
  EXPECT_EQ(err,
            "restore-sim: error: policy 'tlfu' (in the policy process, request 10): the policy process has ended (it "
            "exited or crashed before answering)\n");
  EXPECT_NE(access(out.c_str(), F_OK), 0);  // no output
}

// --- restore-sim and policy-host, fresh processes ---------------------------------------------

std::string build_dir() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  const std::string exe(path, static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/') + 1);
}

[[noreturn]] void exec(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

// Runs the binary `args[0]`: its exit status.
int run_binary(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid == 0) exec(args);
  int s = 0;
  waitpid(pid, &s, 0);
  return WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
}

std::string slurp(const std::string& path) {
  std::string text;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  std::remove(path.c_str());
  return text;
}

class RemoteBinaries : public ::testing::TestWithParam<std::string> {};

TEST_P(RemoteBinaries, GiveTheInProcessCsvByteForByte) {
  const std::string dir = build_dir(), sim = dir + "restore-sim", host = dir + "policy-host";
  if (access(sim.c_str(), X_OK) != 0 || access(host.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << sim << " or " << host;
  const std::vector<std::string> args = {sim,    "--policy",   GetParam(), "--workload",     "5hf90@7*6", "--pages",
                                         "1000", "--requests", "5000",     "--capacity-pct", "3:8:100",   "--read-pct",
                                         "70",   "--seed",     "11",       "--cpu-timing",   "off"};
  const std::string local = artifact::testing::scratch_path("restore_remote_local") + ".csv";
  const std::string far = artifact::testing::scratch_path("restore_remote_far") + ".csv";
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--out", local});
  ASSERT_EQ(run_binary(a), 0);
  Child child([&](int in, int out) -> int {
    exec({host, "--remote-fds", std::to_string(in) + "," + std::to_string(out)});
  });
  a = args;
  a.insert(a.end(), {"--remote-fds", child.fds(), "--out", far});
  EXPECT_EQ(run_binary(a), 0);
  EXPECT_EQ(child.status(), 0);
  const std::string expected = slurp(local);
  EXPECT_EQ(std::count(expected.begin(), expected.end(), '\n'), 2);
  EXPECT_EQ(slurp(far), expected);
}

INSTANTIATE_TEST_SUITE_P(Policies, RemoteBinaries,
                         ::testing::Values("static", "tlfu", "tlru", "lrfu", "exd", "temp", "restore"));

}  // namespace
}  // namespace restore
