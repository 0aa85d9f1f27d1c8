// ace-sim-scene: one of the thesis's toy examples stepped through the simulator's own pool and
// policies, for the figures that show a policy at work (thesis Figures 4.4 and 4.6; README.md,
// "Scenes"). A scene file sets a policy and a small pool, lists the pool's pages from the end the
// policy evicts first, and gives requests; the output is the pool's state before and after each
// request, the pages written and the page evicted, one CSV row each.
//
//   ace-sim-scene SCENE [--out FILE]
//
// Scene lines (# starts a comment):
//   policy lru|cflru|lru_wsr|clock   ace on|off   n_w N   cflru_window F
//   page ID clean|dirty [cold] [usage=N]    the pool, from the evict-first end (LRU's tail, the
//                                           clock's frame 0); cold: LRU-WSR's flag; usage: Clock's
//   hand POSITION                           Clock's hand (a position in the page list, 0 first)
//   request ID read|write
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "artifact/command_line.h"
#include "policy.h"
#include "simulator.h"

namespace acesim {
namespace {

using artifact::InputError;

struct ScenePage {
  uint64_t id;
  bool dirty, cold;
  int usage;  // -1: as the policy sets it
};

struct Scene {
  Config config;
  std::vector<ScenePage> pages;
  int hand = 0;
  std::vector<std::pair<uint64_t, bool>> requests;  // (page, write)
};

uint64_t page_id(const std::string& text, const std::string& where) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw InputError(where + ": a page is a number, not '" + text + "'");
  return std::stoull(text);
}

Scene read_scene(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the scene " + path);
  Scene s;
  s.config.n_e = 1;
  std::string line;
  for (int number = 1; std::getline(in, line); number++) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string key, value;
    if (!(words >> key)) continue;
    const std::string where = path + ":" + std::to_string(number);
    if (!(words >> value)) throw InputError(where + ": '" + key + "' needs a value");
    if (key == "policy") {
      if (!known_policy(value)) throw InputError(where + ": unknown policy '" + value + "'");
      s.config.policy = value;
    } else if (key == "ace") {
      s.config.ace = artifact::on_off(key, value);
    } else if (key == "n_w") {
      s.config.n_w = artifact::in_range(key, artifact::parse_number<int>(key, value), 1, 1024);
    } else if (key == "cflru_window") {
      s.config.cflru_window = artifact::in_range(key, artifact::parse_number<double>(key, value), 0.0, 1.0);
    } else if (key == "hand") {
      s.hand = artifact::parse_number<int>(key, value);
    } else if (key == "page") {
      ScenePage p{page_id(value, where), false, false, -1};
      std::string state, flag;
      if (!(words >> state) || (state != "clean" && state != "dirty"))
        throw InputError(where + ": page " + value + " needs 'clean' or 'dirty'");
      p.dirty = state == "dirty";
      while (words >> flag) {
        if (flag == "cold")
          p.cold = true;
        else if (flag.rfind("usage=", 0) == 0)
          p.usage = artifact::in_range("usage", artifact::parse_number<int>("usage", flag.substr(6)), 0,
                                       ClockPolicy::kMaxUsage);
        else
          throw InputError(where + ": unknown page flag '" + flag + "' (cold, usage=N)");
      }
      s.pages.push_back(p);
    } else if (key == "request") {
      std::string op;
      if (!(words >> op) || (op != "read" && op != "write"))
        throw InputError(where + ": request " + value + " needs 'read' or 'write'");
      s.requests.emplace_back(page_id(value, where), op == "write");
    } else {
      throw InputError(where + ": unknown key '" + key + "'");
    }
  }
  if (s.pages.empty() || s.requests.empty()) throw InputError(path + ": a scene needs pages and requests");
  if (s.hand < 0 || s.hand >= static_cast<int>(s.pages.size()))
    throw InputError(path + ": the hand must be a position in the page list");
  std::set<uint64_t> seen;
  for (const auto& p : s.pages)
    if (!seen.insert(p.id).second) throw InputError(path + ": page " + std::to_string(p.id) + " is listed twice");
  s.config.pool_pages = static_cast<int>(s.pages.size());
  return s;
}

// The frames from the end the policy evicts first: LRU's tail to its head, or the clock's frames.
std::vector<Frame> evict_order(Simulator& sim) {
  if (auto* list = dynamic_cast<ListPolicy*>(&sim.policy())) return list->order_from_tail();
  std::vector<Frame> frames(sim.frames().size());
  for (size_t f = 0; f < frames.size(); f++) frames[f] = static_cast<Frame>(f);
  return frames;
}

void dump(Simulator& sim, int step, std::ostringstream& out) {
  auto* list = dynamic_cast<ListPolicy*>(&sim.policy());
  auto* clock = dynamic_cast<ClockPolicy*>(&sim.policy());
  int position = 0;
  for (Frame f : evict_order(sim)) {
    const FrameState& frame = sim.frames()[f];
    if (!frame.valid) continue;
    out << step << ",frame," << position++ << ',' << frame.page << ',' << (frame.dirty ? 1 : 0) << ','
        << (list && list->cold(f) ? 1 : 0) << ',' << (clock ? clock->usage(f) : -1) << ','
        << (clock && clock->hand() == f ? 1 : 0) << '\n';
  }
}

std::string run(const Scene& s) {
  Simulator sim(s.config);
  // The pages arrive in the listed order (the first ends where the policy evicts first), then
  // the scene's flags replace what the arrivals set.
  for (const auto& p : s.pages) sim.access(p.id, p.dirty);
  for (const auto& p : s.pages) {
    Frame f = sim.frame_of(p.id);
    if (auto* list = dynamic_cast<ListPolicy*>(&sim.policy())) list->set_cold(f, p.cold);
    if (auto* clock = dynamic_cast<ClockPolicy*>(&sim.policy()); clock && p.usage >= 0) clock->set_usage(f, p.usage);
  }
  if (auto* clock = dynamic_cast<ClockPolicy*>(&sim.policy())) clock->set_hand(sim.frame_of(s.pages[s.hand].id));

  std::ostringstream out;
  out << "step,kind,position,page,dirty,cold,usage,hand\n";
  dump(sim, 0, out);
  int step = 0;
  for (const auto& [page, write] : s.requests) {
    step++;
    std::set<uint64_t> before;
    for (const auto& f : sim.frames())
      if (f.valid) before.insert(f.page);
    const uint64_t written = sim.counters().pages_written;
    sim.access(page, write);
    out << step << ",request,0," << page << ',' << (write ? 1 : 0) << ",0,-1,0\n";
    if (sim.counters().pages_written != written) {
      int position = 0;
      for (uint64_t w : sim.last_batch()) out << step << ",written," << position++ << ',' << w << ",1,0,-1,0\n";
    }
    for (uint64_t p : before)
      if (!sim.resident(p)) out << step << ",evicted,0," << p << ",0,0,-1,0\n";
    dump(sim, step, out);
  }
  return out.str();
}

}  // namespace
}  // namespace acesim

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return artifact::guarded_main<acesim::PolicyError>("ace-sim-scene", [&] {
    if (args.size() != 1 && !(args.size() == 3 && args[1] == "--out"))
      throw artifact::InputError("usage: ace-sim-scene SCENE [--out FILE]");
    return artifact::write_output(args.size() == 3 ? args[2] : "", acesim::run(acesim::read_scene(args[0])));
  });
}
