// artifact/wire.h: every type read back as written (little-endian on the wire), the end of the
// input and a hostile length as Errors, and a writer whose reader has gone.
#include "artifact/wire.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "scratch.h"

namespace artifact::wire {
namespace {

// A scratch file written, then read from its start: no pipe capacity to mind.
class File {
 public:
  File() : path_(testing::scratch_path("wire_test")) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd_, 0);
  }
  ~File() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  int fd() const { return fd_; }
  void rewind() { ASSERT_EQ(::lseek(fd_, 0, SEEK_SET), 0); }
  std::vector<uint8_t> bytes() {
    rewind();
    std::vector<uint8_t> out(1 << 20);
    const ssize_t n = ::read(fd_, out.data(), out.size());
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    rewind();
    return out;
  }
  void raw(const std::vector<uint8_t>& data) {
    ASSERT_EQ(::write(fd_, data.data(), data.size()), ssize_t(data.size()));
  }

 private:
  std::string path_;
  int fd_;
};

void expect_error(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no Error; expected: " << message;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Wire, EveryTypeReadsBackAsWritten) {
  File file;
  const std::string binary("a\0b\xff", 4), large(100000, 'x');  // large: more than the 64 KB buffer
  const double doubles[] = {0.0, -0.0, 1.0 / 3.0, -2.5e300, 4.9e-324, std::numeric_limits<double>::infinity()};
  {
    Writer w(file.fd());
    w.u8(0);
    w.u8(255);
    w.u32(0);
    w.u32(0xdeadbeef);
    w.u64(0x0123456789abcdefULL);
    w.u64(UINT64_MAX);
    w.i32(-1);
    w.i32(INT32_MIN);
    w.i32(INT32_MAX);
    for (double d : doubles) w.f64(d);
    w.f64(std::nan(""));
    w.str("");
    w.str(binary);
    w.str(large);
    w.u32(3);
    w.u8(7);
    w.flush();
  }
  file.rewind();
  Reader r(file.fd(), "the writer");
  EXPECT_EQ(r.u8(), 0);
  EXPECT_EQ(r.u8(), 255);
  EXPECT_EQ(r.u32(), 0u);
  EXPECT_EQ(r.u32(), 0xdeadbeefu);
  EXPECT_EQ(r.u64(), 0x0123456789abcdefULL);
  EXPECT_EQ(r.u64(), UINT64_MAX);
  EXPECT_EQ(r.i32(), -1);
  EXPECT_EQ(r.i32(), INT32_MIN);
  EXPECT_EQ(r.i32(), INT32_MAX);
  for (double d : doubles) {
    const double got = r.f64();
    EXPECT_EQ(std::memcmp(&got, &d, sizeof d), 0) << d;  // the same bits (-0.0 too)
  }
  EXPECT_TRUE(std::isnan(r.f64()));
  EXPECT_EQ(r.str(0), "");
  EXPECT_EQ(r.str(4), binary);
  EXPECT_EQ(r.str(large.size()), large);
  EXPECT_EQ(r.count(3, "things"), 3u);
  EXPECT_EQ(r.u8(), 7);
  expect_error([&] { r.u8(); }, "the writer has ended");
}

TEST(Wire, NumbersAreLittleEndianOnTheWire) {
  File file;
  Writer w(file.fd());
  w.u32(0x01020304);
  w.u64(0x0102030405060708ULL);
  w.i32(-2);
  w.str("hi");
  w.flush();
  EXPECT_EQ(file.bytes(),
            (std::vector<uint8_t>{4, 3, 2, 1, 8, 7, 6, 5, 4, 3, 2, 1, 0xfe, 0xff, 0xff, 0xff, 2, 0, 0, 0, 'h', 'i'}));
}

TEST(Wire, TheEndOfTheInputIsAnErrorNamingThePeer) {
  File file;
  file.raw({1, 2, 3});  // three bytes of a u32
  file.rewind();
  Reader r(file.fd(), "the policy process");
  expect_error([&] { r.u32(); }, "the policy process has ended");
  Reader empty(file.fd(), "the engine");
  expect_error([&] { empty.u8(); }, "the engine has ended");
  // through a pipe whose writer closed after part of a text
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  {
    Writer w(p[1]);
    w.u32(10);
    w.u8('a');
    w.flush();
  }
  ::close(p[1]);
  Reader pipe_reader(p[0], "the host");
  expect_error([&] { pipe_reader.str(100); }, "the host has ended");
  ::close(p[0]);
}

TEST(Wire, AHostileLengthIsRefusedBeforeAnythingIsRead) {
  File file;
  {
    Writer w(file.fd());
    w.u32(100000000);  // a text of 100 MB, declared
    w.u32(UINT32_MAX);
    w.u32(5);
    w.flush();
  }
  file.rewind();
  Reader r(file.fd(), "the policy process");
  expect_error([&] { r.str(4096); }, "the policy process sent a text of 100000000 bytes (at most 4096)");
  expect_error([&] { r.count(64, "frames"); }, "the policy process sent 4294967295 frames (at most 64)");
  EXPECT_EQ(r.count(5, "frames"), 5u);  // the bound itself is allowed
}

TEST(Wire, AWriterWhoseReaderClosedGetsAnErrorNotSigpipe) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ::close(p[0]);
  Writer w(p[1]);
  w.u64(1);  // buffered: nothing written yet
  expect_error([&] { w.flush(); }, "the other process has ended");
  // still usable after the Error, and still an Error
  expect_error([&] { w.str(std::string(200000, 'y')); },  // larger than the buffer: written at once
               "the other process has ended");
  ::close(p[1]);
}

TEST(Wire, ParseFds) {
  int in = -1, out = -1;
  parse_fds("3,4", &in, &out);
  EXPECT_EQ(in, 3);
  EXPECT_EQ(out, 4);
  parse_fds("0,17", &in, &out);
  EXPECT_EQ(in, 0);
  EXPECT_EQ(out, 17);
  for (const char* bad : {"", "3", "3,", ",4", "a,b", "3,4,5", "-1,2", "+3,4", " 3,4", "3, 4", "3,4 ", "99999999999,1"})
    EXPECT_THROW(parse_fds(bad, &in, &out), std::invalid_argument) << "'" << bad << "'";
}

}  // namespace
}  // namespace artifact::wire
