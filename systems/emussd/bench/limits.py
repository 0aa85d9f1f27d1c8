#!/usr/bin/env python3
"""Where does emussd's device model hold on this machine?

Measurements, each written as JSON or CSV under --out:

  precision  sleep overshoot of clock_nanosleep (emussd_precision)
  cpu        CPU time per emulated I/O over fio runs: of the emussd process
             (from its stats file), of fio (its rusage, kernel time in its
             threads included), and of the whole machine (/proc/stat, which
             also counts anything else running)
  sweep      fio thread sweeps over (read latency, k): does IOPS reach k/latency
             at n = k threads, and is the single-thread latency the declared one?
  threads    one device, a list of thread counts (e.g. a preset, 1..4k)

Run from the repository root (takes about 6 minutes on 2 cores):

    .venv/bin/python systems/emussd/bench/limits.py all --out systems/emussd/build/bench
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from emussd.harness import DEFAULT_BUILD_DIR, Mount, build  # noqa: E402

FILE_BYTES = 4 * 1024 * 1024


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def fio(mnt: Path, *, rw: str, jobs: int, seconds: float, engine: str = "psync", iodepth: int = 1) -> dict:
    cmd = [
        "fio", "--name=bench", f"--filename={mnt / 'data'}", f"--rw={rw}", "--bs=4k",
        f"--size={FILE_BYTES}", "--direct=1", f"--ioengine={engine}", f"--iodepth={iodepth}",
        "--thread", f"--numjobs={jobs}", "--group_reporting", f"--runtime={seconds}",
        "--time_based", "--ramp_time=0.5", "--output-format=json",
    ]  # fmt: skip
    with tempfile.TemporaryFile("w+") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)  # the CPU time of fio and all its threads
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"fio failed ({proc.returncode}): {' '.join(cmd)}")
        f.seek(0)
        out = f.read()
    job = json.loads(out[out.index("{") :])["jobs"][0]
    d = job["read" if "read" in rw else "write"]
    clat = d["clat_ns"]
    return {
        "iops": d["iops"],
        "clat_mean_us": clat["mean"] / 1e3,
        "clat_p50_us": clat["percentile"]["50.000000"] / 1e3,
        "clat_p99_us": clat["percentile"]["99.000000"] / 1e3,
        "ios": d["total_ios"],
        "fio_cpu_s": usage.ru_utime + usage.ru_stime,
    }


def measured_fio(m: Mount, **kw) -> dict:
    """fio on mount m, plus the CPU used by emussd, by fio, and by everything else meanwhile."""
    s0, (b0, _), t0 = m.stats(), cpu_jiffies(), time.monotonic()
    r = fio(m.mountpoint, **kw)
    s1, (b1, _), t1 = m.stats(), cpu_jiffies(), time.monotonic()
    emussd_s = (s1["cpu_user_s"] + s1["cpu_system_s"]) - (s0["cpu_user_s"] + s0["cpu_system_s"])
    machine_s = (b1 - b0) / os.sysconf("SC_CLK_TCK")
    r["emulated_ios"] = sum(s1["ops"][op]["count"] - s0["ops"][op]["count"] for op in ("read", "write"))
    r["emussd_cpu_s"] = emussd_s
    r["machine_cpu_s"] = machine_s
    # Cores busy with other work (other users of a shared machine): if this is
    # large, the point measured the neighbours as much as emussd.
    r["other_busy_cores"] = max(0.0, (machine_s - emussd_s - r["fio_cpu_s"]) / (t1 - t0))
    return r


def device(binary: Path, root: Path, **params) -> Mount:
    """A mount whose backing directory already holds the fio file (no emulated layout cost)."""
    (root / "backing").mkdir(parents=True, exist_ok=True)
    data = root / "backing" / "data"
    if not data.exists():
        data.write_bytes(os.urandom(FILE_BYTES))
    return Mount(binary, root, **params)


def run_precision(out: Path) -> None:
    build(DEFAULT_BUILD_DIR, targets=("emussd_precision",))
    proc = subprocess.run(
        [str(DEFAULT_BUILD_DIR / "emussd_precision"), "--samples", "2000", "--threads", "1,16",
         "--durations-us", "20,50,100,200,500,1000,2000,5000"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    (out / "precision.json").write_text(json.dumps(rows, indent=1))
    print("sleep overshoot (us): slack threads duration -> median p99")
    for r in rows:
        o = r["overshoot_us"]
        print(f"  {r['timer_slack_ns']:>6} {r['threads']:>3} {r['duration_us']:>5} "
              f"-> {o['median']:7.1f} {o['p99']:7.1f}")


def run_cpu(binary: Path, out: Path, tmp: Path) -> None:
    rows = []
    cases = [
        ("randread", "psync", 16, 1, 1000.0),
        ("randwrite", "psync", 16, 1, 1000.0),
        ("randread", "io_uring", 2, 8, 1000.0),
        ("randread", "psync", 16, 1, 50.0),
    ]
    for i, (rw, engine, jobs, depth, lat) in enumerate(cases):
        with device(binary, tmp / f"cpu{i}", read_latency_us=lat, alpha=1, k_r=16, k_w=16) as m:
            fio(m.mountpoint, rw=rw, jobs=1, seconds=0.5)  # warm the thread pool
            r = measured_fio(m, rw=rw, jobs=jobs, seconds=5, engine=engine, iodepth=depth)
        n = r["emulated_ios"]
        row = {
            "rw": rw, "engine": engine, "jobs": jobs, "iodepth": depth, "read_latency_us": lat,
            "emulated_ios": n, "iops": round(r["iops"]),
            "emussd_cpu_us_per_io": round(r["emussd_cpu_s"] / n * 1e6, 1),
            "fio_cpu_us_per_io": round(r["fio_cpu_s"] / n * 1e6, 1),
            "emussd_plus_fio_cpu_us_per_io": round((r["emussd_cpu_s"] + r["fio_cpu_s"]) / n * 1e6, 1),
            "machine_cpu_us_per_io": round(r["machine_cpu_s"] / n * 1e6, 1),
            "other_busy_cores": round(r["other_busy_cores"], 2),
        }  # fmt: skip
        rows.append(row)
        print("cpu:", row)
    write_csv(out / "cpu.csv", rows)


def run_sweep(binary: Path, out: Path, tmp: Path, latencies: list[float], ks: list[int], seconds: float) -> None:
    rows = []
    for lat in latencies:
        root = tmp / f"lat{int(lat)}"
        with device(binary, root, read_latency_us=lat, alpha=1, k_r=1, k_w=1) as m:
            single = measured_fio(m, rw="randread", jobs=1, seconds=seconds)
        lat_row = {
            "read_latency_us": lat, "k_r": 1, "threads": 1, "iops": round(single["iops"]),
            "iops_fraction": round(single["iops"] * lat / 1e6, 3),
            "clat_p50_us": round(single["clat_p50_us"], 1), "clat_mean_us": round(single["clat_mean_us"], 1),
            "clat_p99_us": round(single["clat_p99_us"], 1),
            "latency_error": round(single["clat_p50_us"] / lat - 1, 3),
            "cpu_us_per_io": round((single["emussd_cpu_s"] + single["fio_cpu_s"]) / single["emulated_ios"] * 1e6, 1),
            "other_busy_cores": round(single["other_busy_cores"], 2),
        }  # fmt: skip
        rows.append(lat_row)
        print("sweep:", lat_row)
        for k in ks:
            if k / lat * 1e6 > 60000:  # far beyond what 2 cores can do; not worth the minute
                continue
            with device(binary, root, read_latency_us=lat, alpha=1, k_r=k, k_w=1) as m:
                for n in (k, 2 * k):
                    r = measured_fio(m, rw="randread", jobs=n, seconds=seconds)
                    row = {
                        "read_latency_us": lat, "k_r": k, "threads": n, "iops": round(r["iops"]),
                        "iops_fraction": round(r["iops"] / (k / lat * 1e6), 3),
                        "clat_p50_us": round(r["clat_p50_us"], 1), "clat_mean_us": round(r["clat_mean_us"], 1),
                        "clat_p99_us": round(r["clat_p99_us"], 1), "latency_error": "",
                        "cpu_us_per_io": round((r["emussd_cpu_s"] + r["fio_cpu_s"]) / r["emulated_ios"] * 1e6, 1),
                        "other_busy_cores": round(r["other_busy_cores"], 2),
                    }  # fmt: skip
                    rows.append(row)
                    print("sweep:", row)
    write_csv(out / "sweep.csv", rows)


def run_threads(binary: Path, out: Path, tmp: Path, args) -> None:
    lat, alpha = args.latency_us, args.alpha
    k = args.k_r if "read" in args.rw else args.k_w
    service_us = lat * (alpha if "write" in args.rw else 1)
    rows = []
    with device(binary, tmp / "threads", read_latency_us=lat, alpha=alpha, k_r=args.k_r, k_w=args.k_w) as m:
        for n in [int(x) for x in args.threads.split(",")]:
            r = measured_fio(m, rw=args.rw, jobs=n, seconds=args.seconds)
            row = {
                "rw": args.rw, "read_latency_us": lat, "alpha": alpha, "k_r": args.k_r, "k_w": args.k_w,
                "threads": n, "iops": round(r["iops"]),
                "iops_fraction": round(r["iops"] / (min(n, k) / service_us * 1e6), 3),
                "clat_p50_us": round(r["clat_p50_us"], 1), "clat_p99_us": round(r["clat_p99_us"], 1),
                "emussd_cpu_us_per_io": round(r["emussd_cpu_s"] / r["emulated_ios"] * 1e6, 1),
                "fio_cpu_us_per_io": round(r["fio_cpu_s"] / r["emulated_ios"] * 1e6, 1),
                "other_busy_cores": round(r["other_busy_cores"], 2),
            }  # fmt: skip
            rows.append(row)
            print("threads:", row)
    name = f"threads-{args.rw}-L{lat:g}-a{alpha:g}-kr{args.k_r}-kw{args.k_w}.csv"
    write_csv(out / name, rows)


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("wrote", path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["precision", "cpu", "sweep", "threads", "all"])
    ap.add_argument("--out", type=Path, default=Path(DEFAULT_BUILD_DIR) / "bench")
    ap.add_argument("--latencies-us", default="100,200,500,1000,2000,5000,10000")
    ap.add_argument("--ks", default="4,8,16,32,64,128")
    ap.add_argument("--seconds", type=float, default=2.0, help="fio runtime per point")
    ap.add_argument("--binary", type=Path, help="an emussd binary to measure (default: build the checkout's)")
    g = ap.add_argument_group("threads")
    g.add_argument("--latency-us", type=float, default=2000)
    g.add_argument("--alpha", type=float, default=3)
    g.add_argument("--k-r", type=int, default=16)
    g.add_argument("--k-w", type=int, default=4)
    g.add_argument("--rw", default="randread", choices=["randread", "randwrite"])
    g.add_argument("--threads", default="1,2,4,8,16,32,64")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    binary = args.binary or build(DEFAULT_BUILD_DIR)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="emussd-bench-") as tmp:
        if args.what in ("precision", "all"):
            run_precision(args.out)
        if args.what in ("cpu", "all"):
            run_cpu(binary, args.out, Path(tmp))
        if args.what in ("sweep", "all"):
            run_sweep(
                binary, args.out, Path(tmp),
                [float(x) for x in args.latencies_us.split(",")],
                [int(x) for x in args.ks.split(",")], args.seconds,
            )  # fmt: skip
        if args.what == "threads":
            run_threads(binary, args.out, Path(tmp), args)
    print(f"done in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
