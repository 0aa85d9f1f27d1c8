"""What this machine can emulate faithfully, and the time dilation a device needs.

A short calibration (10 to 20 s, `calibrate`) measures two things with fio on real
emussd mounts:

  * round_trip_us: how long a closed-loop client (fio, psync) at n = k threads leaves
    each slot idle between the end of one request's service and its next request's
    arrival (k / IOPS - service time: the FUSE round trip, fio, three wake-ups), at a
    light load (k = 8 at 2 ms; three runs) and at the capacity below: the largest of
    these (on this VM it varies from 50 to 130 us from one minute to the next, with the
    host's load, so the largest is kept). At n = k this is what keeps throughput below
    k / latency;
  * capacity_iops: the highest declared rate (page I/Os per second, k = 16), on a ladder
    from 0.8 of the most the machine serves at all downwards, at which 4 x k threads get
    k / latency within 3 % with a mean latency within 10 % of Little's law (threads /
    throughput), and the gap at n = k stays within twice the light load's (a saturated
    CPU shows there first).

It is cached per host (host name, kernel, CPU count, emussd binary's sha256) under
scratch/emussd/calibration/ (where its devices are mounted while it measures) and
measured again when any of these changes.

It measures the machine, so it also measures whatever else runs on it: a build beside it once
doubled the gap, and with it the time dilation. So before each of its fio runs it looks at the
machine for a moment while it runs nothing (`busy_cores`). When other work used more than
`BUSY_SHARE` of the CPU time, the machine was busy, and the calibration is taken again after a
pause, `ATTEMPTS` times in all. One that was busy every time is kept, marked `busy`, so that the
command that took it can go on (with the ladder's lowest rate if the load left no rate faithful);
check-config takes it again before it judges a device that still has to be measured
(`retake="busy"`), and `make calibrate` takes it again on an idle machine.

From it, `dilation` chooses the smallest time dilation D for a declared device such that
  * its declared peak rate, max(k_r / read latency, k_w / write latency) per page, divided
    by D, is at most `HEADROOM` x capacity_iops (a margin for a calibration made on a
    machine that was not quite idle, and for devices with far more threads than k = 16), and
  * its shortest service time (a read page, or a write page when alpha < 1) times D is at
    least round_trip_us / `ROUND_TRIP_SHARE`, so that the gap, which emussd does not hide,
    is at most that share of every service time: the characterization finds k at 95 % of
    the peak only when a closed-loop client at k threads keeps the slots busy at least
    that much, and measures alpha within that share.
D is rounded up to two significant digits (1, 1.3, 7.5, 40), and is 1 for a device that
fits as declared. emussd runs every service time D times slower; alpha and k are ratios
and do not change, and absolute times are divided by D when results are reported.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import platform
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ssdartifact import provenance

from .harness import EMUSSD_DIR, EmussdError, Mount

CACHE_DIR = EMUSSD_DIR.parents[1] / "scratch" / "emussd" / "calibration"
CALIBRATION_VERSION = 3  # measured again when what is measured changes (3: how busy the machine was)

# The share of the measured capacity a declared device may use (the rest is left for the
# workload that shares the cores), and the largest share of a service time the client's
# round trip may be. Chosen from the measurements in systems/emussd/README.md: with 4 %, k
# at n = k sat within 1 % of the rule's 95 % and came out one too high in a run of .ci/run.
HEADROOM = 0.75
ROUND_TRIP_SHARE = 0.02
MAX_WALL_PAGE_US = 1e7  # emussd's limit: read_latency_us x time_dilation

FIO_FILE_BYTES = 4 << 20

# Other work above this share of the machine's CPU time makes a calibration busy. An idle machine
# shows a few percent (daemons); a build or a test run beside it shows 50 to 100 %, and doubled the
# gap at a light load (100 to 250 us on this project's 2-core VM).
BUSY_SHARE = 0.25
BUSY_WINDOW_S = 0.3  # how long it looks before each fio run
ATTEMPTS = 3         # a busy calibration is taken this many times in all,
BUSY_PAUSE_S = 20.0  # this long apart


def too_busy(other_cores: float, cpus: int) -> bool:
    return other_cores > BUSY_SHARE * cpus


@dataclass(frozen=True)
class Calibration:
    host: dict
    capacity_iops: float
    round_trip_us: float
    points: list = field(default_factory=list)
    seconds: float = 0.0
    version: int = CALIBRATION_VERSION
    busy_cores: float | None = None  # the cores other work used while it measured, on average (None: not looked)
    attempts: int = 1
    measured: str = ""               # when (UTC)

    @property
    def busy(self) -> bool:
        """Whether other work kept the machine busy while it measured (in every attempt)."""
        return self.busy_cores is not None and too_busy(self.busy_cores, self.cpus)

    @property
    def cpus(self) -> int:
        return self.host.get("cpus") or os.cpu_count() or 1

    def how_busy(self) -> str:
        return (f"other work used {self.busy_cores:.1f} of its {self.cpus} cores in {self.attempts} attempt(s), "
                f"and a client's gap was {self.round_trip_us:.0f} us")

    def record(self) -> dict:
        """What a result's provenance records of the calibration its time dilation was chosen from."""
        return {**asdict(self), "busy": self.busy}


@dataclass(frozen=True)
class Dilation:
    factor: float
    peak_iops: float          # declared peak page rate: max(k_r / read latency, k_w / write latency)
    usable_iops: float        # HEADROOM x the machine's capacity
    shortest_service_us: float
    min_service_us: float     # round trip / ROUND_TRIP_SHARE
    problem: str = ""         # why the device cannot be emulated at all (empty: it can)

    def describe(self) -> str:
        return (f"time dilation {self.factor:g} (declared peak {self.peak_iops:,.0f} page I/Os per s, this machine "
                f"emulates {self.usable_iops:,.0f} faithfully; shortest service time {self.shortest_service_us:g} us, "
                f"at least {self.min_service_us:,.0f} us keeps a client's gap between requests within "
                f"{ROUND_TRIP_SHARE:.0%} of it)")


# A container that gets a new host name on every start (Gradescope's, one per submission) names its
# machine here instead, so that the calibration its setup made is found again.
HOST_ENV = "EMUSSD_CALIBRATION_HOST"


def host_key(binary: Path, library: bool = False) -> dict:
    """What a calibration is valid for: this machine, emussd's binary (or the library device's
    engine), and which of the two devices it measured. In a workflow step's container the machine's
    name is passed in (provenance.HOST_ENV): the container's own changes with every step."""
    hostname = os.environ.get(HOST_ENV) or os.environ.get(provenance.HOST_ENV) or socket.gethostname()
    return {"hostname": hostname, "kernel": platform.release(),
            "cpus": os.cpu_count(), "binary_sha256": hashlib.sha256(Path(binary).read_bytes()).hexdigest(),
            "version": CALIBRATION_VERSION, **({"device": "library"} if library else {})}


def same_machine(host: dict, key: dict) -> bool:
    """Whether a calibration's `host` is `key`'s machine and binary, whatever the calibration's version."""
    return ({k: v for k, v in host.items() if k != "version"} == {k: v for k, v in key.items() if k != "version"})


def cache_path(key: dict, cache_dir: Path = CACHE_DIR) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return Path(cache_dir) / f"{key['hostname']}-{digest}.json"


def cached(binary: Path, cache_dir: Path = CACHE_DIR, library: bool = False) -> Calibration | None:
    """This host's calibration for this binary, if measured; None otherwise (or if the file is corrupt)."""
    path = cache_path(host_key(binary, library), cache_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Calibration(**data)
    except (OSError, ValueError, TypeError):
        return None


RETAKE = ("never", "busy", "always")


def calibration(binary: Path, cache_dir: Path = CACHE_DIR, progress=None, library: bool = False,
                retake: str = "never") -> Calibration:
    """The cached calibration, measured first if there is none for this host and binary (with
    `library`, of the library device: `binary` is then fio's engine, library.fio_engine()).
    `retake`: "busy" measures again one that was taken on a busy machine, "always" any. Without it a
    busy one is used as it is: a run goes on with the calibration it took, and records it."""
    if retake not in RETAKE:
        raise ValueError(f"retake={retake!r}: one of {', '.join(RETAKE)}")

    def usable(found: Calibration | None) -> bool:
        return found is not None and retake != "always" and not (retake == "busy" and found.busy)

    found = cached(binary, cache_dir, library)
    if usable(found):
        return found
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    # One calibration at a time: two experiments starting side by side would otherwise measure
    # the machine at once, each disturbing the other's; the second then finds the first's.
    with open(Path(cache_dir) / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        again = cached(binary, cache_dir, library)
        if usable(again):  # another process measured it while this one waited
            return again
        measured = calibrate(binary, progress=progress, work_dir=cache_dir, library=library)
        path = cache_path(measured.host, cache_dir)
        temporary = path.with_suffix(f".tmp.{os.getpid()}")
        temporary.write_text(json.dumps(asdict(measured), indent=1) + "\n", encoding="utf-8")
        temporary.replace(path)
        return measured


def round_up(value: float) -> float:
    """Up to two significant digits: 1.02 -> 1.1, 7.41 -> 7.5, 38.2 -> 39; at least 1."""
    if value <= 1:
        return 1.0
    step = 10.0 ** (math.floor(math.log10(value)) - 1)
    return round(math.ceil(value / step - 1e-9) * step, 10)


def dilation(model: dict, cal: Calibration) -> Dilation:
    """The smallest time dilation that makes `model` (read_latency_us, alpha, k_r, k_w) fit `cal`."""
    read_us = float(model["read_latency_us"])
    write_us = read_us * float(model["alpha"])
    peak = max(model["k_r"] / read_us, model["k_w"] / write_us) * 1e6
    usable = HEADROOM * cal.capacity_iops
    shortest = min(read_us, write_us)
    min_service = cal.round_trip_us / ROUND_TRIP_SHARE
    factor = round_up(max(1.0, peak / usable, min_service / shortest))
    problem = ""
    if read_us * factor > MAX_WALL_PAGE_US:
        problem = (f"it needs a time dilation of {factor:g}, which makes a page read take "
                   f"{read_us * factor / 1e6:g} s on the wall clock (emussd's limit: 10 s)")
    return Dilation(factor, peak, usable, shortest, min_service, problem)


# ----------------------------------------------------------------------------- measuring


def fio_point(device, *, rw: str, jobs: int, seconds: float, ramp: float = 0.3) -> dict:
    """fio's IOPS and completion latency (mean and median, us) for 4 KiB O_DIRECT I/O on `device`
    (a Mount, or a library.Folder), psync or the library's engine."""
    if shutil.which("fio") is None:
        raise EmussdError("fio is not installed (apt-get install fio): emussd's calibration measures with it")
    command = ["fio", "--name=calibrate", f"--filename={device.mountpoint / 'data'}", f"--rw={rw}", "--bs=4k",
               f"--size={FIO_FILE_BYTES}", "--direct=1", *device.fio_arguments(), "--thread", f"--numjobs={jobs}",
               "--group_reporting", f"--runtime={seconds}", "--time_based", f"--ramp_time={ramp}",
               "--randrepeat=0", "--output-format=json"]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **device.fio_environment()})
    if result.returncode != 0:
        raise EmussdError(f"fio failed during emussd's calibration: {result.stderr[-2000:]}")
    side = json.loads(result.stdout[result.stdout.index("{"):])["jobs"][0]["read" if "read" in rw else "write"]
    return {"iops": side["iops"], "clat_mean_us": side["clat_ns"]["mean"] / 1e3,
            "clat_p50_us": side["clat_ns"]["percentile"]["50.000000"] / 1e3}


def device_with_data(binary: Path, root: Path, library: bool = False, **model):
    """A device (a Mount, or with `library` a library.Folder; not started) whose files hold `data`,
    the file fio_point reads and writes."""
    from .library import Folder  # noqa: PLC0415 (the library device only)

    device = Folder(root, **model) if library else Mount(binary, root, **model)
    device.backing.mkdir(parents=True, exist_ok=True)
    with open(device.backing / "data", "wb") as handle:
        handle.truncate(FIO_FILE_BYTES)  # sparse: the device model, not the data, sets the timing
    return device


CAPACITY_K = 16
GAP_DEVICE = {"read_latency_us": 2000, "alpha": 1, "k_r": 8, "k_w": 1}  # a light load, like a small preset's
GAP_RUNS = 3
LADDER = (0.8, 0.7, 0.6, 0.5, 0.4, 0.3)
GAP_GROWTH = 2.0  # a faithful rate keeps the gap at k within this factor of the light load's


def _gap_us(device, k: int, service_us: float, seconds: float) -> float:
    """The gap a closed-loop client at n = k leaves each slot idle between requests: k / IOPS - service time."""
    return k / fio_point(device, rw="randread", jobs=k, seconds=seconds)["iops"] * 1e6 - service_us


def _rate_point(binary: Path, root: Path, rate: float, seconds: float, library: bool = False) -> dict:
    """One declared rate (k = 16 at latency 16 / rate): the gap at n = k, and throughput and Little's law
    at n = 4k."""
    k = CAPACITY_K
    latency_us = k / rate * 1e6
    with device_with_data(binary, root, library, read_latency_us=latency_us, alpha=1, k_r=k, k_w=1) as m:
        gap = _gap_us(m, k, latency_us, seconds)
        at_4k = fio_point(m, rw="randread", jobs=4 * k, seconds=seconds)
    return {"declared_iops": rate, "read_latency_us": latency_us, "k_r": k, "gap_us": gap,
            "at_4k": at_4k["iops"] / rate, "little_4k": at_4k["clat_mean_us"] / (4 * k / at_4k["iops"] * 1e6)}


def with_gap_now(cal: Calibration, binary: Path, work_dir: Path, runs: int = 2, seconds: float = 1.0,
                 library: bool = False) -> Calibration:
    """`cal` with the gap measured now (the largest of `runs`, at the light load's device) when it is
    larger than the one cached: a machine busier than when it was calibrated needs a larger time
    dilation for the same device (the labs' graders take it before each hidden device)."""
    with device_with_data(binary, Path(work_dir) / "gap-now", library, **GAP_DEVICE) as m:
        gap = max(_gap_us(m, GAP_DEVICE["k_r"], GAP_DEVICE["read_latency_us"], seconds)
                  for _ in range(runs))
    if gap <= cal.round_trip_us:
        return cal
    return replace(cal, round_trip_us=gap, points=[*cal.points, {"what": "gap now", "gap_us": gap}])


def busy_cores(seconds: float = BUSY_WINDOW_S) -> float:
    """How many cores the machine kept busy over `seconds` while the caller runs nothing: from
    /proc/stat, everything but idle and iowait (a VM's stolen time counts: its host was busy)."""
    def jiffies() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields) - fields[3] - fields[4], sum(fields)

    (busy0, total0), _, (busy1, total1) = jiffies(), time.sleep(seconds), jiffies()
    return (busy1 - busy0) / max(1, total1 - total0) * (os.cpu_count() or 1)


def calibrate(binary: Path, seconds: float = 1.5, progress=None, work_dir: Path | None = None,
              library: bool = False) -> Calibration:
    """Measure this machine's emulation capacity and a client's gap (see the module's doc), again
    while the machine is busy, ATTEMPTS times in all. The devices it mounts live in a temporary
    folder of `work_dir` (default: the system's)."""
    say = progress or (lambda message: None)
    started = time.monotonic()
    cpus = os.cpu_count() or 1
    for attempt in range(1, ATTEMPTS + 1):
        others: list[float] = []  # the cores other work used, looked at before each fio run
        with tempfile.TemporaryDirectory(prefix="emussd-calibration-", dir=work_dir) as tmp:
            light_gap, capacity, round_trip, points = _measure(binary, Path(tmp), seconds, library, say, others)
        if not too_busy(statistics.mean(others), cpus) or attempt == ATTEMPTS:
            break
        say(f"emussd calibration: the machine is busy ({statistics.mean(others):.1f} of its {cpus} cores used by "
            f"other work); measuring again in {BUSY_PAUSE_S:g} s (attempt {attempt + 1} of {ATTEMPTS})")
        time.sleep(BUSY_PAUSE_S)
    busy = too_busy(statistics.mean(others), cpus)
    if capacity == 0 and not busy:
        raise EmussdError(f"emussd's calibration found no faithful rate down to {LADDER[-1]:.0%} of the most this "
                          "machine serves, on a machine otherwise idle: it cannot emulate a device faithfully here. "
                          f"Points: {points}")
    if capacity == 0:
        # The load, not the machine, broke every rung. The command that took it goes on with the ladder's
        # lowest rate (the largest time dilation), marked busy like any busy calibration: the next
        # check-config that must judge a device takes it again.
        capacity = next(p["declared_iops"] for p in reversed(points) if p["what"] == "ladder")
        say(f"emussd calibration: no rate was served faithfully while other work ran; this command uses the "
            f"lowest tried ({capacity:,.0f} IOPS)")
    measured = Calibration(host_key(binary, library), capacity, round_trip, points,
                           round(time.monotonic() - started, 1), busy_cores=round(statistics.mean(others), 2),
                           attempts=attempt, measured=provenance.now())
    if measured.busy:
        say(f"emussd calibration: the machine was busy in every attempt ({measured.how_busy()}; {light_gap:.0f} us "
            "at a light load): it is kept for this command, marked busy, and taken again by the next check-config "
            "that must judge a device; `make calibrate` takes it again once the machine is idle")
    return measured


def _measure(binary: Path, tmp: Path, seconds: float, library: bool, say, others: list[float]):
    """One attempt: (the gap at a light load, the capacity (0: none found), the round trip, the points);
    the cores other work used before each fio run are appended to `others`."""
    with device_with_data(binary, tmp / "gap", library, **GAP_DEVICE) as m:
        gaps = []
        for _ in range(GAP_RUNS):
            others.append(busy_cores())
            gaps.append(_gap_us(m, GAP_DEVICE["k_r"], GAP_DEVICE["read_latency_us"], seconds))
    light_gap = statistics.median(gaps)
    points = [{"what": "gap at a light load", **GAP_DEVICE, "gaps_us": gaps}]
    say(f"emussd calibration: at a light load a client at k threads leaves each slot idle {light_gap:.0f} us "
        "between requests")
    # The most the machine serves at all: a device far beyond it (k 16 at 50 us, 320,000 IOPS, 64 threads).
    with device_with_data(binary, tmp / "most", library, read_latency_us=50, alpha=1, k_r=CAPACITY_K, k_w=1) as m:
        others.append(busy_cores())
        most = fio_point(m, rw="randread", jobs=4 * CAPACITY_K, seconds=seconds)["iops"]
    points.append({"what": "most served", "read_latency_us": 50, "k_r": CAPACITY_K, "iops": most})
    say(f"emussd calibration: this machine serves at most {most:,.0f} IOPS (k = 16 at 50 us, 64 threads)")
    for share in LADDER:  # the highest declared rate that is still served faithfully
        others.append(busy_cores())
        point = _rate_point(binary, tmp / f"r{share}", share * most, seconds, library)
        faithful = (point["gap_us"] <= GAP_GROWTH * light_gap and point["at_4k"] >= 0.97
                    and abs(point["little_4k"] - 1) <= 0.1)
        points.append({"what": "ladder", **point, "faithful": faithful})
        say(f"emussd calibration: declared {point['declared_iops']:,.0f} IOPS: gap at k {point['gap_us']:.0f} us, "
            f"{point['at_4k']:.3f} of it at 4k ({'faithful' if faithful else 'not faithful'})")
        if faithful:
            return light_gap, point["declared_iops"], max(*gaps, point["gap_us"]), points
    return light_gap, 0.0, max(gaps), points
