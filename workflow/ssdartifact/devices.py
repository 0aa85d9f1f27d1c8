"""Declared devices (configs/devices.yaml): resolving a declaration, checking it
before use, and opening it for an experiment.

Opening yields a directory to run I/O in; nothing outside the declared path (a
file device's directory, or an emulated device's folder under scratch/emussd/)
is ever written. An emulated device is mounted for the experiment and always
unmounted afterwards, also when the experiment fails or is interrupted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from . import REPO_ROOT, blockdev, config

EMULATED_ROOT = REPO_ROOT / "scratch" / "emussd"
DEVICE_MODEL_KEYS = ("read_latency_us", "alpha", "k_r", "k_w", "page_size", "channels")


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


@dataclass
class OpenDevice:
    name: str
    declaration: dict
    io_dir: Path | None       # where the experiment's I/O goes (a directory), or None for a block device
    prepare_dir: Path | None  # where files may be created beforehand without going through the device
    block_path: Path | None = None  # a raw block device, checked by blockdev.check_block_device


def _check_space(path: Path, needed_bytes: int, limit: int, name: str) -> None:
    if needed_bytes > limit:
        raise DeviceError(f"device {name!r}: the experiment needs {needed_bytes} bytes but the declaration allows "
                          f"max_bytes={limit}; raise max_bytes in configs/devices.yaml or shrink the experiment")
    free = shutil.disk_usage(path).free
    if free < needed_bytes:
        raise DeviceError(f"device {name!r}: {path} has {free} bytes free, the experiment needs {needed_bytes}")


@contextmanager
def opened(name: str, needed_bytes: int, *, emussd_binary: Path | None = None,
           stats_out: Path | None = None) -> Iterator[OpenDevice]:
    device = declaration(name)
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
        from emussd.harness import Mount  # noqa: PLC0415 (only experiments on emulated devices need it)

        if emussd_binary is None:
            raise DeviceError(f"device {name!r} is emulated: the experiment must be given the emussd binary")
        root = EMULATED_ROOT / name
        shutil.rmtree(root / "backing", ignore_errors=True)  # each experiment starts from an empty device
        root.mkdir(parents=True, exist_ok=True)
        _check_space(root, needed_bytes, needed_bytes, name)
        with Mount(emussd_binary, root, stats_out=stats_out, **emulated_model(device)) as mount:
            (mount.backing / "io").mkdir(exist_ok=True)
            yield OpenDevice(name, device, mount.mountpoint / "io", mount.backing / "io")
        shutil.rmtree(root / "backing", ignore_errors=True)
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
