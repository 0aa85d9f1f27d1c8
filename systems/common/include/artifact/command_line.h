// The command-line pieces ace-sim and restore-sim share besides their options (artifact/options.h):
// checked numbers, the grid mode (one configuration per CSV row), number formats, the CSV output
// (stdout or a file written whole) and the exit statuses.
#pragma once

#include <charconv>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "artifact/quote.h"

namespace artifact {

// Bad input (an option, an input file, an output path): reported on stderr, exit status 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `text` as a number of type T, finite; else InputError("--name needs a number, got 'text'"). Here
// and below, what a message quotes is escaped and cut (artifact/quote.h).
template <typename T>
T parse_number(const std::string& name, const std::string& text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  bool ok = ec == std::errc() && end == text.data() + text.size() && !text.empty();
  if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(value);
  if (!ok) throw InputError("--" + escaped(name) + " needs a number, got " + excerpt(text));
  return value;
}

// `value` if in [lo, hi]; else InputError("--name must be in [lo, hi], got value").
template <typename T>
T in_range(const std::string& name, T value, T lo, T hi) {
  if (value < lo || value > hi) {
    std::ostringstream msg;
    msg << "--" << name << " must be in [" << lo << ", " << hi << "], got " << value;
    throw InputError(msg.str());
  }
  return value;
}

// The meaning of `value`, one of `choices`; else InputError("--name must be a, b or c, not 'value'").
template <typename T>
T one_of(const std::string& name, const std::string& value,
         std::initializer_list<std::pair<std::string_view, T>> choices) {
  std::string names;
  size_t k = 0;
  for (const auto& [text, meaning] : choices) {
    if (value == text) return meaning;
    names += std::string(k == 0 ? "" : k + 1 == choices.size() ? " or " : ", ") + std::string(text);
    k++;
  }
  throw InputError("--" + escaped(name) + " must be " + names + ", not " + excerpt(value));
}

// "on" or "off"; else InputError.
bool on_off(const std::string& name, const std::string& value);

// The shortest text that reads back as the same double.
std::string shortest(double v);
// `digits` digits after the point (printf's %.*f).
std::string fixed(double v, int digits);
// The file name of a path (what follows the last '/').
std::string basename(const std::string& path);

// The grid mode: a CSV whose header names options (with '_' or '-') and whose rows give their
// values, one configuration per row; an empty cell leaves the option out.
struct Grid {
  std::set<std::string> forbidden;  // options a grid may not set (checked in the header)
  std::set<std::string> flags;      // columns of flags: a cell 1, true, yes or on gives --name
};

// The arguments of each row of the grid CSV at `path`: `base` followed by "--<column> <value>"
// for every non-empty cell (a later option wins). Throws InputError.
std::vector<std::vector<std::string>> grid_rows(const std::string& path, const std::vector<std::string>& base,
                                                const Grid& grid);

// Runs `run` on every row of the grid `path`, with the command line `args` but its --grid as
// `base`, and concatenates what it returns; an InputError names the configuration's number.
std::string run_grid(const std::string& path, const std::vector<std::string>& args, const Grid& grid,
                     const std::function<std::string(const std::vector<std::string>&)>& run);

// The command line with a leading `--args-file PATH` replaced by that file's lines, one argument
// each (empty lines skipped), then the rest of `args`. A grader passes the options it hides this
// way: every process of the machine may read another's /proc/<pid>/cmdline. Throws InputError.
std::vector<std::string> with_args_file(const std::vector<std::string>& args);

// `text` on stdout when `path` is empty, else written whole to `path` (AtomicFile): the exit status.
int write_output(const std::string& path, const std::string& text);

// The tools' exit statuses around `body` (which returns the status): 2 for an InputError or a
// std::invalid_argument (a bad command line), 3 for a PolicyError (a policy broke the rules),
// 1 for any other failure; each with a message "<program>: error: ..." on stderr.
template <typename PolicyError, typename Body>
int guarded_main(const std::string& program, Body body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << program << ": error: " << e.what() << "\n(" << program << " --help lists the options)\n";
    return 2;
  } catch (const PolicyError& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 3;
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": error: " << e.what() << "\n(" << program << " --help lists the options)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace artifact
