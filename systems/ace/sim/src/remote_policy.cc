// Both ends of the engine-host protocol (remote_policy.h, where the format is written down).
#include "remote_policy.h"

#include <cxxabi.h>
#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "simulator.h"  // PolicyError

namespace acesim {

using artifact::wire::Error;
using namespace remote;

namespace {

// A text from the other process, safe to print: printable ASCII, the rest as \xNN.
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

uint8_t flags_of(const FrameState& s) {
  return static_cast<uint8_t>((s.valid ? kValid : 0) | (s.dirty ? kDirtyFlag : 0) | (s.prefetched ? kPrefetched : 0));
}

bool same(const FrameState& a, const FrameState& b) {
  return a.page == b.page && a.valid == b.valid && a.dirty == b.dirty && a.prefetched == b.prefetched;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The engine's side.

RemotePolicy::RemotePolicy(const std::vector<FrameState>& frames, std::string name, const PolicyOptions& options,
                           int in, int out)
    : Policy(frames),
      name_(std::move(name)),
      in_fd_(in),
      in_(in, "the policy process"),
      out_(out),
      seen_(frames.size()) {
  send("HELLO (the start of the run)", [&] {
    out_.u8(kHello);
    out_.u32(kVersion);
    out_.str(name_);
    out_.u32(static_cast<uint32_t>(frames.size()));
    out_.f64(options.cflru_window);
    out_.u64(options.seed);
  });
  answer(kReady, "HELLO (the start of the run)", [] {});
}

void RemotePolicy::on_hit(Frame f, uint64_t now) {
  send("on_hit()", [&] {
    out_.u8(kHit);
    out_.i32(f);
    out_.u64(now);
  });
}

void RemotePolicy::on_miss(uint64_t page, uint64_t now) {
  send("on_miss()", [&] {
    out_.u8(kMiss);
    out_.u64(page);
    out_.u64(now);
  });
}

void RemotePolicy::on_load(Frame f, uint64_t now) {
  send("on_load()", [&] {
    out_.u8(kLoad);
    out_.i32(f);
    out_.u64(now);
  });
}

void RemotePolicy::make_evict_first(Frame f) { frame_message(kEvictFirst, f, "make_evict_first()"); }
void RemotePolicy::on_dirty(Frame f) { frame_message(kDirty, f, "on_dirty()"); }
void RemotePolicy::on_clean(Frame f) { frame_message(kClean, f, "on_clean()"); }
void RemotePolicy::on_evict(Frame f) { frame_message(kEvict, f, "on_evict()"); }

Frame RemotePolicy::victim(const std::vector<Frame>& pinned) {
  send("victim()", [&] {
    out_.u8(kVictim);
    send_pinned(pinned);
  });
  Frame v = kNoFrame;
  answer(kChosen, "victim()", [&] { v = in_.i32(); });
  return v;  // checked by the pool (Simulator::check_victim) before it is used
}

std::vector<Frame> RemotePolicy::writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) {
  const uint32_t bound = max > 0 ? static_cast<uint32_t>(max) : 0;
  send("writeback_candidates()", [&] {
    out_.u8(kWriteback);
    out_.i32(victim);
    out_.u32(bound);
    send_pinned(pinned);
  });
  std::vector<Frame> found;
  answer(kCandidates, "writeback_candidates()", [&] {
    const uint32_t n = in_.count(bound, "write-back candidates");
    found.reserve(n);
    for (uint32_t i = 0; i < n; i++) found.push_back(in_.i32());
  });
  return found;  // checked by the pool (Simulator::check_writeback)
}

void RemotePolicy::finish() {
  send("END (the end of the run)", [&] { out_.u8(kEnd); });
  answer(kDone, "END (the end of the run)", [] {});
}

// Once per message over the whole pool: frames compared as bytes, 16 at a time (equal bytes are
// equal fields); a block whose bytes differ is compared field by field (padding alone may differ)
// and copied whole, so that the same padding does not differ again.
void RemotePolicy::sync() {
  static_assert(std::is_trivially_copyable_v<FrameState>);
  constexpr size_t kBlock = 64;
  const size_t n = seen_.size();
  const auto* now_bytes = reinterpret_cast<const unsigned char*>(frames_.data());
  const auto* seen_bytes = reinterpret_cast<const unsigned char*>(seen_.data());
  for (size_t begin = 0; begin < n; begin += kBlock) {
    const size_t end = std::min(n, begin + kBlock);
    if (std::memcmp(now_bytes + begin * sizeof(FrameState), seen_bytes + begin * sizeof(FrameState),
                    (end - begin) * sizeof(FrameState)) == 0)
      continue;
    for (size_t i = begin; i < end; i++) {
      const FrameState& now = frames_[i];
      const bool changed = !same(now, seen_[i]);
      std::memcpy(&seen_[i], &now, sizeof now);
      if (!changed) continue;
      out_.u8(kFrame);
      out_.u32(static_cast<uint32_t>(i));
      out_.u64(now.page);
      out_.u8(flags_of(now));
    }
  }
}

void RemotePolicy::frame_message(uint8_t type, Frame f, const char* call) {
  send(call, [&] {
    out_.u8(type);
    out_.i32(f);
  });
}

void RemotePolicy::send_pinned(const std::vector<Frame>& pinned) {
  out_.u32(static_cast<uint32_t>(pinned.size()));
  for (Frame f : pinned) out_.i32(f);
}

template <typename Write>
void RemotePolicy::send(const char* call, Write write) {
  try {
    sync();
    write();
  } catch (const Error& e) {
    stopped_reading(e, call);
  }
}

template <typename Read>
void RemotePolicy::answer(uint8_t expected, const char* call, Read read) {
  try {
    out_.flush();
  } catch (const Error& e) {
    stopped_reading(e, call);
  }
  try {
    const uint8_t type = in_.u8();
    if (type == kError) reported(call);
    if (type != expected)
      fail("the policy process sent message type " + std::to_string(type) + " where the answer to " + call +
           " was expected");
    read();
  } catch (const Error& e) {
    fail(std::string(e.what()) + " while the engine read its answer to " + call);
  }
}

void RemotePolicy::reported(const char* call) {
  std::string text;
  try {
    text = in_.str(kMaxErrorText);
  } catch (const Error& e) {
    fail(std::string(e.what()) + " as its error message, in place of the answer to " + call);
  }
  fail("the policy process reported an error: " + printable(text));
}

// A write failed: the host no longer reads (it has ended). It may have said why first: an ERROR
// waiting in the pipe. A host that stopped reading but neither writes nor ends gets a second.
void RemotePolicy::stopped_reading(const Error& e, const char* call) {
  pollfd p{in_fd_, POLLIN, 0};
  if (::poll(&p, 1, 1000) == 1) {
    bool error_message = false;
    try {
      error_message = in_.u8() == kError;
    } catch (const Error&) {
    }
    if (error_message) reported(call);
  }
  fail("the policy process stopped reading (" + std::string(e.what()) + ") while the engine sent " + call);
}

void RemotePolicy::fail(const std::string& what) const { throw PolicyError("policy '" + name_ + "': " + what); }

// ---------------------------------------------------------------------------------------------
// The host's side.

namespace remote {
namespace {

// The policy's code threw: its text goes to the engine.
struct PolicyThrew {
  std::string text;
};

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

// Runs the policy's code; whatever it throws becomes PolicyThrew, naming the call.
template <typename F>
auto guarded(const std::string& call, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    throw PolicyThrew{call + " threw " + type_name(typeid(e)) + ": " + e.what()};
  } catch (...) {
    throw PolicyThrew{call + " threw an exception that is not a std::exception"};
  }
}

class Host {
 public:
  Host(int in, int out) : in_(in, "the engine"), out_(out) {}

  // One session; the exit status (serve_policy).
  int serve() {
    try {
      hello();
      while (step()) {
      }
      return 0;
    } catch (const PolicyThrew& e) {
      std::cerr << "policy_host: " << e.text << "\n";
      try {
        out_.u8(kError);
        out_.str(e.text.substr(0, kMaxErrorText));
        out_.flush();
      } catch (const Error&) {  // the engine has gone: nobody to tell
      }
      return 1;
    } catch (const std::exception& e) {  // the engine ended early or broke the protocol
      std::cerr << "policy_host: " << e.what() << "\n";
      return 2;
    }
  }

 private:
  void hello() {
    if (in_.u8() != kHello) throw Error("the engine's first message is not HELLO");
    const uint32_t version = in_.u32();
    if (version != kVersion)
      throw Error("the engine speaks version " + std::to_string(version) + " of the protocol, this host " +
                  std::to_string(kVersion));
    const std::string name = in_.str(1024);
    const uint32_t n = in_.count(1u << 30, "frames");
    PolicyOptions options;
    options.cflru_window = in_.f64();
    options.seed = in_.u64();
    frames_.assign(n, FrameState{});
    policy_ = guarded("building policy '" + name + "'", [&] { return make_policy(name, frames_, options); });
    if (!policy_) throw PolicyThrew{"building policy '" + name + "' gave no policy"};
    out_.u8(kReady);
    out_.flush();
  }

  Frame frame() {
    const int32_t f = in_.i32();
    if (f < 0 || static_cast<size_t>(f) >= frames_.size())
      throw Error("the engine sent frame " + std::to_string(f) + ", not a frame of the pool");
    return f;
  }

  std::vector<Frame> pinned() {
    std::vector<Frame> out(in_.count(static_cast<uint32_t>(frames_.size()), "pinned frames"));
    for (Frame& f : out) f = frame();
    return out;
  }

  static std::string with(const char* call, Frame f) { return std::string(call) + "(frame " + std::to_string(f) + ")"; }

  // One message; false after END.
  bool step() {
    Policy& p = *policy_;
    const uint8_t type = in_.u8();
    switch (type) {
      case kFrame: {
        const uint32_t f = in_.u32();
        FrameState s;
        s.page = in_.u64();
        const uint8_t flags = in_.u8();
        if (f >= frames_.size() || flags > (kValid | kDirtyFlag | kPrefetched))
          throw Error("the engine sent a malformed FRAME message");
        s.valid = flags & kValid;
        s.dirty = flags & kDirtyFlag;
        s.prefetched = flags & kPrefetched;
        frames_[f] = s;
        return true;
      }
      case kHit: {
        const Frame f = frame();
        const uint64_t now = in_.u64();
        guarded(with("on_hit", f), [&] { p.on_hit(f, now); });
        return true;
      }
      case kMiss: {
        const uint64_t page = in_.u64(), now = in_.u64();
        guarded("on_miss(page " + std::to_string(page) + ")", [&] { p.on_miss(page, now); });
        return true;
      }
      case kLoad: {
        const Frame f = frame();
        const uint64_t now = in_.u64();
        guarded(with("on_load", f), [&] { p.on_load(f, now); });
        return true;
      }
      case kEvictFirst: {
        const Frame f = frame();
        guarded(with("make_evict_first", f), [&] { p.make_evict_first(f); });
        return true;
      }
      case kDirty: {
        const Frame f = frame();
        guarded(with("on_dirty", f), [&] { p.on_dirty(f); });
        return true;
      }
      case kClean: {
        const Frame f = frame();
        guarded(with("on_clean", f), [&] { p.on_clean(f); });
        return true;
      }
      case kEvict: {
        const Frame f = frame();
        guarded(with("on_evict", f), [&] { p.on_evict(f); });
        return true;
      }
      case kVictim: {
        const std::vector<Frame> pin = pinned();
        const Frame v = guarded("victim()", [&] { return p.victim(pin); });
        out_.u8(kChosen);
        out_.i32(v);
        out_.flush();
        return true;
      }
      case kWriteback: {
        const Frame v = frame();
        const uint32_t max = in_.count(1u << 30, "write-back candidates asked for");
        const std::vector<Frame> pin = pinned();
        const std::vector<Frame> found = guarded(with("writeback_candidates", v),
                                                 [&] { return p.writeback_candidates(v, static_cast<int>(max), pin); });
        // All of them, as many as there are: the engine checks the answer (at most `max`).
        out_.u8(kCandidates);
        out_.u32(static_cast<uint32_t>(found.size()));
        for (Frame f : found) out_.i32(f);
        out_.flush();
        return true;
      }
      case kEnd:
        out_.u8(kDone);
        out_.flush();
        return false;
      default: throw Error("the engine sent message type " + std::to_string(type) + ", which this host does not know");
    }
  }

  artifact::wire::Reader in_;
  artifact::wire::Writer out_;
  std::vector<FrameState> frames_;  // the mirror of the engine's pool: the policy's frames_
  std::unique_ptr<Policy> policy_;
};

}  // namespace

int serve_policy(int in, int out) { return Host(in, out).serve(); }

}  // namespace remote

}  // namespace acesim
