"""Loop devices (configs/devices.yaml, kind loop; Figure 2.7): made for an experiment over a file of
the artifact's own, written through and attached with direct I/O, raw or with ext4 mounted, and
gone afterwards (no loop device, no mount, no file), also after a run that was killed; refused
before anything runs where they cannot be made."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ssdartifact import config, devices, preflight

CAN_MAKE_LOOPS = os.geteuid() == 0 and os.path.exists("/dev/loop-control") and shutil.which("losetup")
needs_loops = pytest.mark.skipif(not CAN_MAKE_LOOPS, reason="loop devices need root and /dev/loop-control")


def declared(**keys):
    return {"name": "loop-test", "kind": "loop", "max_bytes": 256 << 20, **keys}


def attached_to(image) -> list[str]:
    listed = subprocess.run(["losetup", "--noheadings", "--output", "NAME", "--associated", str(image)],
                            capture_output=True, text=True)
    return listed.stdout.split()


@pytest.fixture
def loop_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(devices, "LOOP_DEVICES", tmp_path / "loop")
    monkeypatch.setattr(devices, "REPO_ROOT", tmp_path)
    return tmp_path / "loop"


@needs_loops
def test_a_raw_loop_device_is_the_size_needed_written_through_and_gone_afterwards(loop_folder):
    image = loop_folder / "loop-test/device.img"
    with devices.contextmanager(devices._loop)("loop-test", declared(), 20 << 20) as opened:
        node = str(opened.block_path)
        assert opened.io_dir is None and node.startswith("/dev/loop")
        assert attached_to(image) == [node]
        assert opened.declaration["loop"]["direct_io"] is True
        assert int(subprocess.run(["blockdev", "--getsize64", node], capture_output=True, text=True,
                                  check=True).stdout) == 20 << 20  # the size needed
        # written through: every block of the file is allocated (a preallocated file's would be unwritten)
        assert image.stat().st_blocks * 512 >= 20 << 20
    assert not image.exists() and not attached_to(image)


@needs_loops
def test_a_loop_device_with_ext4_gives_a_mounted_directory_and_leaves_nothing(loop_folder):
    mount = loop_folder / "loop-test/mnt"
    with devices.contextmanager(devices._loop)("loop-test", declared(file_system="ext4"), 32 << 20) as opened:
        assert opened.block_path is None and os.path.ismount(mount)
        assert opened.io_dir == mount / "ssd-artifact-io" and opened.io_dir.is_dir()
        (opened.io_dir / "f").write_bytes(b"x" * 4096)
        assert opened.declaration["loop"]["bytes"] == 40 << 20  # a quarter more than needed: ext4's own
    assert not os.path.ismount(mount) and not (loop_folder / "loop-test/device.img").exists()


@needs_loops
def test_what_a_killed_run_left_is_detached_before_the_next(loop_folder):
    folder = loop_folder / "loop-test"
    folder.mkdir(parents=True)
    image = folder / "device.img"
    subprocess.run(["truncate", "-s", "16M", str(image)], check=True)
    left = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True,
                          check=True).stdout.strip()
    try:
        with devices.contextmanager(devices._loop)("loop-test", declared(), 8 << 20) as opened:
            # one loop device on the folder's file: the new one (the kernel may give it the freed name)
            assert backing_files_in(folder) == [str(image)] and attached_to(image) == [str(opened.block_path)]
    finally:
        if str(folder) in " ".join(backing_files_in(folder)):
            subprocess.run(["losetup", "--detach", left], capture_output=True)
    assert not image.exists() and backing_files_in(folder) == []


def backing_files_in(folder) -> list[str]:
    """The backing files of every attached loop device that lie in folder (a deleted one's included)."""
    listed = subprocess.run(["losetup", "--list", "--noheadings", "--output", "BACK-FILE"], capture_output=True,
                            text=True, check=True)
    return [line.strip() for line in listed.stdout.splitlines() if line.strip().startswith(str(folder))]


def test_an_experiment_larger_than_max_bytes_is_refused_before_anything_is_made(loop_folder):
    with pytest.raises(devices.DeviceError, match=r"max_bytes=268435456 allows; raise max_bytes"):
        with devices.contextmanager(devices._loop)("loop-test", declared(file_system="ext4"), 210 << 20):
            pass
    assert not loop_folder.exists()


def test_a_profile_using_a_loop_device_without_root_is_refused_before_anything_runs(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    problems = preflight.block_device_problems([declared(file_system="ext4")], ["loop-test"])
    assert len(problems) == 1 and "loop device 'loop-test'" in problems[0] and "needs root" in problems[0]
    assert preflight.block_device_problems([declared()], []) == []  # a device the profile does not use


def test_a_raw_vs_fs_device_needs_its_twin_in_the_profile():
    loaded = {"devices.yaml": config.load("devices.yaml"),
              "profiles/mine.yaml": {"name": "mine", "devices": ["loop-raw"], "characterize": {"devices": []},
                                     "raw_vs_fs": {"devices": ["loop-raw"]}}}
    problems = config.cross_file_problems(loaded)
    assert any("raw_vs_fs.devices: 'loop-ext4' is measured for Figure 2.7 but is not in this profile's devices"
               in p for p in problems), problems
