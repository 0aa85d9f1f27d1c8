// Messages between an engine and a plug-in's host process over two pipes (the labs' graders run a
// student's policy in a sandboxed process of its own, and the artifact's engine, outside it, asks
// it for each decision: labs/README.md, "Results come from the grader"). Fixed-size little-endian
// numbers, buffered both ways. The engine treats every byte it reads as hostile: each read is
// bounded, and the end of the other process (EOF, a broken pipe) is an Error, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace artifact::wire {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses "IN,OUT" (two file descriptors, e.g. from --remote-fds); throws std::invalid_argument.
void parse_fds(const std::string& text, int* in, int* out);

// Writes to a pipe, buffered; flush() sends what is buffered. A reader that has gone is an Error
// (SIGPIPE is ignored from the first Writer on: a process that uses one expects EPIPE instead).
class Writer {
 public:
  explicit Writer(int fd);
  void u8(uint8_t v) { put(&v, 1); }
  void u32(uint32_t v);
  void u64(uint64_t v);
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void f64(double v);
  void str(const std::string& s);  // u32 length, then the bytes
  void flush();

 private:
  void put(const void* data, size_t n);
  int fd_;
  std::vector<uint8_t> buffer_;
};

// Reads from a pipe, buffered. The end of the input is an Error naming `peer`.
class Reader {
 public:
  Reader(int fd, std::string peer);
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  int32_t i32() { return static_cast<int32_t>(u32()); }
  double f64();
  // At most `max` bytes; a longer length is an Error (a hostile length never allocates).
  std::string str(size_t max);
  // A count about to size a vector: at most `max`, else an Error saying what it counts.
  uint32_t count(uint32_t max, const char* what);

 private:
  void get(void* data, size_t n);
  int fd_;
  std::string peer_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0, end_ = 0;
};

}  // namespace artifact::wire
