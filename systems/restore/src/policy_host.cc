// policy_host: a policy's own process (remote_policy.h). The engine, restore-sim --remote-fds IN,OUT
// --policy NAME, asks it for each decision; it answers from the policy NAME registered in this
// binary. Lab 4's grader builds it in the sandbox from the student's policy.cc, this file and the
// engine without its built-in policies:
//
//   g++ -std=c++20 -O2 -Wall -Wextra -I systems/restore/src -I systems/common/include policy.cc
//       systems/restore/src/policy_host.cc build/librestore_plugins_only.a -lpthread -o host
//
// and runs `host --remote-fds IN,OUT`: it reads the engine's requests on IN and answers on OUT.
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "artifact/options.h"
#include "artifact/wire.h"
#include "remote_policy.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  int in = -1, out = -1;
  try {
    const artifact::Options options("policy_host", args, 0, {"remote-fds"}, {"help"});
    if (options.has("help")) {
      std::cout << "usage: policy_host --remote-fds IN,OUT   (serves restore-sim --remote-fds OUT,IN --policy NAME)\n";
      return 0;
    }
    if (!options.has("remote-fds")) throw artifact::InputError("--remote-fds IN,OUT is needed");
    artifact::wire::parse_fds(options.str("remote-fds"), &in, &out);
  } catch (const std::exception& e) {
    std::cerr << "policy_host: error: " << e.what() << "\n";
    return 2;
  }
  return restore::serve(in, out);
}
