"""The whole characterization of one opened device (thesis Chapter 2), driven by
configs/experiments/pio.yaml: preconditioning, the random and sequential thread
searches, α and k, the queue-depth sweep, reads under background writes, and
the write-back application of Figure 3.5."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from . import characterize, fio, sweep, writeback_app

SWEEP_COLUMNS = {**fio.TIDY_COLUMNS,
                 "sweep": "threads (thread search at the declared iodepth) or queue_depth (one job, growing iodepth)",
                 "runs": "fio runs at this point; a point a decision of the search or the peak rests on was run three "
                         "times and its median run kept"}


# The columns of each table that carry absolute time: (times, rates). An emulated device run
# with a time dilation D is reported on its declared time scale: times / D, rates x D
# (ssdartifact.devices.to_declared_time).
_FIO_TIMES = tuple(key for key in fio.TIDY_COLUMNS if key.startswith("lat_")) + ("duration_s",)
TIME_COLUMNS = {
    "sweeps": (_FIO_TIMES, ("iops", "bandwidth_bytes_s")),
    "alpha_k": (("read_lat_1_us", "write_lat_1_us"), ("read_bw_max", "write_bw_max")),
    "interference": (tuple(key for key in fio.TIDY_COLUMNS if key.startswith("lat_")),
                     ("iops", "background_target_bytes_s", "background_bytes_s")),
    "writeback": (("seconds",), ("ops_per_s",)),
}


@dataclass
class OpenedTarget:
    name: str
    target: fio.Target        # where fio's I/O goes
    prepare_dir: Path | None  # emulated devices: files may be created here without device I/O (sparse)
    precondition: bool


@dataclass
class Results:
    sweeps: list[dict]
    alpha_k: list[dict]
    interference: list[dict]
    writeback: list[dict]


def needed_bytes(experiment: dict, max_threads: int) -> int:
    app = experiment["writeback_app"]
    return max_threads * experiment["characterization"]["file_size"] + app["pages"] * app["page_size"]


def base_point(experiment: dict, fio_point: dict, op: str, pattern: str, block_size: int) -> fio.FioPoint:
    """A thread-search point; write points get fio's steady-state check when long enough for its window."""
    settings = experiment["characterization"]
    steady = settings["steady_state"]
    check = op == "write" and fio_point["runtime_ms"] >= steady["window_ms"]
    return fio.FioPoint(op, pattern, block_size, 1, settings["iodepth"], settings["engine"],
                        fio_point["runtime_ms"], fio_point["ramp_ms"], settings["file_size"],
                        steady["criterion"] if check else "", steady["window_ms"] if check else 0)


def precondition(device: OpenedTarget, experiment: dict, max_threads: int, raw_dir: Path, progress: TextIO) -> None:
    """Write the whole region the experiment uses, sequentially, `passes` times (thesis T482, T971)."""
    settings = experiment["characterization"]
    passes, block_size = settings["precondition"]["passes"], settings["precondition"]["block_size"]
    point = fio.FioPoint("write", "sequential", block_size, max_threads, 1, settings["engine"], 1000, 0,
                         settings["file_size"])
    arguments = [argument for argument in fio.command(point, device.target, raw_dir / "precondition.json")
                 if not argument.startswith(("--time_based", "--runtime", "--ramp_time"))]
    print(f"{device.name}: preconditioning: writing {max_threads * settings['file_size']} bytes {passes} times",
          file=progress, flush=True)
    fio.run_command([*arguments, f"--loops={passes}"], raw_dir / "precondition.json", "preconditioning")


def writeback_batches(k_w: int, factor: float) -> list[int]:
    top = max(2, int(factor * k_w))
    powers = [2 ** n for n in range(top.bit_length()) if 2 ** n <= top]
    return sorted({*powers, top, *(b for b in (k_w - 1, k_w, k_w + 1) if 1 <= b <= top)})


# The block size of the rows later steps read: the write-back app's k_w and the interference's
# background writers (below), thesis Tables 2.1 and 6.2 ("for 4KB block size").
PAGE_SIZE = 4096


def thread_searches(device: OpenedTarget, experiment: dict, fio_point: dict, max_threads: int, raw_dir: Path,
                    progress: TextIO = sys.stderr) -> tuple[list[dict], list[dict]]:
    """Preconditioning, the random and sequential thread searches of the experiment's block sizes,
    and alpha and k from them: (sweep rows, alpha_k rows). Alone, with only the 4 KiB random
    searches, it is what thesis Table 6.2 prints (steps.pio.search_device_threads)."""
    settings = experiment["characterization"]
    rule = characterize.Rule(max_threads=max_threads, **settings["rule"])
    if device.prepare_dir is not None:
        widest = replace(base_point(experiment, fio_point, "read", "random", PAGE_SIZE), threads=max_threads)
        sweep.prepare_sparse_files([widest], device.prepare_dir)
    if device.precondition:
        precondition(device, experiment, max_threads, raw_dir, progress)

    rows = []
    for pattern, sizes in (("random", settings["random_block_sizes"]),
                           ("sequential", settings["sequential_block_sizes"])):
        for block_size in sizes:
            for op in ("read", "write"):
                base = base_point(experiment, fio_point, op, pattern, block_size)
                rows += sweep.thread_search(base, device.target, raw_dir, device.name, rule, progress)
    for row in rows:
        row["sweep"] = "threads"
    return rows, characterize.estimate_all(rows, rule)


def run(device: OpenedTarget, experiment: dict, fio_point: dict, max_threads: int, raw_dir: Path,
        progress: TextIO = sys.stderr) -> Results:
    rows, alpha_k = thread_searches(device, experiment, fio_point, max_threads, raw_dir, progress)
    page = next(r for r in alpha_k if r["pattern"] == "random" and r["block_size"] == PAGE_SIZE)

    depth = experiment["queue_depth"]
    for op in ("read", "write"):
        for iodepth in depth["depths"]:
            point = replace(base_point(experiment, fio_point, op, "random", depth["block_size"]),
                            iodepth=iodepth, engine=depth["engine"])
            rows.append({**sweep.measure(point, device.target, raw_dir, device.name, progress), "sweep": "queue_depth",
                         "runs": 1})

    load = experiment["interference"]
    foreground = base_point(experiment, fio_point, "read", "random", load["block_size"])
    background = replace(base_point(experiment, fio_point, "write", "random", load["block_size"]),
                         threads=page["k_w"], steady_state="", steady_window_ms=0)
    interference = sweep.interference(foreground, background, page["write_bw_max"], load["background_fractions"],
                                      device.target, raw_dir, device.name, progress)

    writeback = run_writeback_app(device, experiment["writeback_app"], fio_point, page, progress)
    return Results(rows, alpha_k, interference, writeback)


# Each batch size runs at least this many operations' worth of time at batch 1 (its one-thread
# read and write latencies in the read/write mix): the fio point's 0.3 s holds only about 30 on a
# time-dilated 2-4 ms device, where the mix of reads and writes in so short a prefix of the
# operation sequence moves the speedup baseline by several percent.
MIN_WRITEBACK_OPERATIONS = 150


def writeback_seconds(app: dict, fio_point: dict, page: dict) -> float:
    """How long each batch size runs: the fio point's runtime, or MIN_WRITEBACK_OPERATIONS at
    batch 1 on this device if longer (page: the 4 KiB random row, wall-clock latencies)."""
    one_operation_us = (app["read_fraction"] * page["read_lat_1_us"]
                        + (1 - app["read_fraction"]) * page["write_lat_1_us"])
    return max(fio_point["runtime_ms"] / 1000, MIN_WRITEBACK_OPERATIONS * one_operation_us / 1e6)


def run_writeback_app(device: OpenedTarget, app: dict, fio_point: dict, page: dict, progress: TextIO) -> list[dict]:
    """Figure 3.5 on this device, predicted by the PIO model from the measured alpha_cost and k_w."""
    if device.target.directory is None:
        print(f"{device.name}: the write-back app runs on file systems only; not run on a raw device",
              file=progress, flush=True)
        return []
    batches = writeback_batches(page["k_w"], app["batch_factor"])
    alpha = page["alpha_cost"] if page["alpha_cost"] >= 1 else None  # the model needs writes >= reads
    rows = writeback_app.sweep(device.target.directory, batches=batches, read_fraction=app["read_fraction"],
                               pages=app["pages"], page_size=app["page_size"],
                               duration_s=writeback_seconds(app, fio_point, page), seed=app["seed"],
                               alpha=alpha, k_w=page["k_w"], sparse=device.prepare_dir is not None,
                               prepare_in=device.prepare_dir)
    for row in rows:
        model = "none: alpha < 1" if alpha is None else f"{row['model_speedup']:.2f}"
        print(f"{device.name}: write-back app, batches of {row['write_batch']}: speedup {row['speedup']:.2f} "
              f"(model {model})", file=progress, flush=True)
    return [{"device": device.name, **row} for row in rows]
