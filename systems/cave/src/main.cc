#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  std::ios::sync_with_stdio(false);
  const int rc = cave::cli_main(args, std::cout, std::cerr);
  std::cout.flush();
  return rc;
}
