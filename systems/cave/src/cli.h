// The command line: `cave generate|convert|info|run ...` (README.md documents every option).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cave {

// Runs one command; returns the exit status (0 ok, 1 runtime failure, 2 bad arguments).
// Errors are written to `err` as "cave: error: ...".
int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

const char* usage();

// Column lists of the CSV rows printed by the subcommands.
extern const char* const kRunColumns;
extern const char* const kInfoColumns;
extern const char* const kConvertColumns;
extern const char* const kGenerateColumns;
extern const char* const kTimelineColumns;

}  // namespace cave
