#!/usr/bin/env python3
"""Acceptance of emussd on declared devices beyond the presets (issue 18).

For each device (read latency, alpha, k_r, k_w), on this machine:
  1. the time dilation D chosen from the calibration (emussd.capacity), or the refusal;
  2. the characterization the workflow runs (pio's adaptive thread search with the rule of
     configs/experiments/pio.yaml, 4 KiB random psync reads and writes, fio), and alpha_cost,
     k_r, k_w against the declaration, each within 10 % (stricter than the claims
     pio-emussd-alpha-recovered and pio-emussd-k-recovered, configs/claims/);
  3. fio at k, 2k and 4k threads for reads and writes: throughput over k / (service time x D)
     (flat past k: within 10 %), and the mean latency over Little's law (threads / throughput).

Run from the repository root, one device per exclusive hold of the machine lock:

    for d in 200:4:32:4 50:1.2:16:16 2000:3:128:8; do
      flock -x /tmp/machine.lock .venv/bin/python systems/emussd/bench/acceptance.py --device $d
    done
    .venv/bin/python systems/emussd/bench/acceptance.py --table      # the Markdown table of all rows

Each device appends one row to --out (default systems/emussd/bench/measured/acceptance.csv).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

from emussd import capacity
from emussd.harness import DEFAULT_BUILD_DIR, Mount, build
from pio import characterize, fio, sweep
from pio.bench import TIME_COLUMNS
from ssdartifact import config, devices

FILE_SIZE = 1 << 20
COLUMNS = ["read_latency_us", "alpha", "k_r", "k_w", "page_size", "time_dilation", "alpha_cost", "k_r_found",
           "k_w_found",
           "alpha_ok", "k_ok", "read_flat_2k", "read_flat_4k", "write_flat_2k", "write_flat_4k",
           "read_little_4k", "write_little_4k", "read_at_k", "write_at_k", "read_lat_1_us", "write_lat_1_us",
           "seconds", "capacity_iops", "round_trip_us", "busy_cores"]


def busy_jiffies() -> tuple[int, int]:
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4], sum(fields)


def measure_device(binary: Path, spec: dict, fio_point: dict, as_declared: bool = False,
                   progress=sys.stderr) -> dict:
    cal = capacity.calibration(binary, progress=lambda m: print(m, file=progress, flush=True))
    plan = capacity.dilation(spec, cal)
    if as_declared:  # the "before": no dilation (an emussd without --time-dilation is given none)
        plan = dataclasses.replace(plan, factor=1.0, problem="")
    row = {"page_size": 4096, **spec, "time_dilation": plan.factor, "capacity_iops": round(cal.capacity_iops),
           "round_trip_us": round(cal.round_trip_us, 1)}
    print(f"device {spec}: {plan.describe()}", file=progress, flush=True)
    if plan.problem:
        return {**row, "alpha_cost": f"refused: {plan.problem}"}
    rule_settings = config.load("experiments/pio.yaml")["characterization"]["rule"]
    max_threads = 4 * max(spec["k_r"], spec["k_w"])
    rule = characterize.Rule(max_threads=max_threads, **rule_settings)
    started, (busy0, _) = time.monotonic(), busy_jiffies()
    with tempfile.TemporaryDirectory(prefix="emussd-acceptance-") as tmp:
        root = Path(tmp)
        with Mount(binary, root, time_dilation=None if as_declared else plan.factor, **spec) as mount:
            target = fio.Target(directory=mount.mountpoint)
            base = {op: fio.FioPoint(op, "random", 4096, 1, 1, "psync", fio_point["runtime_ms"],
                                     fio_point["ramp_ms"], FILE_SIZE) for op in ("read", "write")}
            sweep.prepare_sparse_files([fio.FioPoint("read", "random", 4096, max_threads, 1, "psync", 1, 0,
                                                     FILE_SIZE)], mount.backing)
            raw = root / "raw"
            rows = {op: sweep.thread_search(base[op], target, raw, "acceptance", rule, progress) for op in base}
            estimate = characterize.estimate("acceptance", "random", 4096, rows["read"], rows["write"], rule)
            estimate = devices.to_declared_time([estimate], plan.factor, *TIME_COLUMNS["alpha_k"])[0]
            for op, k, service_us in (("read", spec["k_r"], spec["read_latency_us"]),
                                      ("write", spec["k_w"], spec["read_latency_us"] * spec["alpha"])):
                peak = k / (service_us * plan.factor) * 1e6
                for n in (k, 2 * k, 4 * k):
                    point = sweep.measure(fio.FioPoint(op, "random", 4096, n, 1, "psync", 2 * fio_point["runtime_ms"],
                                                       fio_point["ramp_ms"], FILE_SIZE),
                                          target, raw, "acceptance", progress, run=9)
                    fraction = point["iops"] / peak
                    little = point["lat_mean_us"] / (n / point["iops"] * 1e6)
                    if n == k:
                        row[f"{op}_at_k"] = round(fraction, 3)
                    else:
                        row[f"{op}_flat_{n // k}k"] = round(fraction, 3)
                        if n == 4 * k:
                            row[f"{op}_little_4k"] = round(little, 3)
    seconds = time.monotonic() - started
    busy1, _ = busy_jiffies()
    alpha_cost, k_r, k_w = estimate["alpha_cost"], estimate["k_r"], estimate["k_w"]
    row.update(alpha_cost=round(alpha_cost, 3), k_r_found=k_r, k_w_found=k_w,
               alpha_ok=abs(alpha_cost - spec["alpha"]) <= 0.1 * spec["alpha"],
               k_ok=abs(k_r - spec["k_r"]) <= 0.1 * spec["k_r"] and abs(k_w - spec["k_w"]) <= 0.1 * spec["k_w"],
               read_lat_1_us=round(estimate["read_lat_1_us"], 1), write_lat_1_us=round(estimate["write_lat_1_us"], 1),
               seconds=round(seconds),
               # the whole machine's busy cores meanwhile (emussd and fio included): near 2 = CPU-bound
               busy_cores=round((busy1 - busy0) / os.sysconf("SC_CLK_TCK") / seconds, 2))
    return row


def parse_device(text: str) -> dict:
    """LATENCY_US:ALPHA:K_R:K_W[:PAGE_SIZE]"""
    latency, alpha, k_r, k_w, *page = text.split(":")
    return {"read_latency_us": float(latency), "alpha": float(alpha), "k_r": int(k_r), "k_w": int(k_w),
            **({"page_size": int(page[0])} if page else {})}


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
    lines = ["| read latency | α | k_r | k_w | D | α found | k_r found | k_w found | reads at k / 2k / 4k "
             "| writes at k / 2k / 4k | latency / Little at 4k (r, w) | 1-thread read latency |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|"]
    for r in rows:
        pages = "" if r["page_size"] == "4096" else f" per {int(r['page_size']) // 1024} KiB page"
        lines.append(f"| {float(r['read_latency_us']):g} µs{pages} | {float(r['alpha']):g} | {r['k_r']} | {r['k_w']} "
                     f"| {float(r['time_dilation']):g} | {r['alpha_cost']} | {r['k_r_found']} | {r['k_w_found']} "
                     f"| {r['read_at_k']} / {r['read_flat_2k']} / {r['read_flat_4k']} "
                     f"| {r['write_at_k']} / {r['write_flat_2k']} / {r['write_flat_4k']} "
                     f"| {r['read_little_4k']}, {r['write_little_4k']} | {r['read_lat_1_us']} µs |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", action="append", default=[],
                        help="LATENCY_US:ALPHA:K_R:K_W[:PAGE_SIZE] (repeatable); fio's requests are 4 KiB")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "measured" / "acceptance.csv")
    parser.add_argument("--runtime-ms", type=int, default=300, help="fio seconds per point (the quick profile's)")
    parser.add_argument("--ramp-ms", type=int, default=100)
    parser.add_argument("--binary", type=Path, help="default: build the checkout's emussd")
    parser.add_argument("--as-declared", action="store_true", help="no time dilation (to show what it fixes)")
    parser.add_argument("--table", action="store_true", help="print --out as a Markdown table")
    args = parser.parse_args()
    if args.table:
        print(table(args.out))
        return
    binary = args.binary or build(DEFAULT_BUILD_DIR)
    for text in args.device:
        row = measure_device(binary, parse_device(text), {"runtime_ms": args.runtime_ms, "ramp_ms": args.ramp_ms},
                             args.as_declared)
        print(row, flush=True)
        append(args.out, row)


if __name__ == "__main__":
    main()
