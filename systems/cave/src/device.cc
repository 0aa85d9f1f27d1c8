#include "device.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "artifact/device_model.h"
#include "common.h"
#include "emulation.h"
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

// The emulated device (--emulate), if any: set once, before the graph is opened, and never changed.
// Internal linkage, so that a plug-in traversal linked into the engine cannot reach it; it lives
// until the process ends, since the workers read through it to the end.
std::atomic<artifact::DeviceModel*> emulated{nullptr};

// Does one block read (`io`), charged to the emulated device when there is one: the device books
// it as of the moment before the read and sleeps to its booked end (artifact::DeviceModel::serve).
template <class IO>
void charged(IO&& io) {
  artifact::DeviceModel* model = emulated.load(std::memory_order_acquire);
  if (model == nullptr) return io();
  model->serve(artifact::Op::kRead, kBlockSize, [&] {
    io();
    return kBlockSize;
  });
}

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
    charged([&] { read_block(block, buf); });
  }

 private:
  void read_block(uint64_t block, void* buf) {
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
    charged([&] { read_block(block, buf); });
  }

 private:
  void read_block(uint64_t block, void* buf) {
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

void start_emulation(const std::string& spec) {
  artifact::DeviceParams params;
  std::string error;
  if (!artifact::parse_params(spec, params, error)) throw UsageError("--emulate: " + error);
  auto model = std::make_unique<artifact::DeviceModel>(params);
  artifact::DeviceModel* none = nullptr;
  if (!emulated.compare_exchange_strong(none, model.get(), std::memory_order_acq_rel))
    throw RuntimeError("--emulate: the emulated device was started already; it cannot be changed");
  model.release();
}

std::string emulation_stats() {
  const artifact::DeviceModel* model = emulated.load(std::memory_order_acquire);
  return model ? model->stats_json() : "";
}

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
