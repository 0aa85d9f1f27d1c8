"""fio sweeps on one opened device: the adaptive thread search, the queue-depth
sweep and reads under a background write load. fio's JSON of every point is kept
(raw output, never edited); tidy rows are derived from it."""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from . import fio
from .characterize import Rule, search_threads


def raw_name(point: fio.FioPoint, run: int = 1) -> str:
    return (f"{point.op}_{point.pattern}_bs{point.block_size}_t{point.threads}_qd{point.iodepth}"
            f"_{point.engine}{'' if run == 1 else f'_run{run}'}.json")


def prepare_sparse_files(points: list[fio.FioPoint], directory: Path) -> None:
    """Create every job file at full size without writing data.

    Only for emulated devices, whose files live in a backing directory on the
    host: their timing comes from the device model, not from the data, and fio
    would otherwise lay each file out through the slow emulated device first.
    (On a real file system a sparse file would be read without any device I/O,
    so there fio lays the files out with data.)
    """
    sizes = {point.file_size for point in points}
    if len(sizes) != 1:
        raise ValueError(f"all points of a sweep must use one file size, got {sorted(sizes)}")
    (size,) = sizes
    widest = max(points, key=lambda point: point.threads)
    for path in fio.job_files(widest, directory):
        with open(path, "ab") as handle:
            os.ftruncate(handle.fileno(), size)


def measure(point: fio.FioPoint, target: fio.Target, raw_dir: Path, device: str, progress: TextIO,
            label: str = "", run: int = 1) -> dict:
    """Run one point and return its tidy row; one progress line per point (a sweep can take hours)."""
    raw = raw_dir / raw_name(point, run)
    fio.run(point, target, raw)
    row = fio.tidy_row(raw, point, device)
    print(f"{label}{device}: {point.op} {point.pattern} {point.block_size} B, {point.threads} threads x "
          f"QD {point.iodepth}{'' if run == 1 else f' (run {run})'}: {row['iops']:.0f} IOPS, "
          f"mean latency {row['lat_mean_us']:.0f} us",
          file=progress, flush=True)
    return row


def run_sweep(points: list[fio.FioPoint], target: fio.Target | Path, raw_dir: Path, device: str,
              progress: TextIO = sys.stderr) -> list[dict]:
    """Run every point of a fixed grid in order."""
    target = target if isinstance(target, fio.Target) else fio.Target(directory=target)
    return [measure(point, target, raw_dir, device, progress, f"[{n}/{len(points)}] ")
            for n, point in enumerate(points, 1)]


# A point of the thread search lasts at least this many one-thread latencies. fio ends a timed
# point when its time is up but waits for the requests in flight, counting that drain in the
# point's time while the device's queue empties: at threads just past k, one request of 10 % of
# the point's time made the point read 9 % below the plateau (k + 2 found for k = 5, a 16 KiB
# write at 33 ms in a 0.3 s point); at 40 requests per thread the drain costs at most about 2 %.
REQUESTS_PER_THREAD = 40


def long_enough(point: fio.FioPoint, one_thread_latency_us: float) -> fio.FioPoint:
    """The point, lengthened (never shortened) to REQUESTS_PER_THREAD one-thread latencies."""
    needed_ms = math.ceil(REQUESTS_PER_THREAD * one_thread_latency_us / 1000)
    return replace(point, runtime_ms=max(point.runtime_ms, needed_ms))


def thread_search(base: fio.FioPoint, target: fio.Target, raw_dir: Path, device: str, rule: Rule,
                  progress: TextIO = sys.stderr) -> list[dict]:
    """The adaptive thread search of characterize.search_threads, with fio measuring each point.
    A point run several times is represented by its median run (every run's JSON is kept). The
    first point (one thread) sets how long the others last (long_enough)."""
    runs: dict[int, list[dict]] = {}

    def bandwidth_at(threads: int) -> float:
        nonlocal base
        runs.setdefault(threads, [])
        row = measure(replace(base, threads=threads), target, raw_dir, device, progress, run=len(runs[threads]) + 1)
        runs[threads].append(row)
        if threads == 1 and len(runs[1]) == 1:
            base = long_enough(base, row["lat_mean_us"])
        return row["bandwidth_bytes_s"]

    search_threads(bandwidth_at, rule)
    return [{**median_run(runs[threads]), "runs": len(runs[threads])} for threads in sorted(runs)]


def median_run(rows: list[dict]) -> dict:
    """The run whose bandwidth is the median (the lower middle one of an even count)."""
    ordered = sorted(rows, key=lambda row: row["bandwidth_bytes_s"])
    return ordered[(len(ordered) - 1) // 2]


INTERFERENCE_COLUMNS = {
    "device": "declared device name (configs/devices.yaml)",
    "background_fraction": "background write rate as a share of the device's max random write bandwidth "
                           "(1 = unthrottled; 0 = no background load)",
    "background_threads": "fio jobs writing in the background",
    "background_target_bytes_s": "requested background write rate, bytes per second (0 = none or unthrottled)",
    "background_bytes_s": "measured background write bandwidth, bytes per second",
    **{key: f"foreground 4 KiB random reads, one job at QD 1: {text}" for key, text in fio.TIDY_COLUMNS.items()
       if key.startswith("lat_") or key == "iops"},
}


def interference_command(foreground: fio.FioPoint, background: fio.FioPoint | None, rate_per_job: int,
                         target: fio.Target, output_json: Path) -> list[str]:
    """Foreground reads beside rate-limited background writes, on separate files of one device."""
    def files(first: int, count: int) -> list[str]:
        if target.block_device is not None:
            return [f"--filename={target.block_device}"]
        names = ":".join(f"{fio.JOB_NAME}.{n}.0" for n in range(first, first + count))
        return [f"--directory={target.directory}", f"--filename={names}"]

    arguments = ["fio", "--name=foreground", *files(0, 1), *fio.point_options(foreground)]
    if background is not None:
        arguments += ["--name=background", "--new_group", *files(1, background.threads),
                      *fio.point_options(background)]
        if rate_per_job:
            arguments.append(f"--rate=,{rate_per_job}")
    return [*arguments, "--group_reporting", "--output-format=json", f"--output={output_json}"]


def interference(foreground: fio.FioPoint, background: fio.FioPoint, write_bw_max: float,
                 fractions: list[float], target: fio.Target, raw_dir: Path, device: str,
                 progress: TextIO = sys.stderr) -> list[dict]:
    """Foreground read latency at each background write rate (a share of write_bw_max)."""
    rows = []
    for fraction in fractions:
        rate = 0 if fraction in (0, 1) else max(1, int(fraction * write_bw_max / background.threads))
        raw = raw_dir / f"interference_{fraction:g}.json"
        fio.run_command(interference_command(foreground, background if fraction else None, rate, target, raw),
                        raw, f"interference at {fraction:g}")
        jobs = {job["jobname"]: job for job in json.loads(raw.read_text())["jobs"]}
        metrics = fio.side_metrics(jobs["foreground"], "read", raw)
        written = jobs["background"]["write"]["bw_bytes"] if fraction else 0
        rows.append({"device": device, "background_fraction": fraction,
                     "background_threads": background.threads if fraction else 0,
                     "background_target_bytes_s": rate * background.threads, "background_bytes_s": written,
                     **{key: metrics[key] for key in INTERFERENCE_COLUMNS if key in metrics}})
        print(f"{device}: reads beside background writes at {fraction:g} of max ({written / 1e6:.1f} MB/s): "
              f"mean latency {metrics['lat_mean_us']:.0f} us, p99 {metrics['lat_p99_us']:.0f} us",
              file=progress, flush=True)
    return rows
