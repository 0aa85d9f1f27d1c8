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

#include "artifact/wire.h"
#include "remote_policy.h"

int main(int argc, char** argv) {
  const std::string usage = "usage: policy_host --remote-fds IN,OUT\n";
  std::string fds;
  if (argc == 3 && std::string(argv[1]) == "--remote-fds")
    fds = argv[2];
  else if (argc == 2 && std::string(argv[1]).rfind("--remote-fds=", 0) == 0)
    fds = std::string(argv[1]).substr(13);
  else {
    std::cerr << usage;
    return 2;
  }
  int in = -1, out = -1;
  try {
    artifact::wire::parse_fds(fds, &in, &out);
  } catch (const std::invalid_argument& e) {
    std::cerr << "policy_host: --remote-fds " << e.what() << "\n" << usage;
    return 2;
  }
  return acesim::remote::serve_policy(in, out);
}
