"""Running fio for one measurement point and turning its JSON into one tidy row.

Every point runs with direct I/O, time-based, after a ramp, with iodepth as a
declared parameter and the number of jobs (threads) as the concurrency. The jobs
are threads of one fio process (--thread): hundreds of processes cost a 2-core
machine, and an emulated device sharing it, about 1.7 times the CPU per I/O of
threads (87 vs 53 us at 512 jobs; systems/emussd/README.md). On a
directory each job has its own file (so concurrent writers never share an
inode); on a raw block device all jobs share the declared region. fio's JSON is
kept as the raw output; the tidy row is derived from it only.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

RW_MODE = {("read", "random"): "randread", ("write", "random"): "randwrite",
           ("read", "sequential"): "read", ("write", "sequential"): "write"}
PERCENTILES = {"p50": "50.000000", "p99": "99.000000", "p99_9": "99.900000", "p99_99": "99.990000"}
PERCENTILE_LIST = ":".join(p.rstrip("0").rstrip(".") for p in PERCENTILES.values())
JOB_NAME = "point"
# steady_state column: fio's steady-state detection was not asked for (the point is shorter than its window)
UNCHECKED = "unchecked"


@dataclass(frozen=True)
class FioPoint:
    op: str            # read | write
    pattern: str       # random | sequential
    block_size: int    # bytes per request
    threads: int       # fio jobs issuing I/O at once
    iodepth: int       # requests in flight per job
    engine: str        # fio ioengine (psync, io_uring, libaio)
    runtime_ms: int    # measured time, after the ramp
    ramp_ms: int
    file_size: int     # bytes of each job's file (of its region on a block device)
    steady_state: str = ""    # fio --steadystate criterion (e.g. iops_slope:2%), or "" for none
    steady_window_ms: int = 0  # fio --ss_dur

    def __post_init__(self) -> None:
        if (self.op, self.pattern) not in RW_MODE:
            raise ValueError(f"unknown fio point op={self.op!r} pattern={self.pattern!r}")
        if self.file_size < self.block_size or self.threads < 1 or self.iodepth < 1:
            raise ValueError(f"invalid fio point {self}")


@dataclass(frozen=True)
class Target:
    """Where a point's I/O goes: a directory (one file per job) or a raw block device."""
    directory: Path | None = None
    block_device: Path | None = None

    def __post_init__(self) -> None:
        if (self.directory is None) == (self.block_device is None):
            raise ValueError("a fio target is either a directory or a block device")

    def options(self) -> list[str]:
        if self.directory is not None:
            return [f"--directory={self.directory}"]
        return [f"--filename={self.block_device}"]


def job_files(point: FioPoint, directory: Path) -> list[Path]:
    """The files fio's jobs use (fio's default names), so they can be prepared beforehand."""
    return [directory / f"{JOB_NAME}.{job}.0" for job in range(point.threads)]


def point_options(point: FioPoint) -> list[str]:
    """The options of one job section (fio applies options to the --name before them)."""
    options = [
        f"--rw={RW_MODE[point.op, point.pattern]}", f"--bs={point.block_size}", f"--size={point.file_size}",
        f"--numjobs={point.threads}", "--thread", f"--iodepth={point.iodepth}", f"--ioengine={point.engine}",
        "--direct=1",
        "--time_based", f"--runtime={point.runtime_ms}ms", f"--ramp_time={point.ramp_ms}ms",
        "--randrepeat=0", f"--percentile_list={PERCENTILE_LIST}",
        # the kernel's clock (vDSO): fio's default TSC clock is calibrated again in every fio process,
        # 60 ms of each 0.4 s point here (the characterization runs hundreds of points per device)
        "--clocksource=clock_gettime",
    ]
    if point.steady_state:
        options += [f"--steadystate={point.steady_state}", f"--ss_dur={point.steady_window_ms}ms"]
    return options


def command(point: FioPoint, target: Target | Path, output_json: Path) -> list[str]:
    target = target if isinstance(target, Target) else Target(directory=target)
    # on a block device each job gets a region of its own, as it gets a file of its own in a directory
    regions = [f"--offset_increment={point.file_size}"] if target.block_device is not None else []
    return ["fio", f"--name={JOB_NAME}", *target.options(), *point_options(point), *regions, "--group_reporting",
            "--output-format=json", f"--output={output_json}"]


def run_command(arguments: list[str], output_json: Path, what: str, env: dict[str, str] | None = None) -> None:
    """fio with `arguments`; `env` adds to its environment (a library device's model, for its engine)."""
    output_json.parent.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(arguments, capture_output=True, text=True, env={**os.environ, **env} if env else None)
    if result.returncode != 0:
        raise RuntimeError(f"fio failed (exit {result.returncode}) for {what}:\n{result.stderr[-2000:]}")


def run(point: FioPoint, target: Target | Path, output_json: Path, env: dict[str, str] | None = None) -> None:
    run_command(command(point, target, output_json), output_json, str(point), env)


def version() -> str:
    return subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()


TIDY_COLUMNS = {
    "device": "declared device name (configs/devices.yaml)",
    "op": "read or write",
    "pattern": "random or sequential",
    "block_size": "bytes per request",
    "threads": "fio jobs issuing I/O at once",
    "iodepth": "requests in flight per job",
    "engine": "fio ioengine",
    "iops": "I/O operations per second, all jobs together",
    "bandwidth_bytes_s": "bytes per second, all jobs together",
    "lat_mean_us": "mean completion latency (submission to completion), microseconds",
    "lat_p50_us": "median completion latency, microseconds",
    "lat_p99_us": "99th percentile completion latency, microseconds",
    "lat_p99_9_us": "99.9th percentile completion latency, microseconds",
    "lat_p99_99_us": "99.99th percentile completion latency, microseconds",
    "duration_s": "measured seconds (after the ramp)",
    "steady_state": "fio's steady-state detection: reached, not reached, or unchecked (point shorter than its window)",
}


def side_metrics(job: dict, op: str, where: Path) -> dict:
    """IOPS, bandwidth and completion latencies of one job's read or write side."""
    side = job[op]
    if side["total_ios"] == 0:
        raise RuntimeError(f"fio completed no {op} in {where}: the device did not answer in time")
    percentiles = side["clat_ns"].get("percentile", {})
    return {
        "iops": side["iops"],
        "bandwidth_bytes_s": side["bw_bytes"],
        "lat_mean_us": side["clat_ns"]["mean"] / 1000,
        **{f"lat_{name}_us": percentiles[key] / 1000 for name, key in PERCENTILES.items()},
    }


def steady_state_of(job: dict, point: FioPoint) -> str:
    if not point.steady_state:
        return UNCHECKED
    return "reached" if job.get("steadystate", {}).get("attained") else "not reached"


def tidy_row(output_json: Path, point: FioPoint, device: str) -> dict:
    report = json.loads(output_json.read_text())
    job = report["jobs"][0]  # group_reporting: one aggregate for all jobs
    row = {key: value for key, value in asdict(point).items() if key in TIDY_COLUMNS}
    row.update(device=device, **side_metrics(job, point.op, output_json),
               duration_s=job["job_runtime"] / 1000 / point.threads,
               steady_state=steady_state_of(job, point))
    return row
