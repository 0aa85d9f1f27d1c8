// A policy that runs in another process: the engine (ace-sim --remote-fds IN,OUT) keeps the pool,
// ACE, the counters and every output, and asks a policy host (policy_host.cc, which links the
// policy: lab 2's grader builds it from a student's policy.cc and runs it in a sandbox) for each
// decision over two pipes. The engine's side is RemotePolicy, the host's serve_policy(); both
// are here, and this comment is the one place the format is written down.
//
// The protocol. Numbers as artifact/wire.h writes them: little-endian u8, u32, u64, i32, f64
// (IEEE bits), str (u32 length, then the bytes). A frame is an i32 (kNoFrame = -1). One message
// is a type byte and its fields, in this order:
//
//   engine -> host                                                           the host answers
//   1  HELLO      u32 version (1), str name, u32 frames, f64 cflru_window,   READY, or ERROR
//                 u64 seed: build policy `name` (make_policy) over a mirror of `frames` empty frames
//   2  FRAME      u32 frame, u64 page, u8 flags (1 valid, 2 dirty, 4 prefetched): the frame's
//                 FrameState is now this
//   3  HIT        i32 frame, u64 now                   on_hit(frame, now)
//   4  MISS       u64 page, u64 now                    on_miss(page, now)
//   5  LOAD       i32 frame, u64 now                   on_load(frame, now)
//   6  EVICT_FIRST i32 frame                           make_evict_first(frame)
//   7  DIRTY      i32 frame                            on_dirty(frame)
//   8  CLEAN      i32 frame                            on_clean(frame)
//   9  EVICT      i32 frame                            on_evict(frame)
//   10 VICTIM     u32 n, n x i32 pinned                victim(pinned)                   CHOSEN, or ERROR
//   11 WRITEBACK  i32 victim, u32 max, u32 n,          writeback_candidates(victim,     CANDIDATES, or ERROR
//                 n x i32 pinned                       max, pinned)
//   12 END        the run is over                                                        DONE, or ERROR
//
//   host -> engine
//   129 READY
//   130 CHOSEN     i32 frame
//   131 CANDIDATES u32 n (at most max), n x i32 frame
//   132 DONE
//   255 ERROR      str text (at most 4096 bytes): the policy threw (the call, the exception's
//                  type and its what()) or could not be built; in place of an answer, or unasked
//                  when a notification threw (the engine reads it when it next reads, or when its
//                  next write fails); the host exits after sending it
//
// A session is HELLO, then any messages, then END; the host answers HELLO, VICTIM, WRITEBACK and
// END, in order, and nothing else. Before every message the engine sends a FRAME for each frame
// whose FrameState (page, valid, dirty, prefetched) differs from what the host last saw, so that
// the host's mirror (the policy's frames_) equals the pool's at each call. Notifications (3-9) are
// buffered and reach the host with the next question (10, 11, 12), which waits for its answer.
//
// The engine trusts nothing it reads: a count is bounded before anything is allocated (at most
// `max` candidates, 4096 bytes of error text), a frame is only compared until the pool has checked
// it (Simulator::check_victim, check_writeback), and a wrong type, an early end of the pipe or an
// ERROR ends the run with a PolicyError naming the policy and what its process did (exit status 3).
// A host that never answers is not detected here: whoever runs the host limits its time, and its
// end is the end of the pipe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "artifact/wire.h"
#include "policy.h"

namespace acesim::remote {

constexpr uint32_t kVersion = 1;
constexpr uint32_t kMaxErrorText = 4096;

enum Message : uint8_t {
  kHello = 1,
  kFrame = 2,
  kHit = 3,
  kMiss = 4,
  kLoad = 5,
  kEvictFirst = 6,
  kDirty = 7,
  kClean = 8,
  kEvict = 9,
  kVictim = 10,
  kWriteback = 11,
  kEnd = 12,
  kReady = 129,
  kChosen = 130,
  kCandidates = 131,
  kDone = 132,
  kError = 255,
};

enum FrameFlags : uint8_t { kValid = 1, kDirtyFlag = 2, kPrefetched = 4 };

// The host's side: serves one session on `in` (the engine's messages) and `out` (the answers),
// building the policy HELLO names from the registry. Returns the process's exit status: 0 after
// END; 1 when the policy threw or could not be built (ERROR sent with its text); 2 when the engine
// ended early or sent what the protocol does not allow (said on stderr).
int serve_policy(int in, int out);

}  // namespace acesim::remote

namespace acesim {

// The engine's side: every call of the Policy interface, forwarded. Any failure of the host is a
// PolicyError (simulator.h) naming `name`.
class RemotePolicy : public Policy {
 public:
  // Sends HELLO and waits for READY.
  RemotePolicy(const std::vector<FrameState>& frames, std::string name, const PolicyOptions& options, int in, int out);

  void on_hit(Frame f, uint64_t now) override;
  void on_miss(uint64_t page, uint64_t now) override;
  void on_load(Frame f, uint64_t now) override;
  void make_evict_first(Frame f) override;
  void on_dirty(Frame f) override;
  void on_clean(Frame f) override;
  Frame victim(const std::vector<Frame>& pinned) override;
  void on_evict(Frame f) override;
  std::vector<Frame> writeback_candidates(Frame victim, int max, const std::vector<Frame>& pinned) override;

  // END, then DONE: every notification has reached the policy and none threw.
  void finish();

 private:
  void sync();  // FRAME for each frame that changed since the host last saw it
  void frame_message(uint8_t type, Frame f, const char* call);
  void send_pinned(const std::vector<Frame>& pinned);
  // sync(), then the message `write` buffers; a failure to write ends the run.
  template <typename Write>
  void send(const char* call, Write write);
  // Flushes, then reads the answer: its type must be `expected`, and `read` reads its fields.
  template <typename Read>
  void answer(uint8_t expected, const char* call, Read read);
  [[noreturn]] void reported(const char* call);  // reads an ERROR's text
  [[noreturn]] void stopped_reading(const artifact::wire::Error& e, const char* call);
  [[noreturn]] void fail(const std::string& what) const;

  std::string name_;
  int in_fd_;
  artifact::wire::Reader in_;
  artifact::wire::Writer out_;
  std::vector<FrameState> seen_;  // the host's mirror, as the engine last sent it
};

}  // namespace acesim
