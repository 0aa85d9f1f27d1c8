"""CAVE's read bandwidth during BFS as a fraction of fio's, at the same concurrency (thesis
Fig 5.9B and [T:1577]: "we divide the observed bandwidth by the maximum device bandwidth
achieved when using the same number of concurrent threads to issue I/Os"), and BFS time vs
the in-memory reference (scipy).

    .venv/bin/python systems/cave/bench/bandwidth.py --dir /var/tmp/cave-bench --io-threads 1,8
    .venv/bin/python systems/cave/bench/bandwidth.py --dir /var/tmp/cave-emu --io-threads 1,4,8,16 \\
        --emussd-latency-us 2000 --emussd-k-r 8          # on an emulated SSD mounted under --dir

fio: 4 KiB random reads, O_DIRECT, iodepth 1, `--numjobs N` psync jobs on one file of the
graph's size in the same directory. CAVE: `cave run --algorithm bfs` with N I/O threads;
its bandwidth is bytes_read / runtime_s (the whole run, level barriers included).

`--binary LABEL=PATH` (repeatable) compares builds of cave side by side, e.g. before and
after a change: at each repetition and concurrency every binary runs once, one after the
other (each first in turn), beside one fio run; the summary gives the median over the
repetitions per binary.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from contextlib import ExitStack
from pathlib import Path

from cave import engine, experiment, reference

COLUMNS = [
    "device", "dataset", "binary", "variant", "io_threads", "cache_fraction", "repetition", "cave_runtime_s",
    "cave_block_reads", "cave_mib_s", "fio_mib_s", "bandwidth_ratio_pct", "cave_cpu_util_pct", "fio_cpu_util_pct",
    "lock_wait_pct", "reference_runtime_s", "reference_over_cave",
]  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, type=Path, help="directory on the device under test")
    ap.add_argument("--io-threads", default="1,8", help="comma-separated concurrency levels (default 1,8)")
    ap.add_argument("--variant", default="blocked", choices=["blocked", "nonblocked"])
    ap.add_argument("--cache-fraction", type=float, default=0.03)
    ap.add_argument("--model", default="rmat", choices=["rmat", "ba", "road"])
    ap.add_argument("--scale", type=int, default=18, help="rmat: 2^scale vertices (default 18)")
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--vertices", type=int, default=200000, help="ba")
    ap.add_argument("--m", type=int, default=10, help="ba")
    ap.add_argument("--rows", type=int, default=500, help="road")
    ap.add_argument("--cols", type=int, default=500, help="road")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repetitions", type=int, default=1)
    ap.add_argument("--fio-runtime", type=float, default=5.0)
    ap.add_argument("--graph-dir", type=Path, default=engine.BUILD_DIR / "bench-graphs")
    ap.add_argument("--emussd-latency-us", type=float, help="mount an emulated SSD under --dir and run there")
    ap.add_argument("--emussd-k-r", type=int, default=8)
    ap.add_argument("--device", help="label for the rows (default: the directory, or emussd(...))")
    ap.add_argument("--out", type=Path, help="CSV output (default DIR/cave-bandwidth.csv)")
    ap.add_argument("--binary", action="append", metavar="LABEL=PATH",
                    help="a cave binary to measure (repeatable; default: this tree's, built, labelled 'built')")
    args = ap.parse_args(argv)
    try:
        threads = [int(x) for x in args.io_threads.split(",")]
    except ValueError:
        ap.error(f"--io-threads needs comma-separated integers, got {args.io_threads!r}")
    if shutil.which("fio") is None:
        ap.error("fio not found: apt-get install fio")
    binaries = {}
    for item in args.binary or []:
        label, sep, path = item.partition("=")
        if not sep or not label or not Path(path).is_file():
            ap.error(f"--binary needs LABEL=PATH of an existing file, got {item!r}")
        binaries[label] = Path(path)

    binary = engine.build()
    binaries = binaries or {"built": binary}
    spec = {"name": f"{args.model}-bench", "generator": args.model, "seed": args.seed}
    spec.update({"rmat": {"scale": args.scale, "edge_factor": args.edge_factor},
                 "ba": {"vertices": args.vertices, "m": args.m},
                 "road": {"rows": args.rows, "cols": args.cols}}[args.model])
    graph, _ = experiment.prepare_graph(binary, spec, args.graph_dir)
    ref = reference.run_reference(graph, "bfs")
    rows = []
    with ExitStack() as stack:
        directory, device = args.dir, args.device or str(args.dir)
        if args.emussd_latency_us is not None:
            from emussd.harness import Mount, build  # noqa: PLC0415 (only with --emussd-latency-us)

            m = stack.enter_context(Mount(build(), args.dir, read_latency_us=args.emussd_latency_us, alpha=2,
                                          k_r=args.emussd_k_r, k_w=4))
            directory = m.mountpoint
            device = args.device or f"emussd(latency={args.emussd_latency_us:g}us,k_r={args.emussd_k_r})"
        on_device = experiment.place_on_device(graph, directory)
        for rep in range(args.repetitions):
            for n in threads:
                labels = list(binaries)
                labels = labels[rep % len(labels):] + labels[: rep % len(labels)]  # each goes first in turn
                runs = {label: engine.run(binaries[label], graph=on_device, algorithm="bfs", variant=args.variant,
                                          io_threads=n, cache_fraction=args.cache_fraction) for label in labels}
                fio = experiment.fio_randread(on_device, n, args.fio_runtime)
                for label, row in runs.items():
                    rows.append({
                        "device": device, "dataset": spec["name"], "binary": label, "variant": args.variant,
                        "io_threads": n, "cache_fraction": args.cache_fraction, "repetition": rep,
                        "cave_runtime_s": row["runtime_s"], "cave_block_reads": row["block_reads"],
                        "cave_mib_s": row["read_mib_s"], "fio_mib_s": fio["read_mib_s"],
                        "bandwidth_ratio_pct": 100 * row["read_mib_s"] / fio["read_mib_s"],
                        "cave_cpu_util_pct": row["cpu_util_pct"], "fio_cpu_util_pct": fio["cpu_pct"],
                        "lock_wait_pct": row["lock_wait_pct"], "reference_runtime_s": ref["runtime_s"],
                        "reference_over_cave": ref["runtime_s"] / row["runtime_s"],
                    })  # fmt: skip
                    assert row["reached"] == ref["reached"], f"CAVE ({label}) and the reference disagree"
        if args.emussd_latency_us is not None:
            on_device.unlink()
    out = args.out or args.dir / "cave-bandwidth.csv"
    if args.emussd_latency_us is not None and args.out is None:
        out = args.dir / "cave-bandwidth-emussd.csv"
    experiment.write_csv(rows, COLUMNS, out)
    print(f"{'binary':>8} {'threads':>7} {'cave s':>8} {'reads':>8} {'cave MiB/s':>10} {'fio MiB/s':>9} {'ratio':>6} "
          f"{'cpu %':>6} {'fio cpu %':>9} {'lock %':>6} {'ref s':>7}")
    for r in rows:
        print(f"{r['binary']:>8} {r['io_threads']:>7} {r['cave_runtime_s']:>8.3f} {r['cave_block_reads']:>8} "
              f"{r['cave_mib_s']:>10.1f} {r['fio_mib_s']:>9.1f} {r['bandwidth_ratio_pct']:>5.0f}% "
              f"{r['cave_cpu_util_pct']:>6.1f} {r['fio_cpu_util_pct']:>9.1f} {r['lock_wait_pct']:>6.2f} "
              f"{r['reference_runtime_s']:>7.3f}")
    print(f"median over {args.repetitions} repetition(s):")
    print(f"{'binary':>8} {'threads':>7} {'cave s':>8} {'cave MiB/s':>10} {'fio MiB/s':>9} {'cpu %':>6}")
    for n in threads:
        for label in binaries:
            mine = [r for r in rows if r["binary"] == label and r["io_threads"] == n]
            med = {k: statistics.median(r[k] for r in mine) for k in ("cave_runtime_s", "cave_mib_s", "fio_mib_s",
                                                                     "cave_cpu_util_pct")}
            print(f"{label:>8} {n:>7} {med['cave_runtime_s']:>8.3f} {med['cave_mib_s']:>10.1f} "
                  f"{med['fio_mib_s']:>9.1f} {med['cave_cpu_util_pct']:>6.1f}")
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
