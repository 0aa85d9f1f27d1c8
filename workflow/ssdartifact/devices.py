"""Declared devices (configs/devices.yaml): resolving a declaration, checking it
before use, and opening it for an experiment.

Opening yields a directory to run I/O in; nothing outside the declared path (a
file device's directory, or an emulated device's folder under scratch/emussd/)
is ever written. An emulated device is mounted for the experiment and always
unmounted afterwards, also when the experiment fails or is interrupted.

An emulated device faster than this machine can emulate runs with a time
dilation D (emussd.capacity chooses it from a calibration of the machine,
cached under scratch/emussd/calibration/): every service time D times longer
on the wall clock. Results that carry absolute time are converted back to the
declared time scale by `to_declared_time`, the one place for it, and carry D
in a column and in their provenance.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from . import REPO_ROOT, blockdev, config

EMULATED_ROOT = REPO_ROOT / "scratch" / "emussd"
DEVICE_LOCKS = REPO_ROOT / "scratch" / "device-locks"  # one experiment per device at a time
DEVICE_MODEL_KEYS = ("read_latency_us", "alpha", "k_r", "k_w", "page_size", "channels")
TIME_DILATION_COLUMN = {"time_dilation": "emulated devices: the factor emussd slowed every service time by on "
                                         "this machine (times and rates here are converted back to the declared "
                                         "time scale); 1 for real devices"}


class DeviceError(RuntimeError):
    """A device does not match its declaration, lacks space, or cannot be opened."""


def declaration(name: str) -> dict:
    """A device's declaration; an emulated device's preset is merged under its own keys."""
    devices = {d["name"]: d for d in config.load("devices.yaml")["devices"]}
    if name not in devices:
        raise DeviceError(f"device {name!r} is not declared in configs/devices.yaml; declared: {', '.join(devices)}")
    device = dict(devices[name])
    if device["kind"] == "emulated" and "preset" in device:
        presets = config.load("emussd_presets.yaml")["presets"]
        if device["preset"] not in presets:
            raise DeviceError(f"configs/devices.yaml: device {name!r}: preset {device['preset']!r} does not exist; "
                              f"presets: {', '.join(presets)} (configs/emussd_presets.yaml)")
        preset = presets[device["preset"]]
        device = {**{k: preset[k] for k in DEVICE_MODEL_KEYS if k in preset}, **device}
    return device


def emulated_model(device: dict) -> dict:
    """The device-model parameters of an emulated device, with emussd's defaults filled in."""
    missing = [k for k in ("read_latency_us", "alpha", "k_r", "k_w") if k not in device]
    if missing:
        raise DeviceError(f"emulated device {device['name']!r} lacks {', '.join(missing)} (and has no preset)")
    return {"page_size": 4096, **{k: device[k] for k in DEVICE_MODEL_KEYS if k in device}}


def emulation(device: dict, binary: Path, *, saturating: bool = True, progress=None):
    """How emussd emulates `device` on this machine: (an emussd.capacity.Dilation whose factor is the
    time dilation, the calibration it comes from). The calibration is this host's, measured first
    when there is none.

    `saturating`: the experiment offers the device up to 4 x k concurrent I/Os (a fio thread sweep),
    so its declared peak must fit the machine: the factor is the calibration's. Any other experiment
    (a database, a graph engine) runs at the declared time scale (factor 1, or the declared
    time_dilation): it offers far fewer I/Os at once, and a dilation would not slow its CPU work
    down, so it would change what it measures; whether emussd kept up is checked after the run
    (`fidelity`). Raises DeviceError, with the numbers, when the device cannot be emulated."""
    from emussd import capacity  # noqa: PLC0415 (only emulated devices need it)

    try:
        calibration = capacity_calibration(binary, progress)
    except capacity.EmussdError as error:
        raise DeviceError(f"device {device['name']!r}: emussd's calibration of this machine failed: {error}") from error
    plan = capacity.dilation(emulated_model(device), calibration)
    where = f"configs/devices.yaml: device {device['name']!r}"
    if plan.problem:
        raise DeviceError(f"{where} cannot be emulated faithfully on this machine: {plan.problem}; "
                          f"{plan.describe()}. Declare a longer read_latency_us or a smaller k_r / k_w.")
    declared = device.get("time_dilation")
    if declared is not None and saturating and declared < plan.factor:
        raise DeviceError(f"{where} declares time_dilation {declared:g}, but this machine needs at least "
                          f"{plan.describe()}. Raise time_dilation or remove it (then it is chosen).")
    factor = declared if declared is not None else plan.factor if saturating else 1.0
    return dataclasses.replace(plan, factor=float(factor)), calibration


LATE_SHARE_WARNED = 0.10  # mean lateness beyond this share of the mean service time: not faithful


def fidelity(stats: dict) -> dict:
    """Whether emussd kept up during a run, from its counters: per operation, the mean service time
    and how late requests completed after it on average (the sleep's overshoot when all is well;
    more when the machine could not keep up), and a warning when that exceeds LATE_SHARE_WARNED."""
    facts, warnings = {}, []
    for op in ("read", "write"):
        counters = stats["ops"][op]
        if not counters["count"]:
            continue
        service = counters["declared_service_time_us"] / counters["count"]
        late = counters["late_time_us"] / counters["count"]
        facts[op] = {"count": counters["count"], "mean_service_us": round(service, 1), "mean_late_us": round(late, 1),
                     "overruns": counters["overruns"]}
        if service and late > LATE_SHARE_WARNED * service:
            warnings.append(f"{op}s completed on average {late:.0f} us ({late / service:.0%}) after their "
                            f"{service:.0f} us service time")
    return {**facts, "warning": "; ".join(warnings)}


MIN_IOS_PER_POINT = 10  # a fio point must see at least this many requests per thread


def check_emulation(profile: dict, progress=None) -> tuple[list[str], list[str]]:
    """check-config's look at the profile's emulated devices: (problems, notes). Calibrates this
    machine when that was not done yet for the built emussd (once per host: 10 to 20 s). A device
    that a thread sweep uses (the characterization, emussd's saturation benchmark) must fit with
    its time dilation, and its slowest request must still fit MIN_IOS_PER_POINT times in a fio point."""
    from emussd import harness  # noqa: PLC0415

    emulated = [declaration(name) for name in profile["devices"] if declaration(name)["kind"] == "emulated"]
    if not emulated:
        return [], []
    binary = harness.DEFAULT_BUILD_DIR / "emussd"
    later = "the workflow checks each emulated device, and chooses its time dilation, when it first mounts it"
    if not harness.fuse_available():
        return [], [f"devices: not checked here, /dev/fuse is absent; {later}"]
    if not binary.exists():
        return [], [f"devices: not checked yet, emussd is not built ({binary}); {later} (or build it, "
                    "see systems/emussd/README.md, and run check-config again)"]
    swept = set(profile["characterize"]["devices"]) | {config.load("experiments/emussd.yaml")["saturation"]["device"]}
    runtime_ms = profile["fio_point"]["runtime_ms"]
    problems, notes = [], []
    for device in emulated:
        try:
            plan, _ = emulation(device, binary, saturating=True, progress=progress)
        except DeviceError as error:
            problems.append(str(error))
            continue
        model = emulated_model(device)
        slowest_ms = model["read_latency_us"] * max(1.0, model["alpha"]) * plan.factor / 1000
        if device["name"] in swept and slowest_ms * MIN_IOS_PER_POINT > runtime_ms:
            problems.append(f"configs/devices.yaml: device {device['name']!r}: with {plan.describe()}, its slowest "
                            f"page takes {slowest_ms:g} ms on the wall clock, so a fio point of the profile's "
                            f"fio_point.runtime_ms {runtime_ms} sees fewer than {MIN_IOS_PER_POINT} requests per "
                            f"thread; raise runtime_ms to at least {slowest_ms * MIN_IOS_PER_POINT:.0f} or declare a "
                            "slower device (a longer read_latency_us, smaller k)")
        else:
            notes.append(f"device {device['name']}: in thread sweeps, {plan.describe()}")
    notes.append("devices: a database or a graph engine runs every emulated device undilated (its own CPU time "
                 "would not be slowed down); emussd's counters say after each run whether the machine kept up")
    return problems, notes


def capacity_calibration(binary: Path, progress=None):
    """This host's emussd calibration (a seam the tests replace: a real one takes 10 to 20 s)."""
    from emussd import capacity  # noqa: PLC0415

    return capacity.calibration(binary, progress=progress)


def to_declared_time(rows: list[dict], time_dilation: float, times: tuple[str, ...] = (),
                     rates: tuple[str, ...] = ()) -> list[dict]:
    """Rows measured on a device run with `time_dilation` D, on the declared time scale: each
    column in `times` divided by D, each in `rates` multiplied by D, and the column
    time_dilation added. Ratios (alpha, k, speedups) need no conversion."""
    converted = []
    for row in rows:
        row = {**row, "time_dilation": time_dilation}
        for column in times:
            if row.get(column) not in (None, ""):
                row[column] = row[column] / time_dilation
        for column in rates:
            if row.get(column) not in (None, ""):
                row[column] = row[column] * time_dilation
        converted.append(row)
    return converted


@dataclass
class OpenDevice:
    name: str
    declaration: dict
    io_dir: Path | None       # where the experiment's I/O goes (a directory), or None for a block device
    prepare_dir: Path | None  # where files may be created beforehand without going through the device
    block_path: Path | None = None  # a raw block device, checked by blockdev.check_block_device
    time_dilation: float = 1.0      # emulated devices: emussd's wall clock runs this much slower
    emulation: dict | None = None   # emulated devices: D and the calibration it was chosen from (provenance)
    # Call after changing files through prepare_dir that were used through io_dir: the kernel
    # caches an emulated SSD's file sizes and names (FUSE), so it is mounted again, over the same files.
    refresh: Callable[[], None] = lambda: None

    def provenance(self) -> dict:
        """The declaration, with the time dilation and its reasons for an emulated device."""
        return {**self.declaration, **({"emulation": self.emulation} if self.emulation else {})}


def _check_space(path: Path, needed_bytes: int, limit: int, name: str) -> None:
    if needed_bytes > limit:
        raise DeviceError(f"device {name!r}: the experiment needs {needed_bytes} bytes but the declaration allows "
                          f"max_bytes={limit}; raise max_bytes in configs/devices.yaml or shrink the experiment")
    free = shutil.disk_usage(path).free
    if free < needed_bytes:
        raise DeviceError(f"device {name!r}: {path} has {free} bytes free, the experiment needs {needed_bytes}")


@contextmanager
def opened(name: str, needed_bytes: int, *, emussd_binary: Path | None = None, stats_out: Path | None = None,
           saturating: bool = False) -> Iterator[OpenDevice]:
    """The declared device, ready for an experiment's I/O (see `emulation` for `saturating`). One
    experiment at a time: a second one waits until the first has let the device go."""
    device = declaration(name)
    if name in _HELD_HERE:  # this process holds it already (ACE's WAL on the device it measures)
        yield from _ready(name, device, needed_bytes, emussd_binary, stats_out, saturating)
        return
    DEVICE_LOCKS.mkdir(parents=True, exist_ok=True)
    with _held(DEVICE_LOCKS / f"{name}.lock", f"device {name!r} is in use by another experiment: waiting"):
        _HELD_HERE.add(name)
        try:
            yield from _ready(name, device, needed_bytes, emussd_binary, stats_out, saturating)
        finally:
            _HELD_HERE.discard(name)


_HELD_HERE: set[str] = set()  # devices whose lock this process holds (a second flock would wait on it)


def _ready(name: str, device: dict, needed_bytes: int, emussd_binary: Path | None, stats_out: Path | None,
           saturating: bool) -> Iterator[OpenDevice]:
    if device["kind"] == "file":
        directory = (REPO_ROOT / device["path"]).resolve()
        directory.mkdir(parents=True, exist_ok=True)
        _check_space(directory, needed_bytes, device["max_bytes"], name)
        work = directory / "ssd-artifact-io"
        work.mkdir(exist_ok=True)
        try:
            yield OpenDevice(name, device, work, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)  # the test files never outlive the experiment
    elif device["kind"] == "emulated":
        if emussd_binary is None:
            raise DeviceError(f"device {name!r} is emulated: the experiment must be given the emussd binary")
        yield from _mounted(name, device, needed_bytes, emussd_binary, stats_out, saturating)
    else:
        path = Path(os.path.realpath(device["path"]))
        try:
            blockdev.check_block_device(device)
            size = blockdev.block_device_size(str(path))
        except (blockdev.BlockDeviceRefused, ValueError) as error:
            raise DeviceError(str(error)) from error
        if needed_bytes > min(size, device["max_bytes"]):
            raise DeviceError(f"device {name!r}: the experiment needs {needed_bytes} bytes of {device['path']}, "
                              f"which has {size} bytes and allows max_bytes={device['max_bytes']}; raise max_bytes "
                              "in configs/devices.yaml (within the device) or shrink the experiment")
        yield OpenDevice(name, device, None, None, block_path=path)


def _mounted(name: str, device: dict, needed_bytes: int, emussd_binary: Path, stats_out: Path | None,
             saturating: bool) -> Iterator[OpenDevice]:
    """The emulated device mounted, from an empty backing store (the caller holds its lock)."""
    from emussd.harness import Mount  # noqa: PLC0415 (only experiments on emulated devices need it)

    plan, calibration = emulation(device, emussd_binary, saturating=saturating)
    facts = {"time_dilation": plan.factor, "reason": plan.describe(), "saturating": saturating,
             "calibration": {"capacity_iops": calibration.capacity_iops,
                             "round_trip_us": calibration.round_trip_us, "host": calibration.host}}
    root = EMULATED_ROOT / name
    shutil.rmtree(root / "backing", ignore_errors=True)  # each experiment starts from an empty device
    root.mkdir(parents=True, exist_ok=True)
    _check_space(root, needed_bytes, needed_bytes, name)
    with Mount(emussd_binary, root, stats_out=stats_out, time_dilation=plan.factor,
               **emulated_model(device)) as mount:
        (mount.backing / "io").mkdir(exist_ok=True)

        def refresh():
            _check_fidelity(name, mount, facts)
            mount.stop()
            mount.start()

        yield OpenDevice(name, device, mount.mountpoint / "io", mount.backing / "io",
                         time_dilation=plan.factor, emulation=facts, refresh=refresh)
        _check_fidelity(name, mount, facts)
    shutil.rmtree(root / "backing", ignore_errors=True)


def _check_fidelity(name: str, mount, facts: dict) -> None:
    """Record whether emussd kept up with the mount's requests so far, and warn when it did not."""
    facts["fidelity"] = fidelity(mount.stats())
    if facts["fidelity"]["warning"]:
        print(f"warning: emussd did not keep up with device {name!r} on this machine: "
              f"{facts['fidelity']['warning']}", file=sys.stderr)


@contextmanager
def _held(lock_path: Path, waiting: str):
    """An exclusive lock on lock_path for the block (released when the process ends, however it
    ends); says once on stderr that it waits when another process holds it."""
    with open(lock_path, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(waiting, file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def declared_block_devices() -> list[dict]:
    """Every declared raw block device, checked (a step in a container is given exactly these)."""
    declared = [d for d in config.load("devices.yaml")["devices"] if d["kind"] == "block"]
    for device in declared:
        try:
            blockdev.check_block_device(device)
        except blockdev.BlockDeviceRefused as error:
            raise DeviceError(str(error)) from error
    return declared


def unmount_stale() -> list[Path]:
    """Unmount emussd mounts left behind by an interrupted run (called when the workflow starts and
    ends). A mount whose emussd still has the process that started it is another run's, in use
    (two workflows may run at once on disjoint outputs), and is left alone."""
    left = []
    if EMULATED_ROOT.exists():
        for mountpoint in EMULATED_ROOT.glob("*/mnt"):
            if os.path.ismount(mountpoint) and not _held_by_a_live_run(mountpoint):
                subprocess.run(["fusermount3", "-uz", str(mountpoint)], capture_output=True)
                left.append(mountpoint)
    return left


def _held_by_a_live_run(mountpoint: Path) -> bool:
    """Whether the emussd serving `mountpoint` was started by a process that is still alive (the
    harness runs emussd as its child; a left-over emussd was detached, or lost its parent)."""
    wanted = str(mountpoint).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
            if b"--mountpoint" not in arguments or arguments[arguments.index(b"--mountpoint") + 1] != wanted:
                continue
            status = (entry / "status").read_text()
        except (OSError, IndexError):
            continue
        parent = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
        return parent > 1 and Path(f"/proc/{parent}").exists()
    return False
