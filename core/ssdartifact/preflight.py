"""The host preflight (DESIGN.md, "Declared devices"): before anything runs, each device the profile
uses is checked against this machine. A raw block device must pass blockdev's safety checks, a
loop device needs root and its tools, and a file device's directory must exist on the file system
its declaration names. config.py validates the files; this module checks what they declare."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from . import REPO_ROOT, blockdev, config
from .quoting import PATH_CHARACTERS, quoted


def check(profile: str) -> dict[str, Any]:
    """The configs validated (config.validation_problems), then this host checked for the profile's
    devices; one error with every problem of both. Returns the loaded config files."""
    loaded, chosen, problems = config.validation_problems(profile)
    if chosen is not None and "devices.yaml" in loaded:
        declared = loaded["devices.yaml"]["devices"]
        problems += block_device_problems(declared, chosen["devices"])
        # A device on a cluster's node is checked there, when an experiment opens it (devices.opened).
        problems += [problem for device in declared
                     if device["kind"] == "file" and device["name"] in chosen["devices"] and "cluster" not in device
                     for problem in file_device_problems(device)]
    if problems:
        raise config.ConfigError("\n".join(problems))
    return loaded


def block_device_problems(declared: list[dict], used: list[str]) -> list[str]:
    """The safety checks of every raw block device the profile uses (blockdev.check_block_device),
    and what a loop device needs, run before anything else: a refused device must not stop the run
    after other jobs have run."""
    problems = []
    for device in declared:
        if device["kind"] == "block" and device["name"] in used:
            try:
                blockdev.check_block_device(device)
            except blockdev.BlockDeviceRefused as error:
                problems.append(f"configs/devices.yaml: {error}")
        if device["kind"] == "loop" and device["name"] in used:
            mkfs = f"mkfs.{device['file_system']}" if device.get("file_system") else None
            missing = [need for need, ok in (("root", os.geteuid() == 0),
                                             ("/dev/loop-control", os.path.exists("/dev/loop-control")),
                                             ("losetup", shutil.which("losetup")),
                                             (mkfs, mkfs is None or shutil.which(mkfs)))
                       if not ok]
            if missing:
                problems.append(f"configs/devices.yaml: loop device {quoted(device['name'])} is used by the profile, "
                                f"but making it needs {', '.join(missing)} (natively, as root, with util-linux and "
                                "e2fsprogs); run as root or take it out of the profile's devices")
    return problems


ARTIFACT_SCRATCH = REPO_ROOT / "scratch"  # the artifact's own work folder: not in git, made as it is needed


def artifact_owned(path: str) -> bool:
    """Whether a file device's declared path is inside the repository's scratch/ folder: the
    artifact's own (configs/devices.yaml's local-disk; a fresh clone has no scratch/), made when
    the device is first opened. Any other path is the user's, and is never made."""
    return ARTIFACT_SCRATCH in Path(os.path.normpath(REPO_ROOT / path)).parents


def file_device_problems(device: dict, *, mounts: bool = True) -> list[str]:
    """What keeps a `file` device from being measured where it is declared. Its path must be a
    directory that exists (the artifact's own may be missing: artifact_owned), held by the file
    system its mount_point and file_system name, when it names them. `mounts`: check those two
    (False inside a step's container, where the host's mounts are not visible: the host checked them)."""
    where, declared = f"configs/devices.yaml: device {quoted(device['name'])}", device["path"]
    path, shown = REPO_ROOT / declared, quoted(declared, PATH_CHARACTERS)
    if not path.exists():
        if artifact_owned(declared):
            return []
        return [f"{where}: key path: {shown} does not exist. Make that directory on the file system to measure, or "
                "correct the path; the workflow never creates it, so that a mistyped or unmounted path is not "
                "measured on the disk under it."]
    if not path.is_dir():
        what = "a regular file, not a directory" if path.is_file() else "not a directory"
        return [f"{where}: key path: {shown} is {what}. Declare a directory on the file system to measure."]
    if not mounts or ("mount_point" not in device and "file_system" not in device):
        return []
    held = blockdev.mount_of(str(path))
    if held is None:
        return [f"{where}: key path: {shown} is on no file system of /proc/self/mountinfo, so its mount_point and "
                "file_system cannot be checked; run where /proc is mounted"]
    mount_point, file_system = held
    mounted, wanted = quoted(mount_point, PATH_CHARACTERS), device.get("mount_point")
    problems = []
    if wanted is not None and os.path.realpath(wanted) != mount_point:
        wanted = quoted(wanted, PATH_CHARACTERS)
        problems.append(f"{where}: key mount_point: path {shown} is on the file system mounted at {mounted}, not at "
                        f"{wanted}. Mount the device at {wanted}, or correct mount_point.")
    wanted = device.get("file_system")  # a file-system type: its pattern allows nothing to escape
    if wanted is not None and wanted != file_system:
        problems.append(f"{where}: key file_system: path {shown} is on a file system of type {file_system} (mounted "
                        f"at {mounted}), not {wanted}. Put the path on a file system of type {wanted}, or correct "
                        "file_system.")
    return problems
