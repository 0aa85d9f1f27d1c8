#include "artifact/options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "artifact/quote.h"

namespace artifact {

namespace {

std::string number(double v) {  // a range's bounds as messages show them
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

}  // namespace

Options::Options(const std::string& command, const std::vector<std::string>& args, size_t from,
                 const std::set<std::string>& valued, const std::set<std::string>& flags, Repeats repeats)
    : command_(command) {
  CLI::App app;
  app.set_help_flag();  // --help is the program's, before the command
  // What is not one of the command's options is left over (remaining()) and reported here, in the
  // artifact's words: CLI11's own messages neither escape the input nor list the allowed options.
  app.allow_extras();
  std::map<std::string, CLI::Option*> options, switches;
  for (const auto& name : valued)
    // 0 or 1 values and every occurrence kept, so that a missing value and a repeat are told apart here
    options[name] = app.add_option("--" + name)->expected(0, 1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  for (const auto& name : flags) switches[name] = app.add_flag("--" + name);
  std::vector<std::string> reversed(args.rbegin(), args.rend() - static_cast<std::ptrdiff_t>(from));  // CLI11's order
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw InputError(std::string(e.what()) + " (`" + command + "`)");
  }
  if (const std::vector<std::string> rest = app.remaining(); !rest.empty()) {
    const std::string& first = rest.front();
    if (first.rfind("--", 0) != 0) throw InputError("unexpected argument " + excerpt(first) + " for `" + command + "`");
    std::string allowed;
    for (const auto& name : valued) allowed += " --" + name;
    for (const auto& name : flags) allowed += " --" + name;
    throw InputError("unknown option --" + escaped(first.substr(2, first.find('=') - 2)) + " for `" + command +
                     "` (allowed:" + allowed + ")");
  }
  for (const auto& [name, option] : options) {
    if (option->count() == 0) continue;
    if (option->count() > 1 && repeats == Repeats::kRefused) throw InputError("--" + name + " given twice");
    for (const std::string& value : option->results())
      if (value.empty()) throw InputError("--" + name + " needs a value");
    values_[name] = option->results().back();
  }
  for (const auto& [name, flag] : switches) {
    if (flag->count() == 0) continue;
    if (flag->results().front() != "true") throw InputError("--" + name + " takes no value");
    flags_.insert(name);
  }
}

bool Options::has(const std::string& name) const { return values_.count(name) || flags_.count(name); }

std::string Options::str(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw InputError("`" + command_ + "` needs --" + name);
  return it->second;
}

std::string Options::str(const std::string& name, const std::string& otherwise) const {
  return has(name) ? str(name) : otherwise;
}

std::string Options::choice(const std::string& name, const std::vector<std::string>& allowed,
                            const std::string& otherwise) const {
  const std::string value = otherwise.empty() ? str(name) : str(name, otherwise);
  std::string list;
  for (const auto& word : allowed) {
    if (value == word) return value;
    list += (list.empty() ? "" : "|") + word;
  }
  throw InputError("--" + name + " must be one of " + list + ", got " + excerpt(value));
}

uint64_t Options::integer(const std::string& name, uint64_t otherwise, uint64_t lo, uint64_t hi) const {
  if (!has(name)) return otherwise;
  const std::string text = str(name);
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw InputError("--" + name + " needs a whole number in " + range + ", got " + excerpt(text));
  if (value < lo || value > hi) throw InputError("--" + name + " must be in " + range + ", got " + text);
  return value;
}

double Options::real(const std::string& name, double otherwise, double lo, double hi) const {
  if (!has(name)) return otherwise;
  const std::string text = str(name);
  const std::string range = "[" + number(lo) + ", " + number(hi) + "]";
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    throw InputError("--" + name + " needs a number in " + range + ", got " + excerpt(text));
  if (value < lo || value > hi) throw InputError("--" + name + " must be in " + range + ", got " + text);
  return value;
}

void Options::only_for(const std::string& name, bool applies, const std::string& what) const {
  if (has(name) && !applies) throw InputError("--" + name + " applies only to " + what);
}

}  // namespace artifact
