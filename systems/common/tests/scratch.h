// A scratch file's path for a test: in GoogleTest's temporary folder, named for this process, so
// that two runs of a suite at once (CI runs its lanes side by side, sharing /tmp) never write,
// read or remove each other's files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace artifact::testing {

inline std::string scratch_path(const std::string& name) {
  return ::testing::TempDir() + name + "_" + std::to_string(::getpid());
}

}  // namespace artifact::testing
