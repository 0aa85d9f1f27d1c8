"""Your own SSD in one command (`make characterize DEVICE=...`, docs/your-own-ssd.md).

A bad DEVICE is refused with one message before anything is written or run; the `own` profile
puts the declared device in every device list of the quick profile, and no other device.
Fast: no fio here (the real run on a loop device is recorded in docs/notes/).
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml
from test_block_devices import DISK, FakeSystem

from ssdartifact import REPO_ROOT, config, ownprofile, preflight
from ssdartifact.blockdev import BlockDev
from steps import own
from steps.__main__ import main

TRACKED = [d["name"] for d in yaml.safe_load((REPO_ROOT / "configs/devices.yaml").read_text())["devices"]]


def refused(device, **options):
    with pytest.raises(own.OwnDeviceError) as caught:
        own.declaration(device, **options)
    return str(caught.value)


def test_a_missing_path_is_refused_and_a_close_name_suggested(tmp_path):
    (tmp_path / "nvme").mkdir()
    message = refused(str(tmp_path / "nvmee"))
    assert message.startswith(f"DEVICE='{tmp_path}/nvmee' does not exist.")
    assert f"Did you mean '{tmp_path}/nvme'?" in message


def test_a_regular_file_is_refused(tmp_path):
    (tmp_path / "disk.img").write_bytes(b"")
    assert "is a regular file. Give a directory" in refused(str(tmp_path / "disk.img"))


@pytest.mark.parametrize("options, expected", [
    ({"destructive": "ture"}, "DESTRUCTIVE='ture': allowed values: true, or leave it out"),
    ({"force": "yes"}, "FORCE='yes': allowed values: true"),
    ({"name": "My_SSD"}, "NAME='My_SSD': use lower-case letters"),
    ({"name": "local-disk"}, "configs/devices.yaml declares a device of that name already"),
    ({"medium": "nand"}, "MEDIUM='nand': allowed values: flash"),
    ({"max_bytes": "2 gigs"}, "MAX_BYTES='2 gigs': give a number of bytes"),
])
def test_a_mistyped_option_is_refused(tmp_path, options, expected):
    assert expected in refused(str(tmp_path), **options)


def test_no_device_says_how_to_name_one():
    assert refused("").startswith("name the device: make characterize DEVICE=")


def test_a_directory_is_declared_with_the_file_system_that_holds_it(tmp_path):
    device = own.declaration(str(tmp_path), name="my-ssd", medium="flash")
    assert device["kind"] == "file" and device["path"] == str(tmp_path) and device["medium"] == "flash"
    assert device["max_bytes"] == own.DEFAULT_MAX_BYTES
    assert "mount_point" in device and "file_system" in device  # a later unmount is then refused
    assert preflight.file_device_problems(device) == []
    assert "leave out DESTRUCTIVE" in refused(str(tmp_path), destructive="true")


def big_disk():
    """FakeSystem's spare NVMe disk, large enough for the characterization (4 GiB)."""
    fake = FakeSystem()
    fake.devices = [BlockDev(d.name, d.devno, d.disk, d.holders, 1 << 23 if d.devno == DISK else d.sectors)
                    for d in fake.devices]
    return fake


def test_a_raw_device_is_refused_without_the_opt_in():
    message = refused("/dev/nvme1n1", system=big_disk())
    assert message.startswith("DEVICE='/dev/nvme1n1' is a raw block device, and a characterization overwrites it")
    assert message.endswith("To overwrite it, add DESTRUCTIVE=true.")


def test_a_raw_device_with_the_opt_in_is_declared_destructive():
    device = own.declaration("/dev/nvme1n1", destructive="true", system=big_disk())
    assert device == {"name": "my-ssd", "kind": "block", "path": "/dev/nvme1n1", "destructive": True,
                      "max_bytes": own.DEFAULT_MAX_BYTES}


def test_a_mounted_raw_device_is_refused_with_or_without_the_opt_in():
    fake = big_disk()
    fake.mountinfo_text += "40 27 259:0 / /mnt/nvme rw - ext4 /dev/nvme1n1 rw\n"
    for options in ({}, {"destructive": "true"}, {"destructive": "true", "force": "true"}):
        message = refused("/dev/nvme1n1", system=fake, **options)
        assert "is mounted on /mnt/nvme (unmount it: umount /mnt/nvme" in message
        assert "FORCE=true does not override this" in message and "configs/devices.yaml" not in message


def test_a_raw_device_with_a_file_system_needs_force():
    fake = big_disk()
    fake.probe = own.blockdev.subprocess.CompletedProcess([], 0, "TYPE=ext4\n", "")
    message = refused("/dev/nvme1n1", system=fake, destructive="true")
    assert "TYPE=ext4" in message and "add FORCE=true" in message
    assert own.declaration("/dev/nvme1n1", system=fake, destructive="true", force="true")["force"] is True


def test_a_refused_device_writes_nothing(configs, tmp_path, capsys):
    assert main(["own", "declare", "--device", str(tmp_path / "missing")]) == 2
    assert "make characterize: refused; nothing was run or written:" in capsys.readouterr().err
    assert not config.local_devices_file().exists()


def declared(configs, tmp_path, **options):
    flags = [word for key, value in options.items() for word in (f"--{key}", value)]
    assert main(["own", "declare", "--device", str(tmp_path), *flags]) == 0
    return config.local_devices()[0]


def test_the_declaration_goes_to_a_local_file_and_joins_the_devices(configs, tmp_path, capsys):
    tracked = (configs / "devices.yaml").read_text()
    device = declared(configs, tmp_path, name="nvme-box")
    assert f"{tmp_path} is on the {device['file_system']} file system mounted at " in capsys.readouterr().out
    assert (configs / "devices.yaml").read_text() == tracked
    assert config.local_devices_file() == configs / "devices.local.yaml"
    assert [d["name"] for d in config.load("devices.yaml")["devices"]] == [*TRACKED, "nvme-box"]
    assert device["name"] == "nvme-box"
    assert "/configs/devices.local.yaml" in (REPO_ROOT / ".gitignore").read_text().splitlines()


def device_lists(node, path=()):
    """Every list under a key named `devices`, by its path in the profile."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "devices" and isinstance(value, list):
                yield path + (key,), value
            else:
                yield from device_lists(value, path + (key,))


def at(profile, path):
    for key in path:
        if not isinstance(profile, dict) or key not in profile:
            return None
        profile = profile[key]
    return profile


def test_the_own_profile_puts_the_device_in_every_device_list_and_keeps_no_other(configs, tmp_path):
    declared(configs, tmp_path)
    quick, profile = config.load_profile("quick"), config.load_profile("own")
    lists = dict(device_lists(quick))
    assert len(lists) >= 20  # the quick profile's figures and experiments on devices
    for path in lists:
        if path[0] in ownprofile.DROPPED:
            assert path[0] not in profile, path
        else:
            assert at(profile, path) == ["my-ssd"], f"{'.'.join(path)} keeps {at(profile, path)}"
    shown = json.dumps(profile)
    assert [name for name in TRACKED if f'"{name}"' in shown] == []  # not under any other key either
    left = {key: value for key, value in quick.items() if key not in ("name", "description", *ownprofile.DROPPED)}
    assert {key: profile[key] for key in left}.keys() == left.keys()
    assert profile["fio_point"] == quick["fio_point"] and profile["restore"] == quick["restore"]
    config.check_all("own")


def test_on_a_raw_device_the_own_profile_runs_only_what_needs_no_file_system(configs, monkeypatch):
    block = {"name": "my-ssd", "kind": "block", "path": "/dev/nvme1n1", "destructive": True, "max_bytes": 1 << 31}
    profile = ownprofile.expand(config.load_profile("quick"), block)
    assert profile["devices"] == ["my-ssd"] == profile["characterize"]["devices"]
    assert profile["ace"]["figures"] == {} and profile["cave"]["figures"] == {}
    config.validate(profile, "profile", "own")


def test_the_own_profile_without_a_declared_device_says_how_to_declare_one(configs):
    with pytest.raises(config.ConfigError, match=r"profile .own. runs on one device of \S*configs/devices.local.yaml, "
                                                 r"which declares 0\. Declare it with `make characterize DEVICE="):
        config.load_profile("own")


def test_the_own_profile_refuses_a_device_that_went_away(configs, tmp_path):
    directory = tmp_path / "ssd"
    directory.mkdir()
    declared(configs, directory)
    os.rmdir(directory)
    with pytest.raises(config.ConfigError, match=r"device 'my-ssd': key path: .*ssd' does not exist"):
        preflight.check("own")


def test_the_summary_prints_alpha_and_k_and_where_they_are(monkeypatch, tmp_path):
    monkeypatch.setattr(own, "REPO_ROOT", tmp_path)
    folder = tmp_path / "results/pio/devices/my-ssd"
    folder.mkdir(parents=True)
    (folder / "alpha_k.csv").write_text(
        "device,pattern,block_size,alpha,k_r,k_w,read_saturated,write_saturated,read_lat_1_us\n"
        "my-ssd,random,4096,2.31,16,4,true,false,88.2\n")
    text = own.summary("my-ssd")
    assert "random        4096    2.31    16   >=4  88 us" in text
    assert "Results: results/pio/devices/my-ssd/" in text and "make reproduce PROFILE=own" in text


def test_a_real_loop_device_is_refused_mounted_and_too_small(loop_device, tmp_path):
    """The real checks on a 16 MiB loop device (root only): mounted, refused with and without the
    opt-in, and its file system as too small; unmounted and wiped, refused as too small."""
    subprocess.run(["mkfs.ext4", "-q", loop_device], check=True)
    mount = tmp_path / "mnt"
    mount.mkdir()
    subprocess.run(["mount", loop_device, str(mount)], check=True)
    try:
        for options in ({}, {"destructive": "true"}):
            assert f"is mounted on {mount}" in refused(loop_device, **options)
        assert "the characterization writes 1.0 GiB, and the directory has 0.0 GiB free" in refused(str(mount))
    finally:
        subprocess.run(["umount", str(mount)], check=True)
    subprocess.run(["wipefs", "-q", "-a", loop_device], check=True)
    assert refused(loop_device).endswith("To overwrite it, add DESTRUCTIVE=true.")
    assert "and the characterization writes" in refused(loop_device, destructive="true")
