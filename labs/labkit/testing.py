"""Helpers of the labs' own tests (labs/*/tests): a grading's scores by test name, and a deliberately
bad submission made from the reference solution by one change."""

from __future__ import annotations

from pathlib import Path


def scores(grader, result: dict) -> dict[str, tuple[float, str]]:
    """{test name in lab.yaml: (score, output)} of a results.json."""
    names = list(grader.load_config()["tests"])
    return {name: (test["score"], test["output"]) for name, test in zip(names, result["tests"], strict=True)}


def solution_with(lab_dir: Path, file: str, folder: Path, old: str, new: str) -> Path:
    """`folder` holding the lab's reference `file` with `old` replaced by `new` (which must be there)."""
    solution = (Path(lab_dir) / "solution" / file).read_text()
    assert old in solution, f"{old!r} is not in the solution"
    folder.mkdir()
    (folder / file).write_text(solution.replace(old, new, 1))
    return folder


def forger_prelude(targets: list[Path], record: str) -> str:
    """C++ for the top of a native submission (labs 2-4) that, when the program starts and again as it
    ends (atexit), tries every way a student who read the grader might change what it is judged by
    or reach outside its sandbox, and goes on quietly when refused: write the engine's output
    (its path read from the other processes' command lines) and `targets` (another student's
    results.json, the grader's files), open another process's files and memory through /proc,
    signal the grader and every process, open Docker's socket, a TCP connection and an abstract
    socket, and start threads without end. Each probe of another process uses signal 0 (the right
    to signal, without its effect). If anything succeeds it prints what, after `record`, and
    aborts, so that the grade changes; when the sandbox holds, the submission scores exactly what
    its work earns."""
    paths = ", ".join(f'"{path}"' for path in targets)
    return f"""#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
namespace {{
std::vector<std::string> managed;
void forge() {{
  std::vector<std::string> files = {{{paths}}};
  if (DIR* proc = opendir("/proc")) {{
    while (dirent* entry = readdir(proc)) {{
      std::string pid = entry->d_name;
      if (pid.find_first_not_of("0123456789") != std::string::npos || std::atoi(pid.c_str()) == getpid()) continue;
      std::ifstream cmdline("/proc/" + pid + "/cmdline");
      std::string argument, previous;
      while (std::getline(cmdline, argument, '\\0')) {{
        if (previous == "--out" || previous == "--io-log" || previous == "--values-out") files.push_back(argument);
        previous = argument;
      }}
      if (DIR* fds = opendir(("/proc/" + pid + "/fd").c_str())) {{
        while (dirent* fd = readdir(fds)) files.push_back("/proc/" + pid + "/fd/" + fd->d_name);
        closedir(fds);
      }}
      files.push_back("/proc/" + pid + "/mem");
      if (kill(std::atoi(pid.c_str()), 0) == 0)
        managed.push_back("may signal " + pid);
    }}
    closedir(proc);
  }}
  for (const std::string& file : files) {{
    int fd = open(file.c_str(), O_WRONLY | O_APPEND);
    if (fd >= 0 && write(fd, "forged,1\\n", 9) == 9) managed.push_back("wrote " + file);
  }}
  if (kill(getppid(), 0) == 0 || kill(-1, 0) == 0) managed.push_back("may signal the grader");
  sockaddr_un unix_address{{}};
  unix_address.sun_family = AF_UNIX;
  std::strcpy(unix_address.sun_path, "/run/docker.sock");
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  if (s >= 0 && connect(s, reinterpret_cast<sockaddr*>(&unix_address), sizeof unix_address) == 0)
    managed.push_back("docker");
  sockaddr_in tcp{{}};
  tcp.sin_family = AF_INET;
  tcp.sin_port = htons(22);
  tcp.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (socket(AF_INET, SOCK_STREAM, 0) >= 0) managed.push_back("a TCP socket");
  int threads = 0;
  try {{
    for (; threads < 500; threads++) std::thread([] {{ pause(); }}).detach();
  }} catch (...) {{
  }}
  if (threads >= 500) managed.push_back("500 threads");
}}
void tell() {{
  forge();
  if (managed.empty()) return;
  std::printf("{record}");
  for (const std::string& what : managed) std::printf(" %s;", what.c_str());
  std::printf("\\n");
  std::fflush(stdout);
  std::abort();
}}
struct Forger {{
  Forger() {{
    tell();
    std::atexit(tell);
  }}
}} forger;
}}  // namespace
"""
