#!/usr/bin/env python3
"""The library device against emussd's FUSE mount: the same device, measured the same way.

For each device (read latency, alpha, k_r, k_w), with the time dilation D emussd's calibration
gives it on this machine, both the mount and the library device (fio's engine, CAVE's --emulate):
  1. the characterization the workflow runs (pio's thread search, 4 KiB random psync reads and
     writes with fio, and the rule of configs/experiments/pio.yaml: k = the fewest threads reaching
     95 % of the peak bandwidth, alpha_cost by Little's law at the knees), on the mount with fio's
     psync and on a plain directory with --ioengine=external:libfio_emussd.so;
  2. CAVE's BFS on lab 3's speedup graph (Barabasi-Albert, 3000 vertices, m 8, 8 cache blocks)
     with 1 and k_r workers, `--repeats` times interleaved, on the mount and with --emulate: the
     medians' speedups.
The library device passes when its alpha, k_r, k_w and speedup are each within 10 % of the mount's.

Run from the repository root, alone on the machine:

    .venv/bin/python systems/emussd/bench/library.py --device 2000:1.5:4:4 --device 2000:3:8:16
    .venv/bin/python systems/emussd/bench/library.py --table      # the Markdown table of --out

Each device appends one row to --out (default systems/emussd/bench/measured/library.csv).
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cave import engine as cave
from cave.experiment import place_on_device
from emussd import capacity, library
from emussd.harness import DEFAULT_BUILD_DIR, Mount, build
from pio import characterize, fio, sweep
from ssdartifact import config

FILE_SIZE = 1 << 20
SCRATCH = Path(__file__).resolve().parents[3] / "scratch"  # ext4 here: O_DIRECT for the plain directory
GRAPH = {"vertices": 3000, "m": 8, "cache_blocks": 8}  # lab 3's speedup graph (labs/3-graph-traversal/lab.yaml)
WHERE = ("emussd", "library")
COLUMNS = ["read_latency_us", "alpha", "k_r", "k_w", "time_dilation",
           *(f"{what}_{where}" for what in ("alpha_cost", "k_r", "k_w", "bfs_1_s", "bfs_k_s", "speedup")
             for where in WHERE),
           "alpha_diff", "k_r_diff", "k_w_diff", "speedup_diff", "within_10pct", "seconds"]


def characterize_on(target: fio.Target, engine: str, raw: Path, spec: dict, rule, progress) -> dict:
    """alpha_cost, k_r and k_w by pio's thread search and rule, fio's jobs using `engine`."""
    base = {op: fio.FioPoint(op, "random", 4096, 1, 1, engine, 300, 100, FILE_SIZE) for op in ("read", "write")}
    rows = {op: sweep.thread_search(base[op], target, raw, "library-bench", rule, progress) for op in base}
    return characterize.estimate("library-bench", "random", 4096, rows["read"], rows["write"], rule)


def bfs_seconds(binary: Path, graph: Path, threads: int, emulate: str | None) -> float:
    row = cave.run(binary, graph=graph, algorithm="bfs", source=0, io_threads=threads,
                   cache_blocks=GRAPH["cache_blocks"], emulate=emulate)
    return row["runtime_s"]


def measure_device(binary: Path, engine_so: Path, cave_binary: Path, spec: dict, repeats: int, progress) -> dict:
    cal = capacity.calibration(binary, progress=lambda m: print(m, file=progress, flush=True))
    plan = capacity.dilation(spec, cal)
    print(f"device {spec}: {plan.describe()}", file=progress, flush=True)
    if plan.problem:
        raise SystemExit(f"cannot emulate {spec}: {plan.problem}")
    model = library.spec(**spec, time_dilation=plan.factor)
    rule = characterize.Rule(max_threads=4 * max(spec["k_r"], spec["k_w"]),
                             **config.load("experiments/pio.yaml")["characterization"]["rule"])
    row = {**spec, "time_dilation": plan.factor}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="library-bench-", dir=SCRATCH) as tmp:
        root = Path(tmp)
        plain = root / "plain"
        plain.mkdir()
        text, graph = root / "graph.txt", root / "graph.cave"
        cave.generate(cave_binary, text, model="ba", vertices=GRAPH["vertices"], m=GRAPH["m"], seed=7)
        cave.convert(cave_binary, text, graph, undirected=True)
        on_plain = place_on_device(graph, plain / "cave")
        with Mount(binary, root / "fuse", time_dilation=plan.factor, **spec) as mount:
            on_mount = place_on_device(graph, mount.mountpoint / "cave")
            files = [fio.FioPoint("read", "random", 4096, rule.max_threads, 1, "psync", 1, 0, FILE_SIZE)]
            sweep.prepare_sparse_files(files, mount.backing)
            sweep.prepare_sparse_files(files, plain)
            os.environ["EMUSSD_MODEL"] = model  # fio's engine reads the device from its environment
            estimates = {
                "emussd": characterize_on(fio.Target(directory=mount.mountpoint), "psync", root / "raw-fuse", spec,
                                          rule, progress),
                "library": characterize_on(fio.Target(directory=plain), f"external:{engine_so}", root / "raw-lib",
                                           spec, rule, progress)}
            seconds = {(where, n): [] for where in WHERE for n in (1, spec["k_r"])}
            for _ in range(repeats):  # interleaved, so that both see the machine as it is
                for where, n in seconds:
                    target, emulate = (on_mount, None) if where == "emussd" else (on_plain, model)
                    seconds[where, n].append(bfs_seconds(cave_binary, target, n, emulate))
                    print(f"BFS {where} {n} workers: {seconds[where, n][-1]:.2f} s", file=progress, flush=True)
    for where in WHERE:
        est = estimates[where]
        one, k = (statistics.median(seconds[where, n]) for n in (1, spec["k_r"]))
        row.update({f"alpha_cost_{where}": round(est["alpha_cost"], 3), f"k_r_{where}": est["k_r"],
                    f"k_w_{where}": est["k_w"], f"bfs_1_s_{where}": round(one, 3), f"bfs_k_s_{where}": round(k, 3),
                    f"speedup_{where}": round(one / k, 3)})
    diffs = {what: row[f"{what}_library"] / row[f"{what}_emussd"] - 1 for what in ("alpha_cost", "k_r", "k_w",
                                                                                     "speedup")}
    row.update({"alpha_diff": round(diffs["alpha_cost"], 3), "k_r_diff": round(diffs["k_r"], 3),
                "k_w_diff": round(diffs["k_w"], 3), "speedup_diff": round(diffs["speedup"], 3),
                "within_10pct": all(abs(d) <= 0.1 for d in diffs.values()),
                "seconds": round(time.monotonic() - started)})
    return row


def parse_device(text: str) -> dict:
    """LATENCY_US:ALPHA:K_R:K_W"""
    latency, alpha, k_r, k_w = text.split(":")
    return {"read_latency_us": float(latency), "alpha": float(alpha), "k_r": int(k_r), "k_w": int(k_w)}


def append(path: Path, row: dict) -> None:
    new = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow(row)


def table(path: Path) -> str:
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    lines = ["| device (µs, α, k_r, k_w) | D | α: emussd / library | k_r: emussd / library | k_w: emussd / library "
             "| BFS speedup at k_r: emussd / library | largest difference |",
             "|---|---:|---|---|---|---|---:|"]
    for r in rows:
        largest = max(abs(float(r[f"{what}_diff"])) for what in ("alpha", "k_r", "k_w", "speedup"))
        lines.append(f"| {float(r['read_latency_us']):g}, {float(r['alpha']):g}, {r['k_r']}, {r['k_w']} "
                     f"| {float(r['time_dilation']):g} | {r['alpha_cost_emussd']} / {r['alpha_cost_library']} "
                     f"| {r['k_r_emussd']} / {r['k_r_library']} | {r['k_w_emussd']} / {r['k_w_library']} "
                     f"| {r['speedup_emussd']} / {r['speedup_library']} | {largest:.1%} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", action="append", default=[], help="LATENCY_US:ALPHA:K_R:K_W (repeatable)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "measured" / "library.csv")
    parser.add_argument("--repeats", type=int, default=3, help="BFS runs per (device, workers), interleaved")
    parser.add_argument("--table", action="store_true", help="print --out as a Markdown table")
    args = parser.parse_args()
    if args.table:
        print(table(args.out))
        return
    binary, engine_so, cave_binary = build(DEFAULT_BUILD_DIR), library.fio_engine(), cave.build()
    for text in args.device:
        row = measure_device(binary, engine_so, cave_binary, parse_device(text), args.repeats, sys.stderr)
        print(row, flush=True)
        append(args.out, row)


if __name__ == "__main__":
    main()
