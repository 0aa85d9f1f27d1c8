// A policy run in another process (restore-sim --remote-fds IN,OUT; the host: policy_host.cc).
//
// Lab 4's grader runs the trusted engine (restore-sim) outside the sandbox and the student's policy
// inside it, in a "policy host" process that answers the engine's questions over two pipes. The
// engine owns everything else (the workload, the tiers' queues, its PlacementCheck, the latencies,
// every counter and the CSV), so a remote run's row is the in-process one byte for byte. This
// comment is the one place the format is written down.
//
// Framing: artifact/wire.h (systems/common): little-endian u8/u32/u64/i32, f64 as its IEEE-754
// bits (so a double crosses exactly), str = u32 length + bytes. A message is a type byte and its
// fields, nothing else (no length prefix). Each side reads on its IN and writes on its OUT: the
// engine's OUT is the host's IN, and the other way round.
//
// Engine -> host:
//   0x01 HELLO    u32 magic 0x31505352 ("RSP1"), u32 version 2, str policy name (at most 64 bytes),
//                 u32 pages, u32 tiers n (2..8), then per tier, fastest first: f64 read_latency_us,
//                 f64 alpha, i32 k_r, i32 k_w, u64 capacity_pages, i32 page_size;
//                 then every field of PolicyParams (policy.h), in this order: f64 lrfu_lambda,
//                 f64 exd_alpha, temp {f64 increase, u32 window, f64 drop, u32 drop_period,
//                 u64 timestep, f64 initial}, u32 count + count x u32 temp_admit (count <= 8),
//                 u8 victim, u8 tlru_margin, rl {td {f64 lambda, f64 beta, f64 lr0, f64 lr_decay, f64 p_init},
//                 u32 step, u32 fit_window, u32 fit_every, u32 observe_every, f64 b_scale,
//                 u8 centre, u8 floor, u8 start, u8 basis, u8 decision, u8 reward, u8 transition,
//                 u32 count + count x f64
//                 epsilon (count <= 8), u8 explore, u32 init_rounds}, u64 seed.
//                 (Enumerations as their index in policy.h / rl.h's declarations.)
//   0x02 PLACE    str: the initial placement, one byte per page (its tier, 0 = fastest); sent right
//                 after HELLO. The host answers READY once it has built and placed the policy.
//   0x03 OBSERVE  i32 tier, f64 response_us, u64 now: Policy::observe, no answer. The engine
//                 buffers them and sends them, in the order it made them, just before the next
//                 ACCESS (or END); in the simulator request r's observation follows its ACCESS.
//   0x04 ACCESS   u32 page, u8 op (0 read, 1 write), u64 now, then n x u64 queued: QueueProbe's
//                 answer for every tier at that moment (the host answers the policy's probe from
//                 them, without a round trip). The host answers MOVES or ERROR.
//   0x05 END      the run is over; the host answers DONE and exits with status 0.
// Host -> engine:
//   0x81 READY    nothing else.
//   0x84 MOVES    u32 count (at most max_moves(n) = 2 x tiers: a promotion and its demotion is 2;
//                 more is refused, in-process there is no bound), count x {u32 page, u8 from,
//                 u8 to} (tiers 0-based), in the order the policy made them.
//   0x85 DONE     u64 memory_bytes (Policy::memory_bytes after the last request), u64 heap_bytes
//                 (release_and_measure in the host's process: the host's allocator, not the
//                 engine's; both go to the row unchecked, as the policy's own account).
//   0xEE ERROR    str text (at most kMaxText bytes): why the host stops (a policy that broke the
//                 rules by the host's own PlacementCheck, an exception of the policy's code, an
//                 unknown policy name); may answer HELLO/PLACE or ACCESS. The host then exits
//                 with a non-zero status.
//
// The engine treats every byte from the host as hostile: a page or tier out of range, too many
// moves, an unknown type, a text longer than kMaxText, a truncated message or an early end of the
// pipe stop the run with a PolicyError (exit status 3) that names the policy, the request and what
// its process did; the moves that pass go through the engine's own PlacementCheck as in-process.
// A host that stops answering without ending blocks the engine: its sandbox's limits end it (then
// the pipe's end is an error like any other).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "artifact/wire.h"
#include "policy.h"

namespace restore {

namespace remote {

constexpr uint32_t kMagic = 0x31505352;  // "RSP1" in little-endian bytes
constexpr uint32_t kVersion = 2;         // 2: tLRU's margin, ReStore's reward and transition
constexpr size_t kMaxText = 4096;        // an ERROR's text
constexpr size_t kMaxName = 64;          // a policy's name
constexpr uint32_t kMaxTiers = 8;
enum Type : uint8_t {
  kHello = 0x01,
  kPlace = 0x02,
  kObserve = 0x03,
  kAccess = 0x04,
  kEnd = 0x05,
  kReady = 0x81,
  kMoves = 0x84,
  kDone = 0x85,
  kError = 0xEE,
};
inline uint32_t max_moves(size_t tiers) { return static_cast<uint32_t>(2 * tiers); }

struct Hello {
  std::string policy;
  uint32_t pages = 0;
  std::vector<TierSpec> tiers;
  PolicyParams params;
};
// HELLO, its type byte included.
void write_hello(artifact::wire::Writer& out, const Hello& hello);
// HELLO's fields (its type byte already read); a wrong magic or version, a count or an enumeration
// out of range is an artifact::wire::Error.
Hello read_hello(artifact::wire::Reader& in);
// ERROR with `text`, cut to kMaxText bytes, and flushed.
void write_error(artifact::wire::Writer& out, const std::string& text);
// "0x2a (the name of the type, if it is one)".
std::string type_name(uint8_t type);

}  // namespace remote

// The engine's side: the Policy interface forwarded to a host process. It keeps its own record of
// the placement from the moves the host reports (tier_of), after checking that every page and tier
// is in range; the engine's PlacementCheck checks the rest. The file descriptors are not closed.
class RemotePolicy : public Policy {
 public:
  RemotePolicy(std::string name, const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams& params, int in,
               int out);
  // Sends HELLO and PLACE and waits for READY.
  void place(const std::vector<uint8_t>& tier_of) override;
  // One round trip: the buffered observations and ACCESS (with every tier's queued count) out, the
  // moves back.
  void access(uint32_t page, Op op, uint64_t now, QueueProbe& probe, std::vector<Move>& moves) override;
  // Buffered until the next ACCESS or END.
  void observe(int tier, double response_us, uint64_t now) override;
  // The host's count once finish() has returned (0 before).
  size_t memory_bytes() const override { return end_.memory_bytes; }

  struct End {
    uint64_t memory_bytes = 0, heap_bytes = 0;
  };
  // END: the host's account of the policy's memory.
  End finish();
  // The engine's PlacementCheck refused the moves: the same message, saying where the policy runs
  // and at which request.
  [[noreturn]] void refused(const PolicyError& error) const;

 private:
  [[noreturn]] void fail(const std::string& what) const;
  // The reply's type; an ERROR's text or any other type than `expected` ends the run.
  void expect(uint8_t expected, const char* answering);
  std::string name_;
  PolicyParams params_;
  artifact::wire::Writer out_;
  artifact::wire::Reader in_;
  std::string at_ = "before the first request";  // where the run is, for messages
  End end_;
};

// The host's side (policy_host.cc's main): serves one run on `in` and `out`. Builds the policy
// HELLO names through the registry (make_policy), answers each ACCESS with a local QueueProbe
// that returns the sent counts, and checks the policy's own account with a local PlacementCheck as
// the engine does in-process. Returns the exit status: 0 after END; 3 when the policy broke the
// rules, threw or is unknown (after sending ERROR); 1 when the engine's side ended or sent what
// cannot be. Each error is also printed on stderr, "policy_host: error: ...".
int serve(int in, int out);

}  // namespace restore
