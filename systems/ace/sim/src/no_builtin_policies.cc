// builtin_policies() for a simulator that runs plug-ins only (libace_sim_plugins_only.a): lab 2's
// students' policies are linked against it, so that none can delegate to the built-in LRU-WSR.
#include "policy.h"

namespace acesim {

std::vector<NamedPolicy> builtin_policies() { return {}; }

}  // namespace acesim
