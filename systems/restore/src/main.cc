// restore-sim: the tiered-storage simulator and emulator of thesis Chapter 6 (README.md).
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) { return restore::main_with_args(std::vector<std::string>(argv + 1, argv + argc)); }
