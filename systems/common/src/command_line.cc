#include "artifact/command_line.h"

#include <cstdio>
#include <fstream>

#include "artifact/atomic_file.h"

namespace artifact {

bool on_off(const std::string& name, const std::string& value) {
  return one_of<bool>(name, value, {{"on", true}, {"off", false}});
}

std::string shortest(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<std::vector<std::string>> grid_rows(const std::string& path, const std::vector<std::string>& base,
                                                const Grid& grid) {
  std::ifstream in(path);
  const std::string file = escaped(path);  // as messages show it
  if (!in) throw InputError("cannot read grid file " + file);
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    return cells;
  };
  std::string line;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    line_no++;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cells = split(line);
    if (header.empty()) {
      for (std::string name : cells) {
        for (char& ch : name)
          if (ch == '_') ch = '-';
        if (grid.forbidden.count(name)) throw InputError(file + ": a grid cannot set --" + name);
        header.push_back(name);
      }
      continue;
    }
    if (cells.size() != header.size())
      throw InputError(file + ":" + std::to_string(line_no) + ": " + std::to_string(cells.size()) + " cells for " +
                       std::to_string(header.size()) + " columns");
    std::vector<std::string> args = base;
    for (size_t i = 0; i < cells.size(); i++) {
      if (cells[i].empty()) continue;
      if (grid.flags.count(header[i])) {
        if (cells[i] == "1" || cells[i] == "true" || cells[i] == "yes" || cells[i] == "on")
          args.push_back("--" + header[i]);
        continue;
      }
      args.push_back("--" + header[i]);
      args.push_back(cells[i]);
    }
    rows.push_back(args);
  }
  if (header.empty()) throw InputError(file + ": empty grid (a header line of option names is needed)");
  return rows;
}

std::string run_grid(const std::string& path, const std::vector<std::string>& args, const Grid& grid,
                     const std::function<std::string(const std::vector<std::string>&)>& run) {
  std::vector<std::string> base;  // the shared options: everything but --grid
  for (size_t i = 0; i < args.size(); i++) {
    if (args[i] == "--grid")
      i++;
    else if (args[i].rfind("--grid=", 0) != 0)
      base.push_back(args[i]);
  }
  std::string text;
  size_t n = 0;
  for (const auto& row : grid_rows(path, base, grid)) {
    n++;
    try {
      text += run(row);
    } catch (const InputError& e) {
      throw InputError(escaped(path) + ": configuration " + std::to_string(n) + ": " + e.what());
    }
  }
  return text;
}

std::vector<std::string> with_args_file(const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "--args-file") return args;
  if (args.size() < 2) throw InputError("--args-file needs a file");
  std::ifstream in(args[1]);
  if (!in) throw InputError("cannot read the arguments file " + escaped(args[1]));
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) all.push_back(line);
  }
  if (in.bad()) throw InputError("cannot read the arguments file " + escaped(args[1]));
  all.insert(all.end(), args.begin() + 2, args.end());
  return all;
}

int write_output(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::cout << text;
    return std::cout.good() ? 0 : 1;
  }
  write_file_atomically(path, text);
  return 0;
}

}  // namespace artifact
