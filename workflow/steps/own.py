"""Your own SSD in one command: `make characterize DEVICE=...` (docs/your-own-ssd.md).

`declare` turns what the user typed into a device declaration, checks it with the artifact's
own checks (preflight.file_device_problems, blockdev.check_block_device) and writes it to
configs/devices.local.yaml, which git ignores. Nothing runs when a check fails: the one
message says what to fix. The `own` profile (ssdartifact.ownprofile) then runs on that device.

A directory on a mounted file system is the safe default. A raw block device is overwritten,
so it needs DESTRUCTIVE=true, the same opt-in as `destructive: true` in configs/devices.yaml.
"""

from __future__ import annotations

import csv
import difflib
import os
import re
import shutil
import stat
from pathlib import Path

import yaml
from pio import bench
from ssdartifact import REPO_ROOT, blockdev, config, preflight
from ssdartifact.quoting import PATH_CHARACTERS, quoted

DEFAULT_NAME = "my-ssd"
DEFAULT_MAX_BYTES = 2 << 30  # the quick characterization writes about 1 GiB (needed_bytes)
MEDIA = ("flash", "optane", "hdd", "virtual", "unknown")
HEADER = """\
# Your own device, declared by `make characterize` (docs/your-own-ssd.md). Git ignores this file.
# The `own` profile (make reproduce PROFILE=own) runs every experiment that measures a device on it.
# Declare another with `make characterize DEVICE=...`; delete this file to forget it.
"""


class OwnDeviceError(Exception):
    """What the user typed cannot be declared; the message says what to fix."""


def needed_bytes() -> int:
    """What the own profile's characterization writes on the device (its files, at most)."""
    max_threads = config.load_profile("quick")["characterize"]["max_threads"]
    return bench.needed_bytes(config.load("experiments/pio.yaml"), max_threads)


def declaration(device: str, *, name: str = "", destructive: str = "", force: str = "", medium: str = "",
                max_bytes: str = "", system: blockdev.System | None = None) -> dict:
    """The declaration of DEVICE (a directory, or a raw block device with DESTRUCTIVE=true), checked."""
    if not device:
        raise OwnDeviceError("name the device: make characterize DEVICE=<a directory on your SSD's file system> "
                             "(or DEVICE=/dev/<disk> DESTRUCTIVE=true to overwrite a raw block device)")
    name = name or DEFAULT_NAME
    if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        raise OwnDeviceError(f"NAME={quoted(name)}: use lower-case letters, digits and dashes, starting with a "
                             "letter (e.g. NAME=my-ssd)")
    tracked = [d["name"] for d in config.load("devices.yaml")["devices"] if d not in config.local_devices()]
    if name in tracked:
        raise OwnDeviceError(f"NAME={name}: configs/devices.yaml declares a device of that name already; "
                             "choose another (e.g. NAME=my-ssd)")
    destructive, force = _switch("DESTRUCTIVE", destructive), _switch("FORCE", force)
    if medium and medium not in MEDIA:
        raise OwnDeviceError(f"MEDIUM={quoted(medium)}: allowed values: {', '.join(MEDIA)}")
    limit = _bytes(max_bytes)
    path, shown = Path(os.path.abspath(device)), quoted(device, PATH_CHARACTERS)
    extra = {"medium": medium} if medium else {}
    system = system or blockdev.System()
    try:
        kind = system.stat(system.realpath(str(path))).st_mode
    except FileNotFoundError:
        raise OwnDeviceError(f"DEVICE={shown} does not exist.{_did_you_mean(path)} Give a directory on your "
                             "SSD's mounted file system, or the SSD's block device.") from None
    if stat.S_ISBLK(kind):
        return _block(name, str(path), destructive, force, limit, extra, system)
    if not stat.S_ISDIR(kind):
        what = "a regular file" if stat.S_ISREG(kind) else "neither a directory nor a block device"
        raise OwnDeviceError(f"DEVICE={shown} is {what}. Give a directory on your SSD's mounted file system "
                             "(e.g. its mount point), or the SSD's block device (with DESTRUCTIVE=true).")
    if destructive or force:
        raise OwnDeviceError(f"DEVICE={shown} is a directory: nothing is written raw, so leave out DESTRUCTIVE "
                             "and FORCE (they are for a raw block device).")
    return _directory(name, path, shown, limit or DEFAULT_MAX_BYTES, extra, system)


def _directory(name: str, path: Path, shown: str, limit: int, extra: dict, system: blockdev.System) -> dict:
    held = blockdev.mount_of(str(path), system=system)
    mount = {"mount_point": held[0], "file_system": held[1]} if held else {}
    device = {"name": name, "kind": "file", "path": str(path), **mount, "max_bytes": limit, **extra}
    problems = preflight.file_device_problems(device)
    if not os.access(path, os.W_OK | os.X_OK):
        problems.append(f"DEVICE={shown}: this user may not write there; run as a user who may, or give "
                        "another directory")
    needed, free = needed_bytes(), shutil.disk_usage(path).free
    if min(free, limit) < needed:
        problems.append(f"DEVICE={shown}: the characterization writes {_gib(needed)}, and the directory has "
                        f"{_gib(free)} free (MAX_BYTES {_gib(limit)}); free some space or give another directory")
    if problems:
        raise OwnDeviceError("\n".join(problems))
    return device


def _block(name: str, device: str, destructive: bool, force: bool, limit: int, extra: dict,
           system: blockdev.System) -> dict:
    shown = quoted(device, PATH_CHARACTERS)
    size = blockdev.block_device_size(device, system=system)
    declared = {"name": name, "kind": "block", "path": device, "destructive": True,
                **({"force": True} if force else {}), "max_bytes": min(limit or DEFAULT_MAX_BYTES, size), **extra}
    try:
        blockdev.check_block_device(declared, system=system)
        refused = None
    except blockdev.BlockDeviceRefused as error:
        refused = _as_make_variables(str(error))
    if not destructive:
        raise OwnDeviceError(
            f"DEVICE={shown} is a raw block device, and a characterization overwrites it (up to "
            f"{_gib(declared['max_bytes'])} from its start). To measure it safely, give a directory on a file "
            "system on it instead. To overwrite it, add DESTRUCTIVE=true"
            + (f"; even then it is refused now: {refused}" if refused else "."))
    if refused:
        raise OwnDeviceError(refused)
    if declared["max_bytes"] < needed_bytes():
        raise OwnDeviceError(f"DEVICE={shown} holds {_gib(declared['max_bytes'])} (MAX_BYTES or its size), and "
                             f"the characterization writes {_gib(needed_bytes())}; give a larger device")
    return declared


def declare(device: dict) -> Path:
    """Write `device` as the one device of configs/devices.local.yaml (replacing any before)."""
    text = HEADER + yaml.safe_dump({"devices": [device]}, sort_keys=False)
    target = config.local_devices_file()
    config.validate(yaml.safe_load(text), "devices", str(target))  # what the workflow reads back
    partial = target.with_suffix(".yaml.partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(target)
    return target


def results_of(name: str) -> Path:
    return REPO_ROOT / "results" / "pio" / "devices" / name / "alpha_k.csv"


def summary(name: str) -> str:
    """alpha and k of the device, from its characterization's alpha_k.csv, and where the results are."""
    path = results_of(name)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    lines = [f"Device {name}: alpha and k measured (thesis Chapter 2)",
             f"{'pattern':<11}{'block':>7}{'alpha':>8}{'k_r':>6}{'k_w':>6}  read latency (1 thread)"]
    for row in rows:
        bound = {"k_r": row["read_saturated"] != "true", "k_w": row["write_saturated"] != "true"}
        k = {key: f"{'>=' if bound[key] else ''}{row[key]}" for key in bound}
        lines.append(f"{row['pattern']:<11}{int(row['block_size']):>7}{float(row['alpha']):>8.2f}{k['k_r']:>6}"
                     f"{k['k_w']:>6}  {float(row['read_lat_1_us']):.0f} us")
    directory = path.parent.relative_to(REPO_ROOT)
    timed = REPO_ROOT / "results" / "benchmarks" / "characterize_device" / f"{name}.tsv"
    if timed.exists():  # Snakemake's record of the job: its first column is seconds
        seconds = float(timed.read_text(encoding="utf-8").splitlines()[1].split("\t")[0])
        lines.append(f"The characterization took {seconds / 60:.1f} minutes ({timed.relative_to(REPO_ROOT)}).")
    lines += ["(>= : no plateau below the thread limit, so k is a lower bound)" if any(
                  "false" in (row["read_saturated"], row["write_saturated"]) for row in rows) else "",
              f"Results: {directory}/ (alpha_k.csv, sweeps.csv, ...; raw fio output: results/raw/pio/{name}/)",
              "Every figure on this device: make reproduce PROFILE=own"]
    return "\n".join(line for line in lines if line)


def _as_make_variables(message: str) -> str:
    """blockdev's refusal, saying what to type to `make characterize` rather than what to write in
    configs/devices.yaml."""
    message = re.sub(r"set force: true in configs/devices\.yaml for \S+", "add FORCE=true", message)
    return message.replace(" in configs/devices.yaml", "").replace("force: true", "FORCE=true")


def _switch(variable: str, value: str) -> bool:
    if value in ("", "false"):
        return False
    if value == "true":
        return True
    raise OwnDeviceError(f"{variable}={quoted(value)}: allowed values: true, or leave it out")


def _bytes(value: str) -> int:
    if not value:
        return 0
    match = re.fullmatch(r"(\d+)([KMGT]i?B?)?", value.strip())
    if not match:
        raise OwnDeviceError(f"MAX_BYTES={quoted(value)}: give a number of bytes, e.g. MAX_BYTES=4G")
    unit = (match[2] or " ")[0]
    return int(match[1]) << {"K": 10, "M": 20, "G": 30, "T": 40}.get(unit, 0)


def _gib(value: int) -> str:
    return f"{value / (1 << 30):.1f} GiB"


def _did_you_mean(path: Path) -> str:
    """The existing path closest to a mistyped one, if any."""
    parent = path
    while not parent.exists():
        parent = parent.parent
    try:
        names = os.listdir(parent)
    except OSError:
        return ""
    missing = path.relative_to(parent).parts[0]
    close = difflib.get_close_matches(missing, names, n=1)
    return f" Did you mean {quoted(str(parent / close[0]), PATH_CHARACTERS)}?" if close else ""
