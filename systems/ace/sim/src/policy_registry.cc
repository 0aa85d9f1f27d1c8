// The registry of policies by name (policy.h): the built-in ones first, then the plug-ins.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "policy.h"

namespace acesim {

namespace {
// Built in first, on first use: a plug-in registering from its static initializer finds them
// whatever the order in which translation units start.
std::vector<NamedPolicy>& registry() {
  static std::vector<NamedPolicy> policies = builtin_policies();
  return policies;
}
}  // namespace

bool register_policy(const std::string& name, PolicyFactory factory) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
  if (!plain) {  // it names a CSV column's value and a command-line choice
    std::cerr << "ace-sim: error: a policy's name must be lowercase letters, digits and _, not '" << name << "'\n";
    std::exit(2);
  }
  if (known_policy(name)) {
    std::cerr << "ace-sim: error: two policies are named '" << name << "' (a plug-in must choose another name)\n";
    std::exit(2);
  }
  registry().push_back({name, factory});
  return true;
}

bool known_policy(const std::string& name) {
  const auto& all = registry();
  return std::any_of(all.begin(), all.end(), [&](const NamedPolicy& r) { return r.name == name; });
}

std::string policy_names() {
  std::string names;
  for (const auto& r : registry()) names += (names.empty() ? "" : ", ") + r.name;
  return names;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const std::vector<FrameState>& frames,
                                    const PolicyOptions& options) {
  for (const auto& r : registry())
    if (r.name == name) return r.factory(frames, options);
  throw std::invalid_argument("no policy named '" + name + "' (known: " + policy_names() + ")");
}

}  // namespace acesim
