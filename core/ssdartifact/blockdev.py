"""Safety checks before a benchmark may write to a raw block device declared in
configs/devices.yaml (kind: block).

A benchmark on a raw device overwrites it, so check_block_device() refuses
unless every check passes:

1. the declaration says destructive: true;
2. the path exists and is a block device;
3. nothing uses the device: neither it, nor a partition of it, nor the disk it
   is a partition of, is mounted, active swap, or held by LVM, md or dm-crypt
   (force: true does not override this: live data would be destroyed);
4. it carries no file-system, RAID, LVM or partition-table signature, unless
   the declaration says force: true.

Every refusal names the device and its path, says why, and says how to proceed.
All access to the machine goes through System, so that tests can pass a fake.
mount_of() reads the same mount table for a `file` device: which file system holds its path.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

SYS_BLOCK = "/sys/class/block"
MOUNTINFO = "/proc/self/mountinfo"
SWAPS = "/proc/swaps"
SECTOR = 512  # /sys/class/block/<name>/size counts 512-byte sectors, whatever the device's block size


class BlockDeviceRefused(RuntimeError):
    """A declared block device may not be written to; the message says why and how to proceed."""


@dataclass(frozen=True)
class BlockDev:
    """One entry of /sys/class/block."""

    name: str                 # the kernel's name, e.g. nvme1n1p2
    devno: int                # os.makedev(major, minor): compared with st_rdev, never with names
    disk: str | None          # the disk this is a partition of; None for a whole device
    holders: tuple[str, ...]  # devices built on it (LVM, md, dm-crypt): /sys/class/block/<name>/holders/
    sectors: int              # size in 512-byte sectors


class System:
    """The machine as the checks see it. Each method is one kind of access to the
    real system, so that a test can subclass this and answer from a fixed picture."""

    def realpath(self, path: str) -> str:
        # A stable name such as /dev/disk/by-id/... is a symlink to the kernel's node.
        return os.path.realpath(path)

    def stat(self, path: str) -> os.stat_result:
        return os.stat(path)

    def mountinfo(self) -> str:
        return Path(MOUNTINFO).read_text()

    def swaps(self) -> str:
        return Path(SWAPS).read_text()

    def block_devices(self) -> list[BlockDev]:
        """Every block device the kernel knows, read from /sys/class/block."""
        devices = []
        for name in os.listdir(SYS_BLOCK):
            entry = os.path.join(SYS_BLOCK, name)
            try:
                major, minor = Path(entry, "dev").read_text().split(":")
                # A partition has a `partition` file, and its sysfs directory lies inside its disk's.
                disk = (os.path.basename(os.path.dirname(os.path.realpath(entry)))
                        if os.path.exists(os.path.join(entry, "partition")) else None)
                holders = tuple(sorted(os.listdir(os.path.join(entry, "holders"))))
                sectors = int(Path(entry, "size").read_text())
            except FileNotFoundError:
                continue  # the device went away while we looked
            devices.append(BlockDev(name, os.makedev(int(major), int(minor)), disk, holders, sectors))
        return devices

    def blkid(self, path: str) -> subprocess.CompletedProcess:
        """Low-level probe (-p: the device itself, not blkid's cache) for signatures.
        Raises FileNotFoundError when blkid (util-linux) is not installed."""
        return subprocess.run(["blkid", "-p", "-o", "export", path], capture_output=True, text=True)

    def busy(self, path: str) -> bool:
        """Whether the kernel refuses to open the device exclusively (EBUSY). It does so
        for a device mounted in any mount namespace, active swap, or claimed by md, LVM,
        dm-crypt or btrfs: uses /proc/self/mountinfo cannot show (the mounts of another
        container, the other members of a multi-device btrfs)."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
        except OSError as error:
            # Any other failure (e.g. no permission to open it) says nothing about use;
            # the checks on mounts, swap and holders still apply.
            return error.errno == errno.EBUSY
        os.close(fd)
        return False


def check_block_device(device: dict, *, system: System | None = None) -> None:
    """Raise BlockDeviceRefused unless the declared block device may be overwritten."""
    system = system or System()
    name = device.get("name", "<unnamed>")
    path = device.get("path")

    if device.get("destructive") is not True:
        raise BlockDeviceRefused(
            f"block device {name!r} ({path}) is not declared destructive, and a benchmark overwrites it: "
            f"set destructive: true in configs/devices.yaml for {name} only if every byte on {path} "
            f"may be overwritten")
    if not path:
        raise BlockDeviceRefused(f"block device {name!r} has no path: set path: (e.g. /dev/disk/by-id/...) "
                                 f"for {name} in configs/devices.yaml")

    real = system.realpath(path)
    where = f"block device {name!r} ({path})" if real == path else f"block device {name!r} ({path} -> {real})"
    try:
        st = system.stat(real)
    except FileNotFoundError:
        raise BlockDeviceRefused(
            f"{where} does not exist: correct path for {name} in configs/devices.yaml (a name under "
            f"/dev/disk/by-id/ does not change between boots), or attach the device") from None
    except OSError as error:
        raise BlockDeviceRefused(f"{where} cannot be examined ({error}): run as a user who may read it") from None
    if not stat.S_ISBLK(st.st_mode):
        raise BlockDeviceRefused(
            f"{where} is not a block device ({_kind(st.st_mode)}): set path for {name} in configs/devices.yaml "
            f"to a block device such as /dev/nvme1n1, or declare a directory as kind: file")

    uses = _uses(system, real, st.st_rdev, where)
    if uses:
        raise BlockDeviceRefused(
            f"{where} is in use, and a benchmark would destroy live data: {'; '.join(uses)}. Release it "
            f"first, or declare another device in configs/devices.yaml (force: true does not override this)")

    _check_signatures(system, device, name, real, where)


def block_device_size(path: str, *, system: System | None = None) -> int:
    """The size in bytes of the block device at path (symlinks resolved), from
    /sys/class/block/<name>/size; used to check that an experiment fits."""
    system = system or System()
    real = system.realpath(path)
    st = system.stat(real)
    if not stat.S_ISBLK(st.st_mode):
        raise ValueError(f"{path} is not a block device ({_kind(st.st_mode)})")
    target = _find(system.block_devices(), st.st_rdev)
    if target is None:
        raise ValueError(f"{path}: device {_numbers(st.st_rdev)} is not listed in {SYS_BLOCK}")
    return target.sectors * SECTOR


def _uses(system: System, real: str, rdev: int, where: str) -> list[str]:
    """What uses the device: each item says what and how to release it."""
    devices = system.block_devices()
    target = _find(devices, rdev)
    if target is None:
        raise BlockDeviceRefused(
            f"{where}: the kernel lists no block device {_numbers(rdev)} in {SYS_BLOCK}, so its partitions, "
            f"mounts and holders cannot be checked: run where /sys is mounted")
    # Writing to a disk destroys its partitions; writing to a partition of a disk that is
    # itself in use (mounted or held as a whole) destroys that use.
    related = [(target, "it")]
    related += [(d, f"its partition /dev/{d.name}") for d in devices if d.disk == target.name]
    related += [(d, f"its disk /dev/{d.name}") for d in devices if d.name == target.disk]

    mounts, swaps = _mounts(system), _swaps(system)
    uses = []
    for dev, what in related:
        for mountpoint in mounts.get(dev.devno, []):
            uses.append(f"{what} is mounted on {mountpoint} (unmount it: umount {mountpoint}, "
                        f"and remove it from /etc/fstab)")
        for swap in swaps.get(dev.devno, []):
            uses.append(f"{what} is active swap {swap} (swapoff {swap}, and remove it from /etc/fstab)")
        if dev.holders:
            uses.append(f"{what} is held by {', '.join(dev.holders)}, i.e. it is part of an LVM volume group, "
                        f"md RAID or dm-crypt mapping (deactivate those: vgchange -an, mdadm --stop, "
                        f"cryptsetup close)")
    if not uses and system.busy(real):
        uses.append("the kernel refuses to open it exclusively (mounted in another mount namespace or container, "
                    "a member of a multi-device btrfs, or claimed by a program: see lsblk and fuser -v)")
    return uses


def _mounts(system: System) -> dict[int, list[str]]:
    """Mount points by device number, from /proc/self/mountinfo."""
    mounts: dict[int, list[str]] = {}
    for numbers, mountpoint, _, source in _mount_table(system):
        # The major:minor of the mounted file system ...
        major, minor = numbers.split(":")
        devnos = {os.makedev(int(major), int(minor))}
        # ... which is an anonymous 0:N for btrfs, so the source's device number counts too.
        # Only sources under /dev/ are examined: a stat on a network source could hang.
        if source.startswith("/dev/"):
            devnos |= _block_devno(system, source)
        for devno in devnos:
            mounts.setdefault(devno, []).append(mountpoint)
    return mounts


def mount_of(path: str, *, system: System | None = None) -> tuple[str, str] | None:
    """The mount point and file-system type of the file system that holds the existing `path`
    (what a `file` device's mount_point and file_system declare); None when no mount holds it."""
    system = system or System()
    real = system.realpath(path)
    found = None
    for _, mountpoint, fs_type, _ in _mount_table(system):
        inside = real == mountpoint or real.startswith(mountpoint.rstrip("/") + "/")
        # The deepest mount point holds it; of mounts stacked on one point, the last one shows.
        if inside and (found is None or len(mountpoint) >= len(found[0])):
            found = (mountpoint, fs_type)
    return found


def _mount_table(system: System) -> list[tuple[str, str, str, str]]:
    """(major:minor, mount point, file-system type, source) of each mount in /proc/self/mountinfo."""
    table = []
    for line in system.mountinfo().splitlines():
        # "36 35 98:0 / /mnt rw,noatime shared:1 - ext4 /dev/sda1 rw": the optional fields
        # before " - " vary in number; file-system type and source follow it.
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 2:
            continue
        table.append((fields[2], _unescape(fields[4]), tail[0], _unescape(tail[1])))
    return table


def _swaps(system: System) -> dict[int, list[str]]:
    """Active swap devices by device number, from /proc/swaps. (A swap file lives on a
    mounted file system, which the mount check sees.)"""
    swaps: dict[int, list[str]] = {}
    for line in system.swaps().splitlines()[1:]:  # the first line is a header
        if line.strip():
            filename = _unescape(line.split()[0])
            for devno in _block_devno(system, filename):
                swaps.setdefault(devno, []).append(filename)
    return swaps


def _check_signatures(system: System, device: dict, name: str, real: str, where: str) -> None:
    try:
        probe = system.blkid(real)
    except FileNotFoundError:
        raise BlockDeviceRefused(
            f"{where} cannot be checked for file-system, RAID, LVM or partition-table signatures: blkid is "
            f"not installed; install util-linux (e.g. apt-get install util-linux)") from None
    stderr = probe.stderr.strip()
    # Exit status 2 means nothing found, but blkid also exits 2 when it cannot open the
    # device (e.g. "Permission denied"), saying so on stderr: that is not a clean device.
    if probe.returncode == 2 and not stderr:
        return
    if probe.returncode != 0:
        raise BlockDeviceRefused(
            f"{where} cannot be checked for signatures: blkid -p {real} failed with exit status "
            f"{probe.returncode}: {stderr or '(no message)'}; resolve that (run the workflow as a user "
            f"who may read {real}; for an ambivalent result inspect it with wipefs {real}) and try again")
    found = dict(line.split("=", 1) for line in probe.stdout.splitlines() if "=" in line)
    # On a partition blkid also describes its entry in the disk's partition table
    # (PART_ENTRY_*): that is not on the partition, and writing to it leaves that intact.
    signature = {k: v for k, v in found.items() if k != "DEVNAME" and not k.startswith("PART_ENTRY_")}
    if not signature or device.get("force", False) is True:
        return
    shown = {k: v for k, v in signature.items() if k in ("TYPE", "PTTYPE")} or signature
    raise BlockDeviceRefused(
        f"{where} carries a file-system, RAID, LVM or partition-table signature "
        f"({', '.join(f'{k}={v}' for k, v in shown.items())}), so it may hold data: check with wipefs {real} "
        f"that nothing on it is needed, then set force: true in configs/devices.yaml for {name} "
        f"(or erase the signatures: wipefs -a {real})")


def _find(devices: list[BlockDev], devno: int) -> BlockDev | None:
    return next((d for d in devices if d.devno == devno), None)


def _block_devno(system: System, path: str) -> set[int]:
    """The device number of path if it is a block device, else nothing."""
    try:
        st = system.stat(path)
    except OSError:
        return set()  # e.g. /dev/root, which the kernel names but devtmpfs does not have
    return {st.st_rdev} if stat.S_ISBLK(st.st_mode) else set()


def _unescape(field: str) -> str:
    r"""The kernel writes space, tab, newline and backslash in these files as \040, \011, \012, \134."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def _numbers(devno: int) -> str:
    return f"{os.major(devno)}:{os.minor(devno)}"


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device"
    return "not a device"
