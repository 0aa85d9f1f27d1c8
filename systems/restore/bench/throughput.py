"""Simulator throughput (requests simulated per second on one core) and the policies' CPU
overhead per access (Table 6.6), per policy.

    .venv/bin/python systems/restore/bench/throughput.py [--large-requests N] [--full] [--out FILE.csv]

Sizes: the quick size (1e4 pages, 1e6 requests, 5hf90, 3 %/8 %), and Figure 6.12's largest
point (1e7 pages) with --large-requests requests (1e7 by default; --full runs the thesis's 1e8).
Throughput runs use --cpu-timing off (no clock reads in the loop); overhead runs use it on.
Each run is one process on one core (the machine is shared: run nothing else meanwhile).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from restore.engine import build, run  # noqa: E402

POLICIES = ["static", "tlfu", "tlru", "lrfu", "exd", "temp", "restore"]
COLUMNS = ["size", "policy", "pages", "requests", "wall_s", "requests_per_s", "overhead_us_per_access",
           "policy_memory_bytes"]


def measure(binary, pages, requests, policy):
    start = time.perf_counter()
    row = run(binary, policy=policy, workload="5hf90", pages=pages, requests=requests, capacity_pct=[3, 8, 100],
              cpu_timing=False)[0]
    wall = time.perf_counter() - start
    timed = run(binary, policy=policy, workload="5hf90", pages=pages, requests=min(requests, 1_000_000),
                capacity_pct=[3, 8, 100])[0]
    return {"pages": pages, "requests": requests, "wall_s": round(wall, 3),
            "requests_per_s": round(requests / wall), "overhead_us_per_access": timed["overhead_us_per_access"],
            "policy_memory_bytes": row["policy_memory_bytes"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--large-requests", type=int, default=10_000_000)
    ap.add_argument("--full", action="store_true", help="run Figure 6.12's largest point with 1e8 requests")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    binary = build()
    sizes = [("quick", 10_000, 1_000_000)]
    if not args.skip_large:
        sizes.append(("largest", 10_000_000, 100_000_000 if args.full else args.large_requests))
    rows = []
    for name, pages, requests in sizes:
        for policy in POLICIES:
            r = {"size": name, "policy": policy, **measure(binary, pages, requests, policy)}
            rows.append(r)
            print(",".join(str(r[c]) for c in COLUMNS) if rows[1:] else ",".join(COLUMNS) + "\n" +
                  ",".join(str(r[c]) for c in COLUMNS), flush=True)
            if name == "largest" and not args.full:
                est = 100_000_000 / r["requests_per_s"]
                print(f"  -> 1e8 requests at this rate: about {est:.0f} s", flush=True)
    if args.out:
        with open(args.out, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
