"""Running fio for one measurement point and turning its JSON into one tidy row.

Every point runs with direct I/O, time-based, after a ramp, on one file per job
(so concurrent writers never share an inode), with iodepth as a declared
parameter and the number of jobs (threads) as the concurrency. fio's JSON is
kept as the raw output; the tidy row is derived from it only.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

RW_MODE = {("read", "random"): "randread", ("write", "random"): "randwrite",
           ("read", "sequential"): "read", ("write", "sequential"): "write"}
PERCENTILES = {"p50": "50.000000", "p99": "99.000000", "p99_9": "99.900000", "p99_99": "99.990000"}
JOB_NAME = "point"


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
    file_size: int     # bytes of each job's file

    def __post_init__(self) -> None:
        if (self.op, self.pattern) not in RW_MODE:
            raise ValueError(f"unknown fio point op={self.op!r} pattern={self.pattern!r}")
        if self.file_size < self.block_size or self.threads < 1 or self.iodepth < 1:
            raise ValueError(f"invalid fio point {self}")


def job_files(point: FioPoint, directory: Path) -> list[Path]:
    """The files fio's jobs use (fio's default names), so they can be prepared beforehand."""
    return [directory / f"{JOB_NAME}.{job}.0" for job in range(point.threads)]


def command(point: FioPoint, directory: Path, output_json: Path) -> list[str]:
    return [
        "fio", f"--name={JOB_NAME}", f"--directory={directory}", f"--rw={RW_MODE[point.op, point.pattern]}",
        f"--bs={point.block_size}", f"--size={point.file_size}", f"--numjobs={point.threads}",
        f"--iodepth={point.iodepth}", f"--ioengine={point.engine}", "--direct=1", "--time_based",
        f"--runtime={point.runtime_ms}ms", f"--ramp_time={point.ramp_ms}ms", "--group_reporting",
        "--randrepeat=0", f"--percentile_list={':'.join(p.rstrip('0').rstrip('.') for p in PERCENTILES.values())}",
        "--output-format=json", f"--output={output_json}",
    ]


def run(point: FioPoint, directory: Path, output_json: Path) -> None:
    output_json.parent.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(command(point, directory, output_json), capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"fio failed (exit {result.returncode}) for {point}:\n{result.stderr[-2000:]}")


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
}


def tidy_row(output_json: Path, point: FioPoint, device: str) -> dict:
    report = json.loads(output_json.read_text())
    job = report["jobs"][0]  # group_reporting: one aggregate for all jobs
    side = job[point.op]
    if side["total_ios"] == 0:
        raise RuntimeError(f"fio completed no {point.op} in {output_json}: the device did not answer in time")
    percentiles = side["clat_ns"].get("percentile", {})
    row = {key: value for key, value in asdict(point).items() if key in TIDY_COLUMNS}
    row.update({
        "device": device,
        "iops": side["iops"],
        "bandwidth_bytes_s": side["bw_bytes"],
        "lat_mean_us": side["clat_ns"]["mean"] / 1000,
        **{f"lat_{name}_us": percentiles[key] / 1000 for name, key in PERCENTILES.items()},
        "duration_s": job["job_runtime"] / 1000 / point.threads,
    })
    return row
