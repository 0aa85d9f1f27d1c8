#include "artifact/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "artifact/quote.h"

namespace artifact {

namespace {
constexpr size_t kBufferBytes = 1 << 20;
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw FileError("cannot create " + escaped(tmp_) + ": " + std::strerror(errno));
  buffer_.resize(kBufferBytes);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFile::fail(const std::string& what, int err) {
  ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  throw FileError("cannot " + what + ": " + std::strerror(err));
}

void AtomicFile::write(const void* data, size_t bytes) {
  if (fd_ < 0) throw FileError("cannot write " + escaped(tmp_) + ": closed");
  const char* p = static_cast<const char*>(data);
  if (used_ + bytes > buffer_.size()) flush();
  if (bytes >= buffer_.size()) {  // large writes go to the file directly
    while (bytes > 0) {
      const ssize_t n = ::write(fd_, p, bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("write " + escaped(tmp_), errno);
      p += n;
      bytes -= static_cast<size_t>(n);
    }
    return;
  }
  std::memcpy(buffer_.data() + used_, p, bytes);
  used_ += bytes;
}

void AtomicFile::flush() {
  size_t done = 0;
  while (done < used_) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, used_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write " + escaped(tmp_), errno);
    done += static_cast<size_t>(n);
  }
  used_ = 0;
}

void AtomicFile::commit() {
  if (fd_ < 0) throw FileError("cannot write " + escaped(tmp_) + ": closed");
  flush();
  if (::fsync(fd_) != 0) fail("write " + escaped(tmp_), errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    throw FileError("cannot write " + escaped(tmp_) + ": " + std::strerror(err));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    throw FileError("cannot rename " + escaped(tmp_) + " to " + escaped(path_) + ": " + std::strerror(err));
  }
}

void write_file_atomically(const std::string& path, std::string_view text) {
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

bool write_file_atomically(const std::string& path, std::string_view text, std::string& error) {
  try {
    write_file_atomically(path, text);
    return true;
  } catch (const FileError& e) {
    error = e.what();
    return false;
  }
}

}  // namespace artifact
