// ace-sim-history: accesses fed to the simulator's own history-based prefetcher (prefetch.cc, as
// the patched PostgreSQL's), and its table afterwards, for thesis Figure 4.7 (README.md,
// "Scenes"). The accesses are the misses one process sees in one relation, in order; each teaches
// the row of the previous one.
//
//   ace-sim-history ACCESSES [--out FILE]
//
// Lines (# starts a comment):
//   access PAGE...            these pages, in order
//   repeat N PAGE...          the same, N times over
//   predict PAGE MAX          after all accesses: what the prefetcher would fetch after PAGE
//
// Output CSV (kind,page,slot,next,weight): a `slot` row per slot of each table row (page: the
// row's index; next, weight: NextPages and Weights), then `predicted` rows (page: the one asked
// about; slot: rank; next: the page to prefetch; weight: -1).
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "artifact/command_line.h"
#include "prefetch.h"
#include "simulator.h"  // PolicyError, for the tools' common exit statuses

namespace acesim {
namespace {

using artifact::InputError;

struct Accesses {
  std::vector<uint32_t> pages;
  std::vector<std::pair<uint32_t, int>> predictions;  // (page, max)
};

uint32_t block(const std::string& text, const std::string& where) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9)
    throw InputError(where + ": a page is a number below 10^9, not '" + text + "'");
  return static_cast<uint32_t>(std::stoul(text));
}

Accesses read_accesses(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the accesses " + path);
  Accesses a;
  std::string line;
  for (int number = 1; std::getline(in, line); number++) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string key, word;
    if (!(words >> key)) continue;
    const std::string where = path + ":" + std::to_string(number);
    int times = 1;
    if (key == "repeat") {
      if (!(words >> word)) throw InputError(where + ": 'repeat' needs a count and pages");
      times = artifact::in_range("repeat", artifact::parse_number<int>("repeat", word), 1, 100000);
    } else if (key == "predict") {
      std::string max;
      if (!(words >> word >> max)) throw InputError(where + ": 'predict' needs a page and a count");
      a.predictions.emplace_back(block(word, where),
                                 artifact::in_range("predict", artifact::parse_number<int>("predict", max), 1, 64));
      continue;
    } else if (key != "access") {
      throw InputError(where + ": unknown key '" + key + "' (access, repeat, predict)");
    }
    std::vector<uint32_t> pages;
    while (words >> word) pages.push_back(block(word, where));
    if (pages.empty()) throw InputError(where + ": '" + key + "' needs pages");
    for (int t = 0; t < times; t++) a.pages.insert(a.pages.end(), pages.begin(), pages.end());
  }
  if (a.pages.empty()) throw InputError(path + ": no accesses");
  return a;
}

std::string run(const Accesses& a) {
  Predictor predictor;
  for (uint32_t page : a.pages) predictor.history_observe(make_page(0, page));
  std::ostringstream out;
  out << "kind,page,slot,next,weight\n";
  for (const auto& [page, row] : predictor.history_table())
    for (int i = 0; i < kHistoryFanout; i++)
      out << "slot," << page << ',' << i << ',' << row.next[i] << ',' << row.weight[i] << '\n';
  for (const auto& [page, max] : a.predictions) {
    int rank = 0;
    for (uint32_t next : predictor.history_predict(make_page(0, page), max))
      out << "predicted," << page << ',' << rank++ << ',' << next << ",-1\n";
  }
  return out.str();
}

}  // namespace
}  // namespace acesim

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return artifact::guarded_main<acesim::PolicyError>("ace-sim-history", [&] {
    if (args.size() != 1 && !(args.size() == 3 && args[1] == "--out"))
      throw artifact::InputError("usage: ace-sim-history ACCESSES [--out FILE]");
    return artifact::write_output(args.size() == 3 ? args[2] : "", acesim::run(acesim::read_accesses(args[0])));
  });
}
