"""Raw block devices: every refusal before a benchmark may overwrite one.

Most tests describe a machine to a fake System: a disk nvme1n1 with partitions
nvme1n1p1 and nvme1n1p2, declared as nvme-scratch, and a system disk vda. Each
test changes one thing from the all-clear picture, so each fails if its check
is removed. The last test uses a real loop device when the machine allows it.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from types import SimpleNamespace

import pytest

from ssdartifact.blockdev import (BlockDev, BlockDeviceRefused, System, block_device_size, check_block_device,
                                  mount_of)

DISK, P1, P2, VDA, VDA1 = (os.makedev(259, 0), os.makedev(259, 1), os.makedev(259, 2),
                           os.makedev(253, 0), os.makedev(253, 1))
MOUNTINFO_HEADER = ("22 27 0:21 / /proc rw,relatime - proc proc rw\n"
                    "27 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n")
SWAPS_HEADER = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
NOTHING_FOUND = subprocess.CompletedProcess([], 2, "", "")


def blk(devno):
    return SimpleNamespace(st_mode=stat.S_IFBLK | 0o660, st_rdev=devno)


class FakeSystem(System):
    """A fixed machine: the all-clear picture, which a test changes."""

    def __init__(self):
        self.links = {"/dev/disk/by-id/nvme-scratch": "/dev/nvme1n1"}
        self.nodes = {"/dev/nvme1n1": blk(DISK), "/dev/nvme1n1p1": blk(P1), "/dev/nvme1n1p2": blk(P2),
                      "/dev/vda": blk(VDA), "/dev/vda1": blk(VDA1),
                      "/scratch/disk.img": SimpleNamespace(st_mode=stat.S_IFREG | 0o644, st_rdev=0)}
        self.devices = [BlockDev("nvme1n1", DISK, None, (), 1 << 21), BlockDev("nvme1n1p1", P1, "nvme1n1", (), 1 << 20),
                        BlockDev("nvme1n1p2", P2, "nvme1n1", (), 1 << 20), BlockDev("vda", VDA, None, (), 1 << 22),
                        BlockDev("vda1", VDA1, "vda", (), 1 << 22)]
        self.mountinfo_text = MOUNTINFO_HEADER
        self.swaps_text = SWAPS_HEADER
        self.probe = NOTHING_FOUND  # None: blkid is not installed
        self.kernel_busy = False

    def realpath(self, path):
        return self.links.get(path, path)

    def stat(self, path):
        if path not in self.nodes:
            raise FileNotFoundError(path)
        return self.nodes[path]

    def mountinfo(self):
        return self.mountinfo_text

    def swaps(self):
        return self.swaps_text

    def block_devices(self):
        return self.devices

    def blkid(self, path):
        if self.probe is None:
            raise FileNotFoundError("blkid")
        return self.probe

    def busy(self, path):
        return self.kernel_busy


def scratch(**keys):
    return {"name": "nvme-scratch", "kind": "block", "path": "/dev/nvme1n1", "destructive": True,
            "description": "a spare NVMe drive", **keys}


def held(name, holders):
    return [BlockDev(d.name, d.devno, d.disk, holders if d.name == name else d.holders, d.sectors)
            for d in FakeSystem().devices]


def refusal(device, system):
    with pytest.raises(BlockDeviceRefused) as refused:
        check_block_device(device, system=system)
    return str(refused.value)


@pytest.fixture
def fake():
    return FakeSystem()


def test_an_unused_device_without_signatures_passes(fake):
    check_block_device(scratch(), system=fake)
    check_block_device(scratch(path="/dev/disk/by-id/nvme-scratch"), system=fake)
    check_block_device(scratch(path="/dev/nvme1n1p2"), system=fake)


@pytest.mark.parametrize("value", [None, False, "yes"])
def test_a_device_not_declared_destructive_is_refused(fake, value):
    device = scratch(destructive=value)
    if value is None:
        del device["destructive"]
    message = refusal(device, fake)
    assert "'nvme-scratch' (/dev/nvme1n1) is not declared destructive" in message
    assert ("set destructive: true in configs/devices.yaml for nvme-scratch only if every byte on /dev/nvme1n1 "
            "may be overwritten") in message


def test_a_missing_path_is_refused(fake):
    message = refusal(scratch(path="/dev/nvme7n1"), fake)
    assert "'nvme-scratch' (/dev/nvme7n1) does not exist" in message
    assert "correct path for nvme-scratch in configs/devices.yaml" in message


def test_a_regular_file_is_refused(fake):
    message = refusal(scratch(path="/scratch/disk.img"), fake)
    assert "(/scratch/disk.img) is not a block device (a regular file)" in message
    assert "declare a directory as kind: file" in message


def test_a_mounted_device_is_refused_even_with_force(fake):
    # Identified by the device number (field 3) alone: /dev/root, the kernel's name for the
    # device it booted from, is not a node in /dev.
    fake.mountinfo_text += "97 27 259:0 / /data rw,relatime shared:50 - xfs /dev/root rw\n"
    message = refusal(scratch(force=True), fake)
    assert "'nvme-scratch' (/dev/nvme1n1) is in use" in message
    assert "it is mounted on /data (unmount it: umount /data" in message
    assert "force: true does not override this" in message


def test_a_mount_is_found_through_a_by_id_link_and_an_anonymous_btrfs_device_number(fake):
    # btrfs reports 0:N in field 3: only the source names the device.
    fake.mountinfo_text += r"98 27 0:45 / /srv/my\040data rw - btrfs /dev/nvme1n1 rw,subvol=/" + "\n"
    message = refusal(scratch(path="/dev/disk/by-id/nvme-scratch"), fake)
    assert "(/dev/disk/by-id/nvme-scratch -> /dev/nvme1n1) is in use" in message
    assert "it is mounted on /srv/my data" in message


def test_a_device_with_a_mounted_partition_is_refused(fake):
    fake.mountinfo_text += "97 27 259:2 / /home rw,relatime shared:50 - ext4 /dev/nvme1n1p2 rw\n"
    message = refusal(scratch(), fake)
    assert "its partition /dev/nvme1n1p2 is mounted on /home (unmount it: umount /home" in message


def test_a_partition_of_a_disk_mounted_as_a_whole_is_refused(fake):
    fake.mountinfo_text += "97 27 259:0 / /data rw,relatime shared:50 - ext4 /dev/nvme1n1 rw\n"
    message = refusal(scratch(path="/dev/nvme1n1p1"), fake)
    assert "its disk /dev/nvme1n1 is mounted on /data" in message


def test_a_device_with_a_partition_in_use_as_swap_is_refused(fake):
    fake.swaps_text += "/dev/nvme1n1p1                          partition\t8388604\t\t0\t\t-2\n"
    message = refusal(scratch(), fake)
    assert "its partition /dev/nvme1n1p1 is active swap /dev/nvme1n1p1 (swapoff /dev/nvme1n1p1" in message


def test_a_device_with_holders_is_refused(fake):
    fake.devices = held("nvme1n1", ("dm-0",))
    message = refusal(scratch(), fake)
    assert "it is held by dm-0, i.e. it is part of an LVM volume group, md RAID or dm-crypt mapping" in message
    assert "vgchange -an" in message


def test_a_device_with_a_held_partition_is_refused(fake):
    fake.devices = held("nvme1n1p2", ("md127",))
    message = refusal(scratch(), fake)
    assert "its partition /dev/nvme1n1p2 is held by md127" in message


def test_a_device_the_kernel_will_not_open_exclusively_is_refused(fake):
    # e.g. mounted in another container: /proc/self/mountinfo does not show it.
    fake.kernel_busy = True
    message = refusal(scratch(), fake)
    assert "the kernel refuses to open it exclusively" in message


def test_a_signature_is_refused_without_force(fake):
    fake.probe = subprocess.CompletedProcess([], 0, "DEVNAME=/dev/nvme1n1\nUUID=1234\n"
                                                    "TYPE=ext4\nUSAGE=filesystem\n", "")
    message = refusal(scratch(), fake)
    assert "'nvme-scratch' (/dev/nvme1n1) carries a file-system, RAID, LVM or partition-table signature (TYPE=ext4)" \
        in message
    assert "set force: true in configs/devices.yaml for nvme-scratch" in message
    fake.probe = subprocess.CompletedProcess([], 0, "DEVNAME=/dev/nvme1n1\nPTUUID=ab\nPTTYPE=gpt\n", "")
    assert "signature (PTTYPE=gpt)" in refusal(scratch(force=False), fake)


def test_a_signature_passes_with_force(fake):
    fake.probe = subprocess.CompletedProcess([], 0, "DEVNAME=/dev/nvme1n1\nTYPE=LVM2_member\n", "")
    check_block_device(scratch(force=True), system=fake)


def test_a_partitions_own_table_entry_is_not_a_signature(fake):
    # blkid -p on a partition describes its entry in the disk's table, which writing to it leaves intact.
    fake.probe = subprocess.CompletedProcess([], 0, "DEVNAME=/dev/nvme1n1p2\nPART_ENTRY_SCHEME=gpt\n"
                                                    "PART_ENTRY_NUMBER=2\n", "")
    check_block_device(scratch(path="/dev/nvme1n1p2"), system=fake)


def test_a_missing_blkid_is_refused(fake):
    fake.probe = None
    message = refusal(scratch(force=True), fake)
    assert "'nvme-scratch' (/dev/nvme1n1) cannot be checked for" in message
    assert "blkid is not installed; install util-linux" in message


@pytest.mark.parametrize("code, stderr", [
    (8, "blkid: ambivalent result (probably more filesystems on the device, use wipefs(8) to see more details)"),
    (2, "blkid: error: /dev/nvme1n1: Permission denied"),  # blkid says "nothing found" when it cannot read
], ids=["ambivalent", "unreadable"])
def test_a_blkid_error_is_refused(fake, code, stderr):
    fake.probe = subprocess.CompletedProcess([], code, "", stderr)
    message = refusal(scratch(force=True), fake)
    assert f"'nvme-scratch' (/dev/nvme1n1) cannot be checked for signatures: blkid -p /dev/nvme1n1 failed with " \
           f"exit status {code}: {stderr}" in message


def test_the_size_is_read_in_512_byte_sectors(fake):
    assert block_device_size("/dev/disk/by-id/nvme-scratch", system=fake) == (1 << 21) * 512


def test_a_real_loop_device_passes_until_it_carries_a_file_system(loop_device):
    device = {"name": "loop-scratch", "kind": "block", "path": loop_device, "destructive": True}
    check_block_device(device)
    assert block_device_size(loop_device) == 16 << 20
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 is not installed")
    subprocess.run(["mkfs.ext4", "-q", loop_device], check=True, stdin=subprocess.DEVNULL, capture_output=True)
    with pytest.raises(BlockDeviceRefused, match=rf"'loop-scratch' \({loop_device}\) carries .* \(TYPE=ext4\)"):
        check_block_device(device)
    check_block_device({**device, "force": True})


def test_the_file_system_that_holds_a_path_is_the_deepest_and_last_mounted():
    """What a `file` device's mount_point and file_system are checked against (preflight.file_device_problems)."""
    system = FakeSystem()
    system.mountinfo_text += ("40 27 259:1 / /mnt/my\\040ssd rw - ext4 /dev/nvme1n1p1 rw\n"
                              "41 40 259:2 / /mnt/my\\040ssd rw - xfs /dev/nvme1n1p2 rw\n"
                              "42 27 0:30 / /mnt/my rw - tmpfs tmpfs rw\n")
    assert mount_of("/mnt/my ssd/bench", system=system) == ("/mnt/my ssd", "xfs")
    assert mount_of("/mnt/my", system=system) == ("/mnt/my", "tmpfs")
    assert mount_of("/mnt/myself", system=system) == ("/", "ext4")
