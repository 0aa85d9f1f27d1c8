// Output files written whole or not at all: the text goes to a temporary file beside the target
// (PATH.tmp.<pid>), which is flushed to the disk and renamed over PATH, so that a file with the
// target's name is always complete, even after a crash or when two processes write it at once.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/command_line.h"

namespace artifact {

// A file that cannot be created, written or renamed. An InputError: the tools report an output
// path they cannot write like a bad option (ace-sim and restore-sim: exit status 2).
struct FileError : InputError {
  using InputError::InputError;
};

class AtomicFile {
 public:
  // Creates the temporary file; throws FileError.
  explicit AtomicFile(std::string path);
  // Without commit(), the temporary file is removed and the target left as it was.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Buffered; throws FileError.
  void write(const void* data, size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }

  // Flushes, syncs and closes the temporary file and renames it to the target; throws FileError.
  void commit();

  const std::string& path() const { return path_; }

 private:
  void flush();
  void fail(const std::string& what, int err);

  std::string path_, tmp_;
  int fd_ = -1;
  std::vector<char> buffer_;
  size_t used_ = 0;
};

// `text` as the whole content of `path`; throws FileError.
void write_file_atomically(const std::string& path, std::string_view text);

// The same without exceptions: false and the reason in `error`.
bool write_file_atomically(const std::string& path, std::string_view text, std::string& error);

}  // namespace artifact
