// A command's options, parsed by CLI11 (Debian's libcli11-dev): `--name value`, `--name=value` and
// flags `--name`. Every mistake is one InputError that names the option and what to give instead;
// what it quotes of the user's input is escaped and cut (artifact/quote.h). The values are read
// back checked: present, a whole number or a number in its range, one of some words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "artifact/command_line.h"  // InputError

namespace artifact {

class Options {
 public:
  // An option given twice: refused (the default), or the later one wins (ace-sim and restore-sim,
  // whose grid rows are the shared options followed by the row's own, artifact/command_line.h's
  // run_grid, and whose callers override an option by giving it again).
  enum class Repeats { kRefused, kLaterWins };

  // The options args[from..] give `command` (as messages name it: "cave run"); `valued` take a value,
  // `flags` none. Throws InputError: an argument that is not an option, an unknown option (the
  // message lists the allowed ones), an option without its value or given twice, a flag with one.
  Options(const std::string& command, const std::vector<std::string>& args, size_t from,
          const std::set<std::string>& valued, const std::set<std::string>& flags, Repeats repeats = Repeats::kRefused);

  bool has(const std::string& name) const;
  // The options given with a value, by name, each once (with kLaterWins, its last value).
  const std::map<std::string, std::string>& values() const { return values_; }
  // The value of an option the command needs: InputError when it is not given.
  std::string str(const std::string& name) const;
  std::string str(const std::string& name, const std::string& otherwise) const;
  // One of `allowed`; `otherwise` when not given (an empty `otherwise`: the option is needed).
  std::string choice(const std::string& name, const std::vector<std::string>& allowed,
                     const std::string& otherwise = "") const;
  // A whole number in [lo, hi], or a number in [lo, hi]; `otherwise` when not given.
  uint64_t integer(const std::string& name, uint64_t otherwise, uint64_t lo, uint64_t hi) const;
  double real(const std::string& name, double otherwise, double lo, double hi) const;
  // InputError "--name applies only to <what>" when the option is given where it means nothing.
  void only_for(const std::string& name, bool applies, const std::string& what) const;

 private:
  std::string command_;
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
};

}  // namespace artifact
