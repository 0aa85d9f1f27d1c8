#include "artifact/wire.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace artifact::wire {

namespace {
constexpr size_t kBuffer = 1 << 16;

template <typename T>
void little_endian(T v, uint8_t* out) {
  for (size_t i = 0; i < sizeof(T); i++) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
template <typename T>
T from_little_endian(const uint8_t* in) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); i++) v |= static_cast<T>(in[i]) << (8 * i);
  return v;
}
}  // namespace

void parse_fds(const std::string& text, int* in, int* out) {
  // Digits only: std::stoi alone would also take " 3" or "+3".
  auto fd = [](const std::string& digits, int* value) {
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
      return false;
    *value = std::stoi(digits);
    return true;
  };
  const size_t comma = text.find(',');
  if (comma == std::string::npos || !fd(text.substr(0, comma), in) || !fd(text.substr(comma + 1), out))
    throw std::invalid_argument("expected two file descriptors IN,OUT (e.g. 3,4), not '" + text + "'");
}

Writer::Writer(int fd) : fd_(fd) {
  signal(SIGPIPE, SIG_IGN);
  buffer_.reserve(kBuffer);
}

void Writer::u32(uint32_t v) {
  uint8_t b[4];
  little_endian(v, b);
  put(b, 4);
}
void Writer::u64(uint64_t v) {
  uint8_t b[8];
  little_endian(v, b);
  put(b, 8);
}
void Writer::f64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  u64(bits);
}
void Writer::str(const std::string& s) {
  if (s.size() > UINT32_MAX) throw Error("a text of " + std::to_string(s.size()) + " bytes does not fit a message");
  u32(static_cast<uint32_t>(s.size()));
  put(s.data(), s.size());
}

void Writer::put(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (buffer_.size() + n > kBuffer) flush();
  if (n > kBuffer) {
    buffer_.insert(buffer_.end(), p, p + n);
    flush();
    return;
  }
  buffer_.insert(buffer_.end(), p, p + n);
}

void Writer::flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;  // before anything else can change errno
      buffer_.clear();
      throw Error(error == EPIPE ? "the other process has ended" : std::string("write: ") + std::strerror(error));
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

Reader::Reader(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)), buffer_(kBuffer) {}

void Reader::get(void* data, size_t n) {
  auto* out = static_cast<uint8_t*>(data);
  while (n > 0) {
    if (begin_ == end_) {
      ssize_t got;
      do got = ::read(fd_, buffer_.data(), buffer_.size());
      while (got < 0 && errno == EINTR);
      if (got <= 0) {
        const int error = errno;  // before the message's allocations
        throw Error(peer_ + (got == 0 ? " has ended" : std::string(": read: ") + std::strerror(error)));
      }
      begin_ = 0;
      end_ = static_cast<size_t>(got);
    }
    const size_t take = std::min(n, end_ - begin_);
    std::memcpy(out, buffer_.data() + begin_, take);
    begin_ += take;
    out += take;
    n -= take;
  }
}

uint8_t Reader::u8() {
  uint8_t v;
  get(&v, 1);
  return v;
}
uint32_t Reader::u32() {
  uint8_t b[4];
  get(b, 4);
  return from_little_endian<uint32_t>(b);
}
uint64_t Reader::u64() {
  uint8_t b[8];
  get(b, 8);
  return from_little_endian<uint64_t>(b);
}
double Reader::f64() {
  const uint64_t bits = u64();
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}
std::string Reader::str(size_t max) {
  const uint32_t n = u32();
  if (n > max)
    throw Error(peer_ + " sent a text of " + std::to_string(n) + " bytes (at most " + std::to_string(max) + ")");
  std::string s(n, '\0');
  get(s.data(), n);
  return s;
}
uint32_t Reader::count(uint32_t max, const char* what) {
  const uint32_t n = u32();
  if (n > max)
    throw Error(peer_ + " sent " + std::to_string(n) + " " + what + " (at most " + std::to_string(max) + ")");
  return n;
}

}  // namespace artifact::wire
