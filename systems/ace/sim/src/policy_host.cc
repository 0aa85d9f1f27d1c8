// policy_host --remote-fds IN,OUT: the process a policy runs in when the engine (ace-sim
// --remote-fds) runs the rest of the simulation in another one (remote_policy.h has the protocol).
// It reads the engine's messages from IN and answers on OUT; the policy it builds is the one the
// engine's HELLO names, from the policies linked into it (the built-in ones in ace-sim-policy-host,
// a student's plug-in in lab 2's: g++ ... policy.cc policy_host.cc libace_sim_plugins_only.a).
// Exit status: 0 after the run, 1 when the policy threw (its text sent to the engine), 2 for a
// bad command line or an engine that broke off.
#include <iostream>
#include <stdexcept>
#include <string>

#include "artifact/options.h"
#include "artifact/wire.h"
#include "remote_policy.h"

int main(int argc, char** argv) {
  const std::string usage = "usage: policy_host --remote-fds IN,OUT\n";
  int in = -1, out = -1;
  try {
    const artifact::Options options("policy_host", {argv + 1, argv + argc}, 0, {"remote-fds"}, {});
    try {
      artifact::wire::parse_fds(options.str("remote-fds"), &in, &out);
    } catch (const std::invalid_argument& e) {
      throw artifact::InputError(std::string("--remote-fds ") + e.what());
    }
  } catch (const artifact::InputError& e) {
    std::cerr << "policy_host: " << e.what() << "\n" << usage;
    return 2;
  }
  return acesim::remote::serve_policy(in, out);
}
