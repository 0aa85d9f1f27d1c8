// A policy run in another process: the engine's RemotePolicy and the host's serve() (the protocol
// is in remote_policy.h).
#include "remote_policy.h"

#include <fcntl.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <utility>

#include "artifact/quote.h"
#include "simulator.h"

namespace restore {

using artifact::excerpt;
using artifact::wire::Error;
using artifact::wire::Reader;
using artifact::wire::Writer;

namespace remote {

namespace {

template <typename E>
E enumeration(Reader& in, E last, const char* what) {
  const uint8_t v = in.u8();
  if (v > static_cast<uint8_t>(last)) throw Error("HELLO: " + std::string(what) + " " + std::to_string(v) + " is none");
  return static_cast<E>(v);
}

template <typename E>
void put(Writer& out, E v) {
  out.u8(static_cast<uint8_t>(v));
}

}  // namespace

void write_hello(Writer& out, const Hello& h) {
  out.u8(kHello);
  out.u32(kMagic);
  out.u32(kVersion);
  out.str(h.policy);
  out.u32(h.pages);
  out.u32(static_cast<uint32_t>(h.tiers.size()));
  for (const TierSpec& t : h.tiers) {
    out.f64(t.read_latency_us);
    out.f64(t.alpha);
    out.i32(t.k_r);
    out.i32(t.k_w);
    out.u64(t.capacity_pages);
    out.i32(t.page_size);
  }
  const PolicyParams& p = h.params;
  out.f64(p.lrfu_lambda);
  out.f64(p.exd_alpha);
  out.f64(p.temp.increase);
  out.u32(p.temp.window);
  out.f64(p.temp.drop);
  out.u32(p.temp.drop_period);
  out.u64(p.temp.timestep);
  out.f64(p.temp.initial);
  out.u32(static_cast<uint32_t>(p.temp_admit.size()));
  for (uint32_t n : p.temp_admit) out.u32(n);
  put(out, p.victim);
  put(out, p.tlru_margin);
  const RlParams& rl = p.rl;
  out.f64(rl.td.lambda);
  out.f64(rl.td.beta);
  out.f64(rl.td.lr0);
  out.f64(rl.td.lr_decay);
  out.f64(rl.td.p_init);
  out.u32(rl.step);
  out.u32(rl.fit_window);
  out.u32(rl.fit_every);
  out.u32(rl.observe_every);
  out.f64(rl.b_scale);
  put(out, rl.centre);
  put(out, rl.floor);
  put(out, rl.start);
  put(out, rl.basis);
  put(out, rl.decision);
  put(out, rl.reward);
  put(out, rl.transition);
  out.u32(static_cast<uint32_t>(rl.epsilon.size()));
  for (double e : rl.epsilon) out.f64(e);
  put(out, rl.explore);
  out.u32(rl.init_rounds);
  out.u64(p.seed);
}

Hello read_hello(Reader& in) {
  if (const uint32_t magic = in.u32(); magic != kMagic)
    throw Error("HELLO: magic " + std::to_string(magic) + " is not ReStore's remote policy protocol");
  if (const uint32_t version = in.u32(); version != kVersion)
    throw Error("HELLO: protocol version " + std::to_string(version) + ", this side speaks " +
                std::to_string(kVersion));
  Hello h;
  h.policy = in.str(kMaxName);
  h.pages = in.u32();
  const uint32_t n = in.count(kMaxTiers, "tiers");
  h.tiers.resize(n);
  for (TierSpec& t : h.tiers) {
    t.read_latency_us = in.f64();
    t.alpha = in.f64();
    t.k_r = in.i32();
    t.k_w = in.i32();
    t.capacity_pages = in.u64();
    t.page_size = in.i32();
  }
  PolicyParams& p = h.params;
  p.lrfu_lambda = in.f64();
  p.exd_alpha = in.f64();
  p.temp.increase = in.f64();
  p.temp.window = in.u32();
  p.temp.drop = in.f64();
  p.temp.drop_period = in.u32();
  p.temp.timestep = in.u64();
  p.temp.initial = in.f64();
  p.temp_admit.resize(in.count(kMaxTiers, "temp_admit values"));
  for (uint32_t& v : p.temp_admit) v = in.u32();
  p.victim = enumeration(in, PolicyParams::Victim::kAfter, "victim");
  p.tlru_margin = enumeration(in, PolicyParams::TlruMargin::kCapacity, "tlru_margin");
  RlParams& rl = p.rl;
  rl.td.lambda = in.f64();
  rl.td.beta = in.f64();
  rl.td.lr0 = in.f64();
  rl.td.lr_decay = in.f64();
  rl.td.p_init = in.f64();
  rl.step = in.u32();
  rl.fit_window = in.u32();
  rl.fit_every = in.u32();
  rl.observe_every = in.u32();
  rl.b_scale = in.f64();
  rl.centre = enumeration(in, RlParams::Centre::kMidrange, "centre");
  rl.floor = enumeration(in, RlParams::Floor::kOriginal, "floor");
  rl.start = enumeration(in, RlParams::Start::kOriginal, "start");
  rl.basis = enumeration(in, Basis::kIndependent, "basis");
  rl.decision = enumeration(in, RlParams::Decision::kReleased, "decision");
  rl.reward = enumeration(in, RlParams::Reward::kModel, "reward");
  rl.transition = enumeration(in, RlParams::Transition::kRequest, "transition");
  rl.epsilon.resize(in.count(kMaxTiers, "epsilon values"));
  for (double& e : rl.epsilon) e = in.f64();
  rl.explore = enumeration(in, RlParams::Explore::kUpgrade, "explore");
  rl.init_rounds = in.u32();
  p.seed = in.u64();
  return h;
}

void write_error(Writer& out, const std::string& text) {
  out.u8(kError);
  out.str(text.size() > kMaxText ? text.substr(0, kMaxText) : text);
  out.flush();
}

std::string type_name(uint8_t type) {
  static const std::pair<uint8_t, const char*> names[] = {{kHello, "HELLO"},   {kPlace, "PLACE"}, {kObserve, "OBSERVE"},
                                                          {kAccess, "ACCESS"}, {kEnd, "END"},     {kReady, "READY"},
                                                          {kMoves, "MOVES"},   {kDone, "DONE"},   {kError, "ERROR"}};
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", type);
  for (const auto& [code, name] : names)
    if (code == type) return std::string(hex) + " (" + name + ")";
  return hex;
}

}  // namespace remote

// --- the engine's side -----------------------------------------------------------------------

namespace {

// The host's text, safe to print as one line: printable ASCII, every other byte as \xNN.
std::string printable(const std::string& text) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : text) {
    if (ch >= 0x20 && ch < 0x7f) {
      out += static_cast<char>(ch);
    } else {
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

}  // namespace

RemotePolicy::RemotePolicy(std::string name, const std::vector<TierSpec>& tiers, uint32_t pages,
                           const PolicyParams& params, int in, int out)
    : Policy(tiers, pages), name_(std::move(name)), params_(params), out_(out), in_(in, "the policy process") {
  for (int fd : {in, out})
    if (fd < 0 || fcntl(fd, F_GETFD) == -1)
      throw std::invalid_argument("--remote-fds: file descriptor " + std::to_string(fd) + " is not open");
  if (name_.size() > remote::kMaxName)
    throw std::invalid_argument("a remote policy's name has at most " + std::to_string(remote::kMaxName) +
                                " characters");
}

void RemotePolicy::fail(const std::string& what) const {
  std::string text = what;
  if (text.size() >= 9 && text.compare(text.size() - 9, 9, "has ended") == 0)
    text += " (it exited or crashed before answering)";
  throw PolicyError("policy '" + name_ + "' (in the policy process, " + at_ + "): " + text);
}

void RemotePolicy::refused(const PolicyError& error) const {
  const std::string text = error.what(), prefix = "policy '" + name_ + "': ";
  fail(text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : text);
}

void RemotePolicy::expect(uint8_t expected, const char* answering) {
  const uint8_t type = in_.u8();
  if (type == expected) return;
  if (type == remote::kError) fail("its process stopped the run: " + printable(in_.str(remote::kMaxText)));
  fail(std::string("its process answered ") + answering + " with message type " + remote::type_name(type) + ", not " +
       remote::type_name(expected));
}

void RemotePolicy::place(const std::vector<uint8_t>& tier_of) {
  Policy::place(tier_of);
  try {
    remote::write_hello(out_, remote::Hello{name_, pages_, tiers_, params_});
    out_.u8(remote::kPlace);
    out_.str(std::string(tier_of.begin(), tier_of.end()));
    out_.flush();
    expect(remote::kReady, "HELLO and PLACE");
  } catch (const Error& e) {
    fail(e.what());
  }
}

void RemotePolicy::observe(int tier, double response_us, uint64_t now) {
  try {
    out_.u8(remote::kObserve);
    out_.i32(tier);
    out_.f64(response_us);
    out_.u64(now);
  } catch (const Error& e) {
    fail(e.what());
  }
}

void RemotePolicy::access(uint32_t page, Op op, uint64_t now, QueueProbe& probe, std::vector<Move>& moves) {
  at_ = "request " + std::to_string(now);
  const int n = tiers();
  try {
    out_.u8(remote::kAccess);
    out_.u32(page);
    out_.u8(static_cast<uint8_t>(op));
    out_.u64(now);
    for (int t = 0; t < n; t++) out_.u64(probe.queued(t));
    out_.flush();
    expect(remote::kMoves, "ACCESS");
    const uint32_t count = in_.count(remote::max_moves(tiers_.size()), "moves for one request");
    for (uint32_t i = 0; i < count; i++) {
      Move m;
      m.page = in_.u32();
      m.from = in_.u8();
      m.to = in_.u8();
      const std::string what = "moved page " + std::to_string(m.page);
      if (m.page >= pages_)
        fail(what + ", which does not exist (the workload has " + std::to_string(pages_) + " pages, 0 to " +
             std::to_string(pages_ - 1) + ")");
      if (m.from >= n || m.to >= n)
        fail(what + " from tier " + std::to_string(m.from + 1) + " to tier " + std::to_string(m.to + 1) +
             ", but there are " + std::to_string(n) + " tiers");
      // The record tier_of() gives the engine; the engine's PlacementCheck checks `from`, the
      // neighbour and the capacities right after, and ends the run if any is wrong.
      tier_[m.page] = m.to;
      size_[m.from]--;
      size_[m.to]++;
      moves.push_back(m);
    }
  } catch (const Error& e) {
    fail(e.what());
  }
}

RemotePolicy::End RemotePolicy::finish() {
  at_ = "at the end of the run";
  try {
    out_.u8(remote::kEnd);
    out_.flush();
    expect(remote::kDone, "END");
    end_.memory_bytes = in_.u64();
    end_.heap_bytes = in_.u64();
  } catch (const Error& e) {
    fail(e.what());
  }
  return end_;
}

// --- the host's side -------------------------------------------------------------------------

namespace {

// QueueProbe from the counts an ACCESS carries.
class SentProbe : public QueueProbe {
 public:
  explicit SentProbe(size_t tiers) : queued_(tiers, 0) {}
  uint64_t queued(int tier) override {
    if (tier < 0 || static_cast<size_t>(tier) >= queued_.size())
      throw std::out_of_range("QueueProbe::queued(" + std::to_string(tier) + "): the tiers are 0 to " +
                              std::to_string(queued_.size() - 1));
    return queued_[static_cast<size_t>(tier)];
  }
  std::vector<uint64_t> queued_;
};

// PlacementCheck's message without its "policy 'NAME': " (the engine names the policy).
std::string without_name(const std::string& text, const std::string& name) {
  const std::string prefix = "policy '" + name + "': ";
  return text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : text;
}

}  // namespace

int serve(int in, int out) {
  Reader rd(in, "the engine");
  Writer wr(out);
  auto ended = [](const std::string& what) {
    std::cerr << "policy_host: error: " << what << "\n";
    return 1;
  };
  auto report = [&](const std::string& text) {
    std::cerr << "policy_host: error: " << text << "\n";
    try {
      remote::write_error(wr, text);
    } catch (const Error&) {
    }
    return 3;
  };
  remote::Hello hello;
  std::vector<uint8_t> tier_of;
  try {
    uint8_t type = rd.u8();
    if (type != remote::kHello) throw Error("the engine sent " + remote::type_name(type) + " first, not HELLO");
    hello = remote::read_hello(rd);
    if ((type = rd.u8()) != remote::kPlace)
      throw Error("the engine sent " + remote::type_name(type) + " after HELLO, not PLACE");
    const std::string placement = rd.str(hello.pages);
    if (placement.size() != hello.pages)
      throw Error("PLACE holds " + std::to_string(placement.size()) + " pages, HELLO said " +
                  std::to_string(hello.pages));
    tier_of.assign(placement.begin(), placement.end());
  } catch (const Error& e) {
    return ended(e.what());
  }
  if (!known_policy(hello.policy)) {
    std::string names;
    for (const std::string& n : policy_names()) names += (names.empty() ? "" : ", ") + n;
    return report("this policy process has no policy named " + excerpt(hello.policy) + " (it has " +
                  (names.empty() ? "none" : names) + ")");
  }
  const size_t n = hello.tiers.size();
  const uint32_t bound = remote::max_moves(n);
  try {
    std::unique_ptr<Policy> policy = make_policy(hello.policy, hello.tiers, hello.pages, hello.params);
    policy->place(tier_of);
    PlacementCheck check(hello.policy, hello.tiers, tier_of);
    wr.u8(remote::kReady);
    wr.flush();
    SentProbe probe(n);
    std::vector<Move> moves;
    moves.reserve(bound);
    while (true) {
      const uint8_t type = rd.u8();
      if (type == remote::kObserve) {
        const int32_t tier = rd.i32();
        const double response_us = rd.f64();
        const uint64_t now = rd.u64();
        if (tier < 0 || static_cast<size_t>(tier) >= n)
          throw Error("the engine sent an observation of tier " + std::to_string(tier));
        policy->observe(tier, response_us, now);
      } else if (type == remote::kAccess) {
        const uint32_t page = rd.u32();
        const uint8_t op = rd.u8();
        const uint64_t now = rd.u64();
        for (uint64_t& q : probe.queued_) q = rd.u64();
        if (page >= hello.pages || op > 1)
          throw Error("the engine sent an access to page " + std::to_string(page) + ", op " + std::to_string(op));
        check.tier(page, *policy);  // as the engine does before each request in-process
        moves.clear();
        policy->access(page, static_cast<Op>(op), now, probe, moves);
        if (moves.size() > bound)
          throw PolicyError("policy '" + hello.policy + "': made " + std::to_string(moves.size()) +
                            " moves for one request (page " + std::to_string(page) + "), more than the " +
                            std::to_string(bound) + " (2 x tiers) a policy process may send");
        check.apply(moves);
        wr.u8(remote::kMoves);
        wr.u32(static_cast<uint32_t>(moves.size()));
        for (const Move& m : moves) {
          wr.u32(m.page);
          wr.u8(m.from);
          wr.u8(m.to);
        }
        wr.flush();
      } else if (type == remote::kEnd) {
        const uint64_t memory = policy->memory_bytes();
        const uint64_t heap = release_and_measure(policy);
        wr.u8(remote::kDone);
        wr.u64(memory);
        wr.u64(heap);
        wr.flush();
        return 0;
      } else {
        throw Error("the engine sent message type " + remote::type_name(type));
      }
    }
  } catch (const Error& e) {
    return ended(e.what());
  } catch (const PolicyError& e) {
    return report(without_name(e.what(), hello.policy));
  } catch (const std::exception& e) {
    return report(std::string("the policy's code threw an exception: ") + e.what());
  } catch (...) {
    return report("the policy's code threw something that is not a std::exception");
  }
}

}  // namespace restore
