#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "format.h"

namespace cave::test {

// A fresh directory under the build tree (O_DIRECT needs a real file system; /tmp may be tmpfs).
inline std::filesystem::path temp_dir(const std::string& name) {
  auto base = std::filesystem::current_path() / "test-tmp" / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  return base;
}

inline Csr csr_from_lists(const std::vector<std::vector<uint32_t>>& lists, bool symmetric = false) {
  Csr g;
  g.n = static_cast<uint32_t>(lists.size());
  g.offsets.assign(1, 0);
  for (auto& l : lists) {
    g.adj.insert(g.adj.end(), l.begin(), l.end());
    g.offsets.push_back(g.adj.size());
  }
  g.symmetric = symmetric;
  return g;
}

}  // namespace cave::test
