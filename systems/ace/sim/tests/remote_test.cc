// The policy in another process (--remote-fds, remote_policy.h): a remote run writes the bytes of
// the same run in-process, CSV and I/O log, for every built-in policy, with and without ACE and
// prefetching, on small and larger pools, synthetic workloads and traces; the host's mirror of the
// pool equals the pool at every call; and a host that answers what the pool cannot carry out, that
// breaks the protocol, throws or goes away ends the run with a message naming what it did, exit
// status 3, and no output. The host runs in a thread of this process (serve_policy, or a hostile
// stand-in speaking the protocol by hand), and, once, as the programs themselves.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "artifact/rng.h"
#include "artifact/wire.h"
#include "cli.h"
#include "policy.h"
#include "remote_policy.h"
#include "scratch.h"
#include "simulator.h"
#include "workload.h"

namespace {

using acesim::Frame;
using acesim::FrameState;

// Every call and the whole pool as the policy sees it then, one line each: a run in-process and
// the same run through a host give the same text only if the host's mirror equals the pool at
// every call, and the calls arrive in the same order with the same arguments.
std::string recorded;
class Recorder : public acesim::ListPolicy {
 public:
  explicit Recorder(const std::vector<FrameState>& frames) : ListPolicy(frames, acesim::ListKind::kLruWsr, 1.0 / 3.0) {}
  void on_hit(Frame f, uint64_t now) override {
    log("hit " + std::to_string(f) + " " + std::to_string(now));
    ListPolicy::on_hit(f, now);
  }
  void on_miss(uint64_t page, uint64_t now) override {
    log("miss " + std::to_string(page) + " " + std::to_string(now));
  }
  void on_load(Frame f, uint64_t now) override {
    log("load " + std::to_string(f) + " " + std::to_string(now));
    ListPolicy::on_load(f, now);
  }
  void make_evict_first(Frame f) override {
    log("evict_first " + std::to_string(f));
    ListPolicy::make_evict_first(f);
  }
  void on_dirty(Frame f) override {
    log("dirty " + std::to_string(f));
    ListPolicy::on_dirty(f);
  }
  void on_clean(Frame f) override {
    log("clean " + std::to_string(f));
    ListPolicy::on_clean(f);
  }
  Frame victim(const std::vector<Frame>& pinned) override {
    log("victim" + list(pinned));
    return ListPolicy::victim(pinned);
  }
  void on_evict(Frame f) override {
    log("evict " + std::to_string(f));
    ListPolicy::on_evict(f);
  }
  std::vector<Frame> writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) override {
    log("writeback " + std::to_string(victim) + " " + std::to_string(max) + list(pinned));
    return ListPolicy::writeback_candidates(victim, max, pinned);
  }

 private:
  static std::string list(const std::vector<Frame>& frames) {
    std::string s;
    for (Frame f : frames) {
      s += ' ';  // (not " " + ...: GCC 12's -Wrestrict false positive)
      s += std::to_string(f);
    }
    return s;
  }
  void log(const std::string& call) {
    recorded += call + " |";
    for (const FrameState& s : frames_) {
      recorded += ' ';
      recorded += std::to_string(s.page);
      if (s.valid) recorded += 'v';
      if (s.dirty) recorded += 'd';
      if (s.prefetched) recorded += 'p';
    }
    recorded += "\n";
  }
};

// Wrong on purpose, one way per `hostile` (set before its host starts); otherwise LRU-WSR.
enum Hostile {
  kBehaves,
  kVictimOutOfRange,
  kVictimNegative,
  kVictimHuge,
  kVictimNone,
  kVictimPinned,
  kTooManyCandidates,
  kCleanCandidate,
  kVictimAsCandidate,
  kVictimThrows,
  kHitThrows,
  kConstructorThrows,
};
int hostile = kBehaves;
class HostilePolicy : public acesim::ListPolicy {
 public:
  explicit HostilePolicy(const std::vector<FrameState>& frames)
      : ListPolicy(frames, acesim::ListKind::kLruWsr, 1.0 / 3.0) {
    if (hostile == kConstructorThrows) throw std::runtime_error("cannot start");
  }
  void on_hit(Frame f, uint64_t now) override {
    if (hostile == kHitThrows) throw std::out_of_range("student's on_hit went too far");
    ListPolicy::on_hit(f, now);
  }
  Frame victim(const std::vector<Frame>& pinned) override {
    switch (hostile) {
      case kVictimOutOfRange: return static_cast<Frame>(frames_.size());
      case kVictimNegative: return -7;
      case kVictimHuge: return INT32_MAX;
      case kVictimNone: return acesim::kNoFrame;
      case kVictimThrows: throw std::logic_error("no idea which one");
      case kVictimPinned:
        if (!pinned.empty()) return pinned.back();
        break;
      default: break;
    }
    return ListPolicy::victim(pinned);
  }
  std::vector<Frame> writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) override {
    std::vector<Frame> found = ListPolicy::writeback_candidates(victim, max, pinned);
    if (hostile == kTooManyCandidates) found.assign(static_cast<size_t>(max) + 1, victim == 0 ? 1 : 0);
    if (hostile == kVictimAsCandidate) found = {victim};
    if (hostile == kCleanCandidate)
      for (Frame f = 0; f < static_cast<Frame>(frames_.size()); f++)
        if (!frames_[f].dirty) return {f};
    return found;
  }
};

}  // namespace

ACESIM_REGISTER_POLICY("test_recorder", Recorder);
ACESIM_REGISTER_POLICY("test_hostile", HostilePolicy);

namespace acesim {
namespace {

namespace fs = std::filesystem;
using artifact::wire::Reader;
using artifact::wire::Writer;

// A host in a thread of this process, on two pipes: `serve` (serve_policy unless a test brings
// its own) reads the engine's messages from in() and answers on out().
class HostThread {
 public:
  explicit HostThread(std::function<int(int, int)> serve = remote::serve_policy) {
    if (::pipe2(to_host_, O_CLOEXEC) != 0 || ::pipe2(from_host_, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    thread_ = std::thread([this, serve] {
      status_ = serve(to_host_[0], from_host_[1]);
      ::close(to_host_[0]);
      ::close(from_host_[1]);
    });
  }
  ~HostThread() { finish(); }
  // The engine's ends: it reads answers from in() and writes to out().
  int in() const { return from_host_[0]; }
  int out() const { return to_host_[1]; }
  std::string fds() const { return std::to_string(in()) + "," + std::to_string(out()); }
  // The engine is done: its ends close (the host sees the end), and the host's status.
  int finish() {
    if (thread_.joinable()) {
      ::close(from_host_[0]);
      ::close(to_host_[1]);
      thread_.join();
    }
    return status_;
  }

 private:
  int to_host_[2], from_host_[2];
  int status_ = -1;
  std::thread thread_;
};

class Remote : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');  // a parameterized test's "Name/0"
    dir_ = artifact::testing::scratch_path("ace-sim-remote-" + name);
    fs::create_directories(dir_);
    write_traces();
  }
  void TearDown() override {
    hostile = kBehaves;
    fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string read(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Scans (so that TaP prefetches) and writes, as lab 2's edge cases; and a pg trace of two
  // processes over two relations with re-pins, W lines and W lines on pages not in the pool.
  void write_traces() {
    std::ofstream simple(path("scans.trace"));
    artifact::SplitMix64 rng(5);
    for (int round = 0; round < 6; round++) {
      for (int page = 40 * round; page < 40 * round + 60; page++) simple << "R " << page << "\n";
      for (int page = round * 25; page < round * 25 + 25; page++) simple << "W " << (page * 37) % 300 << "\n";
      for (int i = 0; i < 100; i++) simple << (rng.below(3) == 0 ? "W " : "R ") << rng.below(320) << "\n";
    }
    std::ofstream pg(path("two.pgtrace"));
    for (int i = 0; i < 3000; i++) {
      const int pid = 100 + static_cast<int>(rng.below(2));
      const int rel = 16384 + 6 * static_cast<int>(rng.below(2));
      const uint64_t block = i % 7 == 0 ? rng.below(400) : (i / 3) % 400;  // runs and jumps
      pg << pid << ",1663,5," << rel << ",0," << block << ",R\n";
      if (rng.below(4) == 0) pg << pid << ",1663,5," << rel << ",0," << block << ",R\n";  // a re-pin
      if (rng.below(3) == 0) pg << pid << ",1663,5," << rel << ",0," << block << ",W\n";
      if (rng.below(40) == 0) pg << pid << ",1663,5," << rel << ",0," << rng.below(400) << ",W\n";
    }
  }

  // The run with `args` in-process and with the policy in a host thread: the same CSV and I/O log.
  void expect_same_as_in_process(const std::vector<std::string>& args) {
    std::string what;
    for (const auto& a : args) what += a + " ";
    SCOPED_TRACE(what);
    std::vector<std::string> local = args, remote = args;
    local.insert(local.end(), {"--out", path("local.csv"), "--io-log", path("local.io")});
    ASSERT_EQ(main_with_args(local), 0);
    HostThread host;
    remote.insert(remote.end(),
                  {"--remote-fds", host.fds(), "--out", path("remote.csv"), "--io-log", path("remote.io")});
    ASSERT_EQ(main_with_args(remote), 0);
    EXPECT_EQ(host.finish(), 0);
    EXPECT_EQ(read("remote.csv"), read("local.csv"));
    EXPECT_EQ(read("remote.io"), read("local.io"));
    EXPECT_FALSE(read("local.io").empty());
    fs::remove(path("remote.csv"));
    fs::remove(path("remote.io"));
  }

  // main_with_args(args) with a host thread running `serve`: the exit status is 3, stderr names
  // the policy and says `message`, and no output was written.
  void expect_refused(std::vector<std::string> args, std::function<int(int, int)> serve, const std::string& message) {
    SCOPED_TRACE(message);
    HostThread host(std::move(serve));
    args.insert(args.end(), {"--remote-fds", host.fds(), "--out", path("refused.csv"), "--io-log", path("refused.io")});
    ::testing::internal::CaptureStderr();
    const int status = main_with_args(args);
    const std::string err = ::testing::internal::GetCapturedStderr();
    host.finish();
    EXPECT_EQ(status, 3) << err;
    EXPECT_NE(err.find("ace-sim: error: policy '"), std::string::npos) << err;
    EXPECT_NE(err.find(message), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(path("refused.csv")));
    EXPECT_FALSE(fs::exists(path("refused.io")));
  }

  std::string dir_;
};

std::vector<std::string> synthetic(int pool, int pages, int ops, int read_pct, int seed) {
  return {"--pool-pages",
          std::to_string(pool),
          "--synthetic",
          "--ops",
          std::to_string(ops),
          "--pages",
          std::to_string(pages),
          "--read-pct",
          std::to_string(read_pct),
          "--seed",
          std::to_string(seed)};
}

// ---------------------------------------------------------------------------------------------
// The same bytes.

class RemoteSameBytes : public Remote, public ::testing::WithParamInterface<const char*> {};

TEST_P(RemoteSameBytes, ForEveryModePoolAndWorkload) {
  const std::string policy = GetParam();
  std::vector<std::vector<std::string>> modes = {
      {"--ace", "off"},
      {"--ace", "on", "--n-w", "8"},
      {"--ace", "on", "--n-w", "3", "--k-w", "2"},
  };
  if (policy != "expcache") {
    modes.push_back({"--ace", "on", "--n-w", "4", "--prefetch", "sequential", "--n-e", "8"});
    modes.push_back({"--ace", "on", "--n-w", "8", "--prefetch", "history", "--n-e", "4"});
  }
  for (int pool : {1, 2, 3, 16, 200}) {
    const std::vector<std::vector<std::string>> workloads = {
        synthetic(pool, 4 * pool + 40, 3000, 50, pool),  // mixed
        synthetic(pool, 20 * pool, 2000, 0, 7),          // every access a write
        {"--pool-pages", std::to_string(pool), "--trace", path("scans.trace"), "--trace-format", "simple"},
        {"--pool-pages", std::to_string(pool), "--trace", path("two.pgtrace")},
    };
    for (const auto& workload : workloads)
      for (const auto& mode : modes) {
        std::vector<std::string> args = {"--policy", policy, "--cflru-window", "0.4"};
        args.insert(args.end(), workload.begin(), workload.end());
        args.insert(args.end(), mode.begin(), mode.end());
        expect_same_as_in_process(args);
      }
  }
}

TEST_P(RemoteSameBytes, OnALargerPool) {
  const std::string policy = GetParam();
  std::vector<std::string> args = {"--policy", policy, "--ace", "on", "--n-w", "16", "--alpha", "3.5"};
  const auto workload = synthetic(2000, 12000, 20000, 30, 99);
  args.insert(args.end(), workload.begin(), workload.end());
  expect_same_as_in_process(args);
  if (policy != "expcache") {
    args.insert(args.end(), {"--prefetch", "history", "--n-e", "16"});
    expect_same_as_in_process(args);
  }
}

INSTANTIATE_TEST_SUITE_P(BuiltIn, RemoteSameBytes, ::testing::Values("lru", "cflru", "lru_wsr", "clock", "expcache"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// The host's mirror is the pool at every call: the recording policy writes the same text.
TEST_F(Remote, TheHostsMirrorEqualsThePoolAtEveryCall) {
  struct Case {
    int pool;
    bool ace;
    Prefetch prefetch;
    std::string trace, format;
  };
  for (const Case& c :
       {Case{5, true, Prefetch::kSequential, "scans.trace", "simple"},
        Case{7, true, Prefetch::kHistory, "two.pgtrace", "pg"}, Case{3, false, Prefetch::kOff, "two.pgtrace", "pg"},
        Case{1, true, Prefetch::kOff, "scans.trace", "simple"}}) {
    SCOPED_TRACE(c.trace + " pool " + std::to_string(c.pool));
    Config config;
    config.policy = "test_recorder";
    config.pool_pages = c.pool;
    config.ace = c.ace;
    config.prefetch = c.prefetch;
    config.n_w = 4;
    const std::vector<Op> ops = read_trace(path(c.trace), c.format);

    recorded.clear();
    Simulator local(config);
    replay(local, ops);
    const std::string expected = recorded;

    recorded.clear();
    HostThread host;
    Config remote_config = config;
    RemotePolicy* remote = nullptr;
    remote_config.policy_factory = [&](const std::vector<FrameState>& frames, const PolicyOptions& options) {
      auto p = std::make_unique<RemotePolicy>(frames, "test_recorder", options, host.in(), host.out());
      remote = p.get();
      return std::unique_ptr<Policy>(std::move(p));
    };
    Simulator sim(remote_config);
    replay(sim, ops);
    remote->finish();
    EXPECT_EQ(host.finish(), 0);
    EXPECT_GT(expected.size(), 1000u);
    EXPECT_EQ(recorded, expected);  // written by the host's thread, which has ended
    EXPECT_EQ(sim.counters().misses, local.counters().misses);
  }
}

// ---------------------------------------------------------------------------------------------
// The command line.

TEST_F(Remote, TheCommandLineRefusesWhatARemotePolicyCannotDo) {
  auto refused = [](std::vector<std::string> args, const std::string& message) {
    try {
      parse_args(args);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  const auto run = synthetic(10, 100, 100, 50, 1);
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  refused(with({"--remote-fds", "3"}), "--remote-fds expected two file descriptors IN,OUT");
  refused(with({"--remote-fds", "a,b"}), "--remote-fds expected two file descriptors");
  refused(with({"--remote-fds", "-1,4"}), "--remote-fds expected two file descriptors");
  refused(with({"--remote-fds", "0,1"}), "--remote-fds cannot use file descriptor 1: stdout and stderr");
  refused(with({"--remote-fds", "2,5"}), "--remote-fds cannot use file descriptor 2");
  refused({"--grid", path("grid.csv"), "--remote-fds", "3,4"}, "--remote-fds runs one configuration");
  refused(with({"--remote-fds", "3,4", "--policy", "Student"}), "lowercase letters, digits and _");
  refused(with({"--remote-fds", "3,4", "--policy", "expcache", "--ace", "on", "--prefetch", "sequential"}),
          "--prefetch is not available with --policy expcache");
  // a name the engine does not know is the host's business; without --remote-fds it is refused
  EXPECT_EQ(parse_args(with({"--remote-fds", "3,4", "--policy", "student"})).config.policy, "student");
  EXPECT_TRUE(parse_args(with({"--policy", "student", "--remote-fds", "3,4"})).remote);
  refused(with({"--policy", "student"}), "--policy must be one of");

  // a grid may not set it per row
  std::ofstream(path("grid.csv")) << "policy,remote_fds\nlru,3\n";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(main_with_args({"--pool-pages", "4", "--grid", path("grid.csv"), "--out", path("o.csv")}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("remote"), std::string::npos) << err;

  // descriptors that are not open
  ::testing::internal::CaptureStderr();
  std::vector<std::string> args = with({"--remote-fds", "1000,1001", "--out", path("o.csv")});
  EXPECT_EQ(main_with_args(args), 2);
  const std::string closed = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(closed.find("file descriptor 1000 is not open"), std::string::npos) << closed;
  EXPECT_FALSE(fs::exists(path("o.csv")));
}

// ---------------------------------------------------------------------------------------------
// A hostile host: through the real host, a policy that answers what the pool cannot carry out.

TEST_F(Remote, AnAnswerThePoolCannotCarryOutEndsTheRun) {
  const auto writes = synthetic(4, 40, 400, 20, 3);
  auto ace = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"--policy", "test_hostile", "--ace", "on", "--n-w", "8"};
    args.insert(args.end(), writes.begin(), writes.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::vector<std::string> prefetching = {
      "--policy", "test_hostile",      "--pool-pages",   "10",    "--ace", "on", "--prefetch", "sequential",
      "--trace",  path("scans.trace"), "--trace-format", "simple"};
  struct Case {
    Hostile mode;
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {kVictimOutOfRange, ace({}),
       "policy 'test_hostile': victim() returned frame 4, not a frame of the pool (0 to 3)"},
      {kVictimNegative, ace({}), "victim() returned frame -7, not a frame of the pool"},
      {kVictimHuge, ace({}), "victim() returned frame 2147483647, not a frame of the pool"},
      {kVictimNone, ace({}), "victim() returned no frame"},
      {kVictimPinned, prefetching, "which is pinned"},
      {kTooManyCandidates, ace({}),
       "the policy process sent 8 write-back candidates (at most 7) while the engine read its answer to writeback_candidates()"},
      {kCleanCandidate, ace({}), "writeback_candidates() returned frame"},
      {kVictimAsCandidate, ace({}), "the victim itself"},
      {kVictimThrows, ace({}),
       "the policy process reported an error: victim() threw std::logic_error: no idea which one"},
      {kHitThrows, ace({}), "the policy process reported an error: on_hit(frame "},
      {kConstructorThrows, ace({}),
       "the policy process reported an error: building policy 'test_hostile' threw std::runtime_error: cannot start"},
  };
  for (const Case& c : cases) {
    hostile = c.mode;
    expect_refused(c.args, remote::serve_policy, c.message);
  }
  hostile = kBehaves;
  expect_refused({"--policy", "nosuch", "--pool-pages", "4", "--synthetic", "--ops", "10", "--pages", "9"},
                 remote::serve_policy,
                 "the policy process reported an error: building policy 'nosuch' threw "
                 "std::invalid_argument: no policy named 'nosuch'");
}

// ---------------------------------------------------------------------------------------------
// A hostile host speaking the protocol by hand.

// Reads the engine's messages up to the next question (HELLO, VICTIM, WRITEBACK, END): its type.
uint8_t next_question(Reader& r) {
  for (;;) {
    const uint8_t type = r.u8();
    switch (type) {
      case remote::kHello:
        r.u32();
        r.str(1024);
        r.u32();
        r.f64();
        r.u64();
        return type;
      case remote::kFrame:
        r.u32();
        r.u64();
        r.u8();
        break;
      case remote::kHit:
      case remote::kLoad:
        r.i32();
        r.u64();
        break;
      case remote::kMiss:
        r.u64();
        r.u64();
        break;
      case remote::kVictim:
        for (uint32_t n = r.u32(); n > 0; n--) r.i32();
        return type;
      case remote::kWriteback: {
        r.i32();
        r.u32();
        for (uint32_t n = r.u32(); n > 0; n--) r.i32();
        return type;
      }
      case remote::kEnd: return type;
      default: r.i32(); break;  // the notifications of one frame
    }
  }
}

// A stand-in host: READY, then answers of frame 0 to victim() (a frame the pool can take while
// nothing is pinned) and of no candidates; from the `victims`-th answered victim on, `last` writes
// the answer to the first question of type `when`, and the host ends. With victims < 0, `last`
// answers HELLO.
std::function<int(int, int)> stand_in(int victims, std::function<void(Writer&, uint8_t)> last,
                                      uint8_t when = remote::kVictim) {
  return [victims, last, when](int in, int out) {
    Reader r(in, "the engine");
    Writer w(out);
    try {
      if (next_question(r) != remote::kHello) return 2;
      if (victims < 0) {
        last(w, remote::kHello);
        w.flush();
        return 0;
      }
      w.u8(remote::kReady);
      w.flush();
      for (int answered = 0;;) {
        const uint8_t question = next_question(r);
        if (answered >= victims && question == when) {
          last(w, question);
          w.flush();
          return 0;
        }
        if (question == remote::kVictim) {
          w.u8(remote::kChosen);
          w.i32(0);
          answered++;
        } else if (question == remote::kWriteback) {
          w.u8(remote::kCandidates);
          w.u32(0);
        } else {
          return 2;
        }
        w.flush();
      }
    } catch (const artifact::wire::Error&) {
      return 2;
    }
  };
}

TEST_F(Remote, AHostThatBreaksTheProtocolEndsTheRunWithAClearMessage) {
  const auto run = [&] {
    std::vector<std::string> args = {"--policy", "student", "--ace", "on", "--n-w", "4"};
    const auto workload = synthetic(8, 200, 2000, 30, 4);
    args.insert(args.end(), workload.begin(), workload.end());
    return args;
  }();
  struct Case {
    std::string what;
    std::function<int(int, int)> host;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"a garbage message type", stand_in(3, [](Writer& w, uint8_t) { w.u8(0x41); }),
       "policy 'student': the policy process sent message type 65 where the answer to victim() was expected"},
      {"another question's answer", stand_in(3, [](Writer& w, uint8_t) { w.u8(remote::kDone); }),
       "sent message type 132 where the answer to victim() was expected"},
      {"garbage for READY", stand_in(-1, [](Writer& w, uint8_t) { w.u8(0); }),
       "sent message type 0 where the answer to HELLO (the start of the run) was expected"},
      {"a truncated answer",
       stand_in(5,
                [](Writer& w, uint8_t) {
                  w.u8(remote::kChosen);
                  w.u8(1);
                  w.u8(0);
                }),
       "the policy process has ended while the engine read its answer to victim()"},
      {"the end mid-run", stand_in(10, [](Writer&, uint8_t) {}),
       "the policy process has ended while the engine read its answer to victim()"},
      {"the end before READY", [](int, int) { return 0; }, "the policy process"},
      {"an error text of 100 MB declared length",
       stand_in(2,
                [](Writer& w, uint8_t) {
                  w.u8(remote::kError);
                  w.u32(100000000);
                  w.u64(0x4141414141414141ULL);
                }),
       "the policy process sent a text of 100000000 bytes (at most 4096) as its error message, in place of the "
       "answer to victim()"},
      {"an error text with control characters",
       stand_in(2,
                [](Writer& w, uint8_t) {
                  w.u8(remote::kError);
                  w.str("bad\n\x1b[31mred\xff");
                }),
       "the policy process reported an error: bad\\x0a\\x1b[31mred\\xff"},
      {"a billion candidates",
       stand_in(
           2,
           [](Writer& w, uint8_t) {
             w.u8(remote::kCandidates);
             w.u32(1000000000);
           },
           remote::kWriteback),
       "the policy process sent 1000000000 write-back candidates (at most 3)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    expect_refused(run, c.host, c.message);
  }
}

// A host that stops reading and goes while the engine writes: the write fails, and what the host
// said before it went is the message.
TEST_F(Remote, AHostThatEndsWhileTheEngineWritesIsReported) {
  std::vector<std::string> args = {"--policy", "student", "--ace", "off"};
  const auto workload = synthetic(100, 100, 20000, 100, 4);  // no victim ever: notifications only
  args.insert(args.end(), workload.begin(), workload.end());
  auto ready_then = [](std::function<void(Writer&)> then) {
    return [then](int in, int out) {
      Reader r(in, "the engine");
      Writer w(out);
      next_question(r);
      w.u8(remote::kReady);
      then(w);
      w.flush();
      return 1;
    };
  };
  expect_refused(args, ready_then([](Writer&) {}),
                 "the policy process stopped reading (the other process has ended) while the engine sent on_");
  expect_refused(args, ready_then([](Writer& w) {
                   w.u8(remote::kError);  // unasked: the policy threw in a notification
                   w.str("on_hit(frame 1) threw std::bad_alloc: std::bad_alloc");
                 }),
                 "the policy process reported an error: on_hit(frame 1) threw std::bad_alloc");
}

// ---------------------------------------------------------------------------------------------
// The programs as processes: ace-sim --remote-fds and ace-sim-policy-host, as a grader runs them.

pid_t spawn(const std::vector<std::string>& args, const std::vector<int>& close_in_child) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (int fd : close_in_child) ::close(fd);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(Remote, TheTwoProgramsAsProcessesWriteTheInProcessBytes) {
  std::vector<std::string> args = {ACE_SIM_BINARY, "--policy", "lru_wsr",    "--ace",  "on",
                                   "--n-w",        "6",        "--prefetch", "history"};
  const auto workload = synthetic(64, 600, 5000, 40, 12);
  args.insert(args.end(), workload.begin(), workload.end());
  std::vector<std::string> local(args.begin() + 1, args.end());
  local.insert(local.end(), {"--out", path("local.csv"), "--io-log", path("local.io")});
  ASSERT_EQ(main_with_args(local), 0);

  int to_host[2], from_host[2];  // inherited by the children: no O_CLOEXEC
  ASSERT_EQ(::pipe(to_host), 0);
  ASSERT_EQ(::pipe(from_host), 0);
  const std::string engine_fds = std::to_string(from_host[0]) + "," + std::to_string(to_host[1]);
  const std::string host_fds = std::to_string(to_host[0]) + "," + std::to_string(from_host[1]);
  args.insert(args.end(), {"--remote-fds", engine_fds, "--out", path("remote.csv"), "--io-log", path("remote.io")});
  const pid_t host = spawn({ACE_SIM_POLICY_HOST, "--remote-fds", host_fds}, {from_host[0], to_host[1]});
  const pid_t engine = spawn(args, {to_host[0], from_host[1]});
  for (int fd : {to_host[0], to_host[1], from_host[0], from_host[1]}) ::close(fd);
  EXPECT_EQ(wait_for(engine), 0);
  EXPECT_EQ(wait_for(host), 0);
  EXPECT_EQ(read("remote.csv"), read("local.csv"));
  EXPECT_EQ(read("remote.io"), read("local.io"));

  // a policy the host does not have: the engine says so (3), the host ends with 1
  ASSERT_EQ(::pipe(to_host), 0);
  ASSERT_EQ(::pipe(from_host), 0);
  const std::string fds2 = std::to_string(from_host[0]) + "," + std::to_string(to_host[1]);
  const std::string host_fds2 = std::to_string(to_host[0]) + "," + std::to_string(from_host[1]);
  std::vector<std::string> unknown = {ACE_SIM_BINARY, "--policy", "student",          "--remote-fds",
                                      fds2,           "--out",    path("unknown.csv")};
  unknown.insert(unknown.end(), workload.begin(), workload.end());
  const pid_t host2 = spawn({ACE_SIM_POLICY_HOST, "--remote-fds", host_fds2}, {from_host[0], to_host[1]});
  const pid_t engine2 = spawn(unknown, {to_host[0], from_host[1]});
  for (int fd : {to_host[0], to_host[1], from_host[0], from_host[1]}) ::close(fd);
  EXPECT_EQ(wait_for(engine2), 3);
  EXPECT_EQ(wait_for(host2), 1);
  EXPECT_FALSE(fs::exists(path("unknown.csv")));

  // the host's own command line
  EXPECT_EQ(wait_for(spawn({ACE_SIM_POLICY_HOST}, {})), 2);
  EXPECT_EQ(wait_for(spawn({ACE_SIM_POLICY_HOST, "--remote-fds", "x"}, {})), 2);
}

}  // namespace
}  // namespace acesim
