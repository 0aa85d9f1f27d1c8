"""The cost of running a policy in its own process (restore-sim --remote-fds, remote_policy.h): a
lab-sized run (lab 4's largest: 5,000 pages, 50 requests per page, three tiers, a drifting
workload) in-process and remote, each `--repeats` times (median wall time), with the engine and
the policy process on different CPUs and both pinned to one CPU (taskset), and unpinned.

    .venv/bin/python systems/restore/bench/remote.py [--policy tlfu] [--plugin labs/4-migration/solution/policy.cc]

With --plugin, the policy NAME registered by that file (lab 4's: student) is compiled the way the
lab's grader compiles it (g++ -O2 against librestore_plugins_only.a): into a simulator for the
in-process runs, and with src/policy_host.cc into a policy process for the remote ones. Without it,
restore-sim and the policy-host target serve a built-in policy. Every remote row must equal the
in-process one (checked) but for policy_heap_bytes, which the policy process measures in its own
heap (README, "A policy in its own process"); the wall times include each process's start and the workload's
generation. Run nothing else meanwhile.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from restore.engine import BUILD_DIR, RESTORE_DIR, build  # noqa: E402

COMMON_INCLUDE = RESTORE_DIR.parent / "common" / "include"


def compile_plugin(source: Path, main: Path, out: Path) -> Path:
    subprocess.run(["g++", "-std=c++20", "-O2", "-Wall", "-Wextra", f"-I{RESTORE_DIR / 'src'}", f"-I{COMMON_INCLUDE}",
                    str(source), str(main), str(BUILD_DIR / "librestore_plugins_only.a"), "-lpthread", "-o",
                    str(out)], check=True)
    return out


HEAP_COLUMN = 36  # policy_heap_bytes: measured by the allocator of the process that holds the policy


def heap(output: str) -> str:
    return output.splitlines()[1].split(",")[HEAP_COLUMN]


def without_heap(output: str) -> list[list[str]]:
    rows = [line.split(",") for line in output.splitlines()]
    return [row[:HEAP_COLUMN] + row[HEAP_COLUMN + 1:] for row in rows]


def pinned(cpu: str | None, command: list[str]) -> list[str]:
    return ["taskset", "-c", cpu, *command] if cpu is not None else command


def in_process(sim: Path, args: list[str], cpu: str | None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(pinned(cpu, [str(sim), *args]), capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def remote(sim: Path, host: Path, args: list[str], engine_cpu: str | None, host_cpu: str | None) -> tuple[float, str]:
    to_host, from_engine = os.pipe()
    to_engine, from_host = os.pipe()
    start = time.perf_counter()
    h = subprocess.Popen(pinned(host_cpu, [str(host), "--remote-fds", f"{to_host},{from_host}"]),
                         pass_fds=(to_host, from_host))
    e = subprocess.Popen(pinned(engine_cpu, [str(sim), *args, "--remote-fds", f"{to_engine},{from_engine}"]),
                         pass_fds=(to_engine, from_engine), stdout=subprocess.PIPE, text=True)
    for fd in (to_host, from_engine, to_engine, from_host):
        os.close(fd)
    out, _ = e.communicate()
    host_status = h.wait()
    wall = time.perf_counter() - start
    if e.returncode != 0 or host_status != 0:
        raise SystemExit(f"remote run failed: engine {e.returncode}, host {host_status}")
    return wall, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default=None, help="the policy's name (tlfu, or the plug-in's: student)")
    parser.add_argument("--plugin", type=Path, help="a plug-in's policy.cc (lab 4's)")
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--requests-per-page", type=int, default=50)
    parser.add_argument("--workload", default="7hf90@123*10")
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    sim = build()
    host = BUILD_DIR / "policy-host"
    policy = options.policy or ("student" if options.plugin else "tlfu")
    with tempfile.TemporaryDirectory(prefix="restore-remote-") as tmp:
        local_sim = sim
        if options.plugin:
            local_sim = compile_plugin(options.plugin, RESTORE_DIR / "src" / "main.cc", Path(tmp) / "simulator")
            host = compile_plugin(options.plugin, RESTORE_DIR / "src" / "policy_host.cc", Path(tmp) / "host")
        requests = options.pages * options.requests_per_page
        args = ["--policy", policy, "--workload", options.workload, "--pages", str(options.pages), "--requests",
                str(requests), "--capacity-pct", "3:8:100", "--read-pct", "60", "--seed", "17", "--cpu-timing", "off"]
        setups = [
            ("in-process, one CPU", lambda: in_process(local_sim, args, "0")),
            ("in-process, unpinned", lambda: in_process(local_sim, args, None)),
            ("remote, different CPUs (0, 1)", lambda: remote(sim, host, args, "0", "1")),
            ("remote, both on CPU 0", lambda: remote(sim, host, args, "0", "0")),
            ("remote, unpinned", lambda: remote(sim, host, args, None, None)),
        ]
        expected = None
        results, heaps = {}, {}
        for name, once in setups:
            walls = []
            for _ in range(options.repeats):
                wall, out = once()
                expected = expected or out
                if without_heap(out) != without_heap(expected):
                    raise SystemExit(f"{name}: the row differs from the in-process one:\n{out}\n{expected}")
                heaps.setdefault(heap(out), []).append(name)
                walls.append(wall)
            results[name] = walls
        base = statistics.median(results["in-process, one CPU"])
        print(f"policy {policy}, {options.pages} pages, {requests} requests, {options.workload}; "
              f"median of {options.repeats} (s); every row identical but policy_heap_bytes, which was "
              + "; ".join(f"{value} in {', '.join(sorted(set(names)))}" for value, names in heaps.items()))
        print(f"{'setup':32} {'median_s':>9} {'min_s':>7} {'max_s':>7} {'us/request over in-process':>27}")
        for name, walls in results.items():
            median = statistics.median(walls)
            print(f"{name:32} {median:9.3f} {min(walls):7.3f} {max(walls):7.3f} "
                  f"{(median - base) / requests * 1e6:27.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
