// The registry of traversals by name (algorithms.h): the built-in one first, then the plug-ins.
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "algorithms.h"
#include "artifact/quote.h"
#include "common.h"

namespace cave {

namespace {
// Built in first, on first use: a plug-in registering from its static initializer finds it
// whatever the order in which translation units start.
std::vector<NamedTraversal>& registry() {
  static std::vector<NamedTraversal> traversals = builtin_traversals();
  return traversals;
}
}  // namespace

bool register_traversal(const std::string& name, Traversal t) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
  const auto& all = registry();
  const bool taken = std::any_of(all.begin(), all.end(), [&](const NamedTraversal& r) { return r.name == name; });
  if (!plain || taken || !t.bfs || !t.wcc) {
    std::cerr << "cave: error: traversal " << artifact::excerpt(name) << ": "
              << (taken    ? "the name is taken"
                  : !plain ? "a name is lowercase letters, digits and _"
                           : "needs a BFS and a WCC function")
              << "\n";
    std::exit(2);
  }
  registry().push_back({name, t});
  return true;
}

std::vector<std::string> traversal_names() {
  std::vector<std::string> names;
  for (const auto& r : registry()) names.push_back(r.name);
  return names;
}

const Traversal& traversal(const std::string& name) {
  for (const auto& r : registry())
    if (r.name == name) return r.traversal;
  std::string known;
  for (const auto& n : traversal_names()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("--traversal must be one of " + (known.empty() ? std::string("(none)") : known) + ", not " +
                   artifact::excerpt(name));
}

}  // namespace cave
