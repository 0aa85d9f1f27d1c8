"""Declared devices (configs/devices.yaml): resolving a declaration, checking it
before use, and opening it for an experiment.

Opening yields a directory to run I/O in; nothing outside the declared path (a
file device's directory, or an emulated device's folder under scratch/emussd/)
is ever written. An emulated device is opened by the `Emulator` it is given
(emussd.device: the steps that run experiments pass it), which mounts it for
the experiment and always unmounts it afterwards.

An emulated device that emussd runs with a time dilation D (every service time
D times longer on the wall clock) gives results whose absolute times are
converted back to the declared time scale by `to_declared_time`, the one place
for it; they carry D in a column and in their provenance.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Protocol

from . import REPO_ROOT, blockdev, config

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


def model(name: str) -> dict:
    """The device model (read_latency_us, alpha, k_r, k_w, page_size) named `name`: an emulated
    device of configs/devices.yaml or a preset of configs/emussd_presets.yaml. The one resolution
    every system uses: emussd's mounts, the bufferpool simulator's devices, ReStore's tiers.
    A real device's alpha and k are measured (the characterization), not declared."""
    if name in {d["name"] for d in config.load("devices.yaml")["devices"]}:
        device = declaration(name)
        if device["kind"] != "emulated":
            raise DeviceError(f"device {name!r} is a {device['kind']} device: its alpha and k are measured by the "
                              "characterization, not declared; name an emulated device or a preset")
        return emulated_model(device)
    presets = config.load("emussd_presets.yaml")["presets"]
    if name not in presets:
        raise DeviceError(f"{name!r} is neither a device of configs/devices.yaml nor a preset of "
                          f"configs/emussd_presets.yaml ({', '.join(presets)})")
    return emulated_model({"name": name, **presets[name]})


def emulated_model(device: dict) -> dict:
    """The device-model parameters of an emulated device, with emussd's defaults filled in."""
    missing = [k for k in ("read_latency_us", "alpha", "k_r", "k_w") if k not in device]
    if missing:
        raise DeviceError(f"emulated device {device['name']!r} lacks {', '.join(missing)} (and has no preset)")
    return {"page_size": 4096, **{k: device[k] for k in DEVICE_MODEL_KEYS if k in device}}


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
    # The pages written to the device so far, when the device counts them (emussd does).
    written_pages: Callable[[], int | None] = lambda: None
    written_pages_source: str = "not measured"

    def provenance(self) -> dict:
        """The declaration, with the time dilation and its reasons for an emulated device."""
        return {**self.declaration, **({"emulation": self.emulation} if self.emulation else {})}


class Emulator(Protocol):
    """Opens an emulated device (emussd.device.Emulator is the one implementation)."""

    def mount(self, name: str, device: dict, needed_bytes: int) -> AbstractContextManager[OpenDevice]: ...


def check_space(path: Path, needed_bytes: int, limit: int, name: str) -> None:
    if needed_bytes > limit:
        raise DeviceError(f"device {name!r}: the experiment needs {needed_bytes} bytes but the declaration allows "
                          f"max_bytes={limit}; raise max_bytes in configs/devices.yaml or shrink the experiment")
    free = shutil.disk_usage(path).free
    if free < needed_bytes:
        raise DeviceError(f"device {name!r}: {path} has {free} bytes free, the experiment needs {needed_bytes}")


@contextmanager
def opened(name: str, needed_bytes: int, *, emulator: Emulator | None = None) -> Iterator[OpenDevice]:
    """The declared device, ready for an experiment's I/O (an emulated one through `emulator`). One
    experiment at a time: a second one waits until the first has let the device go."""
    device = declaration(name)
    if name in _HELD_HERE:  # this process holds it already (ACE's WAL on the device it measures)
        yield from _ready(name, device, needed_bytes, emulator)
        return
    DEVICE_LOCKS.mkdir(parents=True, exist_ok=True)
    with _held(DEVICE_LOCKS / f"{name}.lock", f"device {name!r} is in use by another experiment: waiting"):
        _HELD_HERE.add(name)
        try:
            yield from _ready(name, device, needed_bytes, emulator)
        finally:
            _HELD_HERE.discard(name)


_HELD_HERE: set[str] = set()  # devices whose lock this process holds (a second flock would wait on it)


def _ready(name: str, device: dict, needed_bytes: int, emulator: Emulator | None) -> Iterator[OpenDevice]:
    if device["kind"] == "file":
        directory = (REPO_ROOT / device["path"]).resolve()
        directory.mkdir(parents=True, exist_ok=True)
        check_space(directory, needed_bytes, device["max_bytes"], name)
        work = directory / "ssd-artifact-io"
        work.mkdir(exist_ok=True)
        try:
            yield OpenDevice(name, device, work, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)  # the test files never outlive the experiment
    elif device["kind"] == "emulated":
        if emulator is None:
            raise DeviceError(f"device {name!r} is emulated: the experiment must be given the emussd binary")
        with emulator.mount(name, device, needed_bytes) as mounted:
            yield mounted
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
