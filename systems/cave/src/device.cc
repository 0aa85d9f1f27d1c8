#include "device.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common.h"
#include "format.h"

#ifdef CAVE_HAVE_URING
#include <liburing.h>
#endif

namespace cave {

bool Device::o_direct() const {
  const int flags = ::fcntl(fd_, F_GETFL);
  return flags >= 0 && (flags & O_DIRECT) != 0;
}

bool uring_compiled() {
#ifdef CAVE_HAVE_URING
  return true;
#else
  return false;
#endif
}

namespace {

std::string read_error(uint64_t block, int err) {
  std::string msg = "read of block " + std::to_string(block) + " failed: " + errno_text(err);
  if (err == EINVAL) msg += " (the file system refused an aligned O_DIRECT read)";
  return msg;
}

class PreadDevice final : public Device {
 public:
  PreadDevice(int fd, Counters& c) : Device(fd, c) {}
  ~PreadDevice() override { ::close(fd_); }
  void read(uint64_t block, void* buf) override {
    size_t done = 0;
    while (done < kBlockSize) {
      ssize_t r = ::pread(fd_, static_cast<char*>(buf) + done, kBlockSize - done,
                          static_cast<off_t>(block * kBlockSize + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        throw RuntimeError(read_error(block, errno));
      }
      if (r == 0) throw RuntimeError("read of block " + std::to_string(block) + " failed: unexpected end of file");
      done += static_cast<size_t>(r);
    }
    counters_.reads.fetch_add(1, std::memory_order_relaxed);
    counters_.bytes_read.fetch_add(kBlockSize, std::memory_order_relaxed);
  }
};

#ifdef CAVE_HAVE_URING
std::string uring_refused(int err) {
  return "io_uring is not available here (" + errno_text(err) +
         "): it may be refused by a container's seccomp profile or by the kernel configuration; use --io-engine threads";
}

class UringDevice final : public Device {
 public:
  UringDevice(int fd, Counters& c) : Device(fd, c) {
    // Fail early, in the calling thread, when io_uring is refused.
    struct io_uring probe;
    int r = io_uring_queue_init(2, &probe, 0);
    if (r < 0) {
      ::close(fd_);
      throw RuntimeError(uring_refused(-r));
    }
    io_uring_queue_exit(&probe);
  }
  ~UringDevice() override { ::close(fd_); }
  void read(uint64_t block, void* buf) override {
    struct io_uring& ring = thread_ring();
    size_t done = 0;
    while (done < kBlockSize) {
      struct io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      io_uring_prep_read(sqe, fd_, static_cast<char*>(buf) + done, static_cast<unsigned>(kBlockSize - done),
                         block * kBlockSize + done);
      int r = io_uring_submit_and_wait(&ring, 1);
      if (r < 0) {
        if (r == -EINTR) continue;
        throw RuntimeError("io_uring submit failed: " + errno_text(-r) + "; use --io-engine threads");
      }
      struct io_uring_cqe* cqe = nullptr;
      r = io_uring_wait_cqe(&ring, &cqe);
      if (r < 0) throw RuntimeError("io_uring wait failed: " + errno_text(-r) + "; use --io-engine threads");
      const int res = cqe->res;
      io_uring_cqe_seen(&ring, cqe);
      if (res == -EINTR || res == -EAGAIN) continue;
      if (res < 0) {
        std::string msg = read_error(block, -res);
        if (res == -EOPNOTSUPP || res == -EINVAL)
          msg += "; this file system may not support io_uring reads, use --io-engine threads";
        throw RuntimeError(msg);
      }
      if (res == 0) throw RuntimeError("read of block " + std::to_string(block) + " failed: unexpected end of file");
      done += static_cast<size_t>(res);
    }
    counters_.reads.fetch_add(1, std::memory_order_relaxed);
    counters_.bytes_read.fetch_add(kBlockSize, std::memory_order_relaxed);
  }

 private:
  struct Ring {
    struct io_uring ring;
    bool ok = false;
    ~Ring() {
      if (ok) io_uring_queue_exit(&ring);
    }
  };
  static struct io_uring& thread_ring() {
    thread_local Ring r;
    if (!r.ok) {
      int e = io_uring_queue_init(4, &r.ring, 0);
      if (e < 0) throw RuntimeError(uring_refused(-e));
      r.ok = true;
    }
    return r.ring;
  }
};
#endif

}  // namespace

std::unique_ptr<Device> open_device(const std::string& path, IoEngine engine, Counters& counters) {
  if (engine == IoEngine::Uring && !uring_compiled())
    throw UsageError(
        "--io-engine uring: this cave was built without liburing (apt-get install liburing-dev pkg-config, "
        "then rebuild); use --io-engine threads");
  int fd = open_direct(path);
#ifdef CAVE_HAVE_URING
  if (engine == IoEngine::Uring) return std::make_unique<UringDevice>(fd, counters);
#endif
  return std::make_unique<PreadDevice>(fd, counters);
}

}  // namespace cave
