// The registry of policies by name (policy.h): the built-in ones first, then the plug-ins.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "artifact/quote.h"
#include "policy.h"

namespace restore {

using artifact::excerpt;

namespace {
// Built in first, on first use: a plug-in registering from its static initializer finds them
// whatever the order in which translation units start.
std::vector<NamedPolicy>& registry() {
  static std::vector<NamedPolicy> policies = builtin_policies();
  return policies;
}
}  // namespace

bool plain_policy_name(const std::string& name) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
  return plain && name != "all";
}

bool register_policy(const std::string& name, PolicyFactory factory) {
  if (!plain_policy_name(name)) {  // it names a CSV column's value and a command-line choice
    std::cerr << "restore-sim: error: a policy's name must be lowercase letters, digits and _ (not 'all'), not '"
              << name << "'\n";
    std::exit(2);
  }
  if (known_policy(name)) {
    std::cerr << "restore-sim: error: two policies are named '" << name << "' (a plug-in must choose another name)\n";
    std::exit(2);
  }
  registry().push_back({name, factory});
  return true;
}

bool known_policy(const std::string& name) {
  const auto& all = registry();
  return std::any_of(all.begin(), all.end(), [&](const NamedPolicy& r) { return r.name == name; });
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& r : registry()) names.push_back(r.name);
  return names;
}

std::vector<std::string> builtin_names() {
  std::vector<std::string> names;
  for (const auto& r : builtin_policies()) names.push_back(r.name);
  return names;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const std::vector<TierSpec>& tiers, uint32_t pages,
                                    const PolicyParams& params) {
  for (const auto& r : registry())
    if (r.name == name) return r.factory(tiers, pages, params);
  throw std::invalid_argument("no policy named " + excerpt(name));
}

}  // namespace restore
