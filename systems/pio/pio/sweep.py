"""A fio sweep over measurement points on one opened device, keeping fio's JSON
for every point (raw output, never edited) and returning tidy rows."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from . import fio


def raw_name(point: fio.FioPoint) -> str:
    return (f"{point.op}_{point.pattern}_bs{point.block_size}_t{point.threads}_qd{point.iodepth}"
            f"_{point.engine}.json")


def prepare_sparse_files(points: list[fio.FioPoint], directory: Path) -> None:
    """Create every job file at full size without writing data.

    Only for emulated devices, whose files live in a backing directory on the
    host: their timing comes from the device model, not from the data, and fio
    would otherwise lay each file out through the slow emulated device first.
    """
    sizes = {point.file_size for point in points}
    if len(sizes) != 1:
        raise ValueError(f"all points of a sweep must use one file size, got {sorted(sizes)}")
    (size,) = sizes
    widest = max(points, key=lambda point: point.threads)
    for path in fio.job_files(widest, directory):
        with open(path, "ab") as handle:
            os.ftruncate(handle.fileno(), size)


def run_sweep(points: list[fio.FioPoint], io_dir: Path, raw_dir: Path, device: str,
              progress: TextIO = sys.stderr) -> list[dict]:
    """Run every point in order; one progress line per point (a sweep can take hours)."""
    rows = []
    for number, point in enumerate(points, 1):
        raw = raw_dir / raw_name(point)
        fio.run(point, io_dir, raw)
        row = fio.tidy_row(raw, point, device)
        rows.append(row)
        print(f"[{number}/{len(points)}] {device}: {point.op} {point.pattern} {point.block_size} B, "
              f"{point.threads} threads: {row['iops']:.0f} IOPS, mean latency {row['lat_mean_us']:.0f} us",
              file=progress, flush=True)
    return rows
