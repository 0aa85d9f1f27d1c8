// Block reads with O_DIRECT: synchronous pread per worker ("threads", the thesis's design) or
// io_uring (one ring per worker thread, still one outstanding read per worker).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "stats.h"

namespace cave {

enum class IoEngine { Threads, Uring };

class Device {
 public:
  virtual ~Device() = default;
  // Reads file block `block` (4096 bytes) into `buf` (4096-byte aligned). Throws RuntimeError.
  virtual void read(uint64_t block, void* buf) = 0;
  int fd() const { return fd_; }
  bool o_direct() const;  // the kernel's view of the open flags (fcntl F_GETFL)

 protected:
  explicit Device(int fd, Counters& c) : fd_(fd), counters_(c) {}
  int fd_;
  Counters& counters_;
};

bool uring_compiled();

// Opens `path` with O_DIRECT (refusing file systems that do not support it).
std::unique_ptr<Device> open_device(const std::string& path, IoEngine engine, Counters& counters);

}  // namespace cave
