// ace-sim: the trace-driven bufferpool simulator (README.md).
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) { return acesim::main_with_args(std::vector<std::string>(argv + 1, argv + argc)); }
