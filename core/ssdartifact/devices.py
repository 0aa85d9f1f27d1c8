"""Declared devices (configs/devices.yaml): resolving a declaration, checking it
before use, and opening it for an experiment.

Opening yields a directory to run I/O in; nothing outside the declared path (a
file device's directory, or an emulated device's folder under scratch/emussd/)
is ever written. A file device's directory is never made, unless it is the
artifact's own, inside scratch/ (preflight.artifact_owned). An emulated device is
opened by the `Emulator` it is given (emussd.device: the steps that run
experiments pass it), which mounts it for the experiment and always unmounts it
afterwards. A loop device (kind loop) is
made the same way, from a file of the artifact's own (scratch/loop/<name>/):
attached with direct I/O, with a file system made and mounted on it if declared,
and detached and deleted afterwards, so a raw write never reaches anything else.

An emulated device that emussd runs with a time dilation D (every service time
D times longer on the wall clock) gives results whose absolute times are
converted back to the declared time scale by `to_declared_time`, the one place
for it; they carry D in a column and in their provenance.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Protocol

from . import REPO_ROOT, blockdev, config, preflight, provenance

DEVICE_LOCKS = REPO_ROOT / "scratch" / "device-locks"  # one experiment per device at a time
LOOP_DEVICES = REPO_ROOT / "scratch" / "loop"  # each loop device's backing file and mount point
MIB = 1 << 20
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
        directory = file_directory(device)
        check_space(directory, needed_bytes, device["max_bytes"], name)
        work = directory / "ssd-artifact-io"
        work.mkdir(exist_ok=True)
        try:
            yield OpenDevice(name, device, work, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)  # the test files never outlive the experiment
    elif device["kind"] == "loop":
        yield from _loop(name, device, needed_bytes)
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


def file_directory(device: dict) -> Path:
    """A file device's directory, checked here (preflight.file_device_problems): check-config cannot see
    a device on a cluster's node, and a disk may have been unmounted since. Only the artifact's own
    directory is made when missing; a declared one never is."""
    # Inside a step's container the host's mounts are not visible: the host checked them (steps.runtime).
    problems = preflight.file_device_problems(device, mounts=not os.environ.get(provenance.RUNTIME_ENV))
    if problems:
        raise DeviceError("\n".join(problems))
    directory = (REPO_ROOT / device["path"]).resolve()
    directory.mkdir(parents=True, exist_ok=True)  # missing only when it is the artifact's own
    return directory


def _loop(name: str, device: dict, needed_bytes: int) -> Iterator[OpenDevice]:
    """A loop device over a file of its own, written through first (a preallocated file's unwritten
    blocks would read as zeros without touching the disk) and attached in direct-I/O mode (reads and
    writes reach the disk under it, not the page cache), raw or with its declared file system mounted
    (a fifth of the file left to the file system itself)."""
    size = -(-needed_bytes * (5 if device.get("file_system") else 4) // 4 // MIB) * MIB
    if size > device["max_bytes"]:
        raise DeviceError(f"device {name!r}: the experiment needs a {size}-byte loop device, more than its "
                          f"max_bytes={device['max_bytes']} allows; raise max_bytes in configs/devices.yaml or "
                          "shrink the experiment")
    folder = LOOP_DEVICES / name
    folder.mkdir(parents=True, exist_ok=True)
    image, mount = folder / "device.img", folder / "mnt"
    _detach_left_over(image, mount)
    check_space(folder, size, size, name)
    try:
        _run_for(name, ["dd", "if=/dev/zero", f"of={image}", f"bs={MIB}", f"count={size // MIB}", "oflag=direct",
                        "conv=fsync", "status=none"])
        node = _run_for(name, ["losetup", "--direct-io=on", "--find", "--show", str(image)]).strip()
    except DeviceError:
        image.unlink(missing_ok=True)
        raise
    mounted = False
    try:
        direct = Path(f"/sys/block/{Path(node).name}/loop/dio").read_text().strip() == "1"
        if not direct:
            raise DeviceError(f"device {name!r}: the file system under {folder} refused direct I/O to the loop "
                              f"device's file, so its reads would come from the page cache; put scratch/ on a disk")
        opened = {**device, "loop": {"node": node, "backing_file": str(image.relative_to(REPO_ROOT)),
                                     "bytes": size, "direct_io": direct}}
        if device.get("file_system"):
            # inode tables and journal written now: lazily, the kernel would write them during the measurement
            _run_for(name, ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", node])
            mount.mkdir(exist_ok=True)
            _run_for(name, ["mount", "-o", "noatime", node, str(mount)])
            mounted = True
            work = mount / "ssd-artifact-io"
            work.mkdir()
            yield OpenDevice(name, opened, work, work)
        else:
            yield OpenDevice(name, opened, None, None, block_path=Path(node))
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=False)
        subprocess.run(["losetup", "--detach", node], check=False)
        image.unlink(missing_ok=True)


def _detach_left_over(image: Path, mount: Path) -> None:
    """What a killed run left of this device: its mount and any loop device still on its file."""
    if os.path.ismount(mount):
        subprocess.run(["umount", str(mount)], check=False)
    if image.exists():
        listed = subprocess.run(["losetup", "--noheadings", "--output", "NAME", "--associated", str(image)],
                                capture_output=True, text=True)
        for node in listed.stdout.split():
            subprocess.run(["losetup", "--detach", node], check=False)
        image.unlink()


def _run_for(name: str, command: list[str]) -> str:
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except FileNotFoundError:
        raise DeviceError(f"device {name!r}: {command[0]} is not installed (util-linux, e2fsprogs)") from None
    if result.returncode != 0:
        raise DeviceError(f"device {name!r}: {' '.join(command)} failed: {result.stderr.strip()} (a loop device "
                          "needs root and /dev/loop-control, natively: not in a container)")
    return result.stdout


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
