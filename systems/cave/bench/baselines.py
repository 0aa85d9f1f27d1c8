"""CAVE against GraphChi and GridGraph (thesis Figures 5.1B and 5.11): BFS and WCC on the social-like
graph on an emulated SSD (default: the PCIe-like one of Table 2.2), each with the same memory budget.

    .venv/bin/python systems/cave/bench/baselines.py --dir /var/tmp/cave-baselines --repetitions 3

Every system reads the graph through the same emulated SSD, mounted under --dir: CAVE its block file
with O_DIRECT and a cache of 3 % of it, with k_r I/O threads; GraphChi and GridGraph their own
formats of the same edges (made in the device's backing folder, so that preprocessing is not timed),
with k_r threads and a memory budget of the same 3 % (GraphChi's membudget_mb, at least 1 MB;
GridGraph's budget), inside a memory cgroup of that budget plus --allowance-mb, which the kernel
enforces on the process's own memory and its page cache. Every answer is checked against the
in-memory reference before its time counts. At each repetition the systems run one after the
other, each first in turn; the summary gives the median wall time per system and CAVE's speedup.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from cave import engine, experiment, reference
from cave.baselines import case
from ssdartifact import devices

COLUMNS = ["device", "graph", "vertices", "edges", "algorithm", "system", "repetition", "threads", "budget_bytes",
           "memory_limit", "peak_bytes", "seconds", "reported_s", "preprocess_s", "disk_bytes"]
SYSTEMS = ("cave", *case.DRIVERS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, type=Path, help="a directory to mount the emulated SSD under")
    ap.add_argument("--device", default="pcie-like", help="an emussd preset or emulated device (default pcie-like)")
    ap.add_argument("--scale", type=int, default=16, help="R-MAT scale (default 16: the quick profile's social graph)")
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--algorithms", default="bfs,wcc")
    ap.add_argument("--cache-fraction", type=float, default=0.03)
    ap.add_argument("--allowance-mb", type=int, default=32,
                    help="memory beyond the budget for a baseline's code, vertex arrays and buffers (default 32)")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds a baseline's run may take")
    ap.add_argument("--out", type=Path, help="CSV output (default DIR/baselines.csv)")
    args = ap.parse_args(argv)
    algorithms = args.algorithms.split(",")
    if not set(algorithms) <= set(case.ALGORITHMS):
        ap.error(f"--algorithms takes {', '.join(case.ALGORITHMS)}")

    from emussd.harness import Mount, build  # noqa: PLC0415

    model = devices.model(args.device)
    binary = engine.build()
    spec = {"name": "social-bench", "generator": "rmat", "seed": 1, "scale": args.scale,
            "edge_factor": args.edge_factor}
    graph, _ = experiment.prepare_graph(binary, spec, engine.BUILD_DIR / "bench-graphs")
    a = reference.load_cave(graph)
    budget = max(1, int(args.cache_fraction * graph.stat().st_size))
    threads = model["k_r"]
    rows = []
    args.dir.mkdir(parents=True, exist_ok=True)
    with Mount(build(), args.dir, **{k: model[k] for k in ("read_latency_us", "alpha", "k_r", "k_w")}) as mount:
        on_device = experiment.place_on_device(graph, mount.mountpoint)
        for rep in range(args.repetitions):
            for algorithm in algorithms:
                order = SYSTEMS[rep % len(SYSTEMS):] + SYSTEMS[:rep % len(SYSTEMS)]  # each first in turn
                for system in order:
                    row = {"device": args.device, "graph": spec["name"], "vertices": a.shape[0], "edges": a.nnz,
                           "algorithm": algorithm, "system": system, "repetition": rep, "threads": threads,
                           "budget_bytes": budget}
                    if system == "cave":
                        start = time.perf_counter()
                        source = {"source": 0} if algorithm == "bfs" else {}
                        ran = engine.run(binary, graph=on_device, algorithm=algorithm, variant="blocked",
                                         io_threads=threads, cache_fraction=args.cache_fraction, **source)
                        row.update(seconds=time.perf_counter() - start, reported_s=ran["runtime_s"],
                                   memory_limit="CAVE's cache (O_DIRECT)", disk_bytes=graph.stat().st_size)
                        expected = reference.run_reference(graph, algorithm)
                        key = "reached" if algorithm == "bfs" else "components"
                        if ran[key] != expected[key]:
                            raise SystemExit(f"CAVE's {algorithm}: {key} {ran[key]}, the reference's {expected[key]}")
                    else:
                        row.update(case.run(system, graph, mount.mountpoint / system, algorithm=algorithm, root=0,
                                            budget_bytes=budget, threads=threads, timeout_s=args.timeout,
                                            memory_limit=budget + (args.allowance_mb << 20),
                                            prepare_in=mount.backing / system))
                    rows.append({column: row.get(column) for column in COLUMNS})
                    print(f"rep {rep} {algorithm:>4} {system:>9}: {row['seconds']:8.2f} s", flush=True)
    out = args.out or args.dir / "baselines.csv"
    experiment.write_csv(rows, COLUMNS, out)
    print(f"median over {args.repetitions} repetition(s), {args.device}, {a.shape[0]} vertices, {a.nnz} edges, "
          f"budget {budget / (1 << 10):.0f} KiB, {threads} threads:")
    for algorithm in algorithms:
        medians = {s: statistics.median(r["seconds"] for r in rows if r["system"] == s and r["algorithm"] == algorithm)
                   for s in SYSTEMS}
        shown = ", ".join(f"{s} {medians[s]:.2f} s" + ("" if s == "cave" else f" ({medians[s] / medians['cave']:.1f}x)")
                          for s in SYSTEMS)
        print(f"  {algorithm}: {shown}")
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
