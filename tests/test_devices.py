"""Declared devices: presets, refusals, and emulated devices that are always unmounted."""

import os

import pytest
import yaml

from ssdartifact import devices


def test_a_preset_fills_in_the_model_and_declared_keys_override_it(configs):
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    data["devices"].append({"name": "emu-fast", "kind": "emulated", "preset": "sata-like", "read_latency_us": 3000})
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    model = devices.emulated_model(devices.declaration("emu-fast"))
    assert model == {"read_latency_us": 3000, "alpha": 1.5, "k_r": 25, "k_w": 9, "page_size": 4096}


def test_an_undeclared_device_is_refused():
    with pytest.raises(devices.DeviceError, match="'nvme9' is not declared in configs/devices.yaml; declared: local-disk"):
        devices.declaration("nvme9")


def test_a_file_device_refuses_more_than_its_declared_bytes():
    with pytest.raises(devices.DeviceError, match="declaration allows max_bytes=2147483648"):
        with devices.opened("local-disk", 1 << 40):
            pass


def declare_block(configs, **keys):
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    data["devices"].append({"name": "nvme-scratch", "kind": "block", "path": "/dev/nvme-absent",
                            "max_bytes": 1 << 30, **keys})
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))


def test_a_block_device_not_declared_destructive_is_never_opened(configs):
    declare_block(configs, destructive=False)
    with pytest.raises(devices.DeviceError, match="set destructive: true"):
        with devices.opened("nvme-scratch", 4096):
            pass
    with pytest.raises(devices.DeviceError, match="set destructive: true"):
        devices.declared_block_devices()  # the docker runtime checks on the host before passing it in


def test_a_declared_block_device_that_does_not_exist_is_refused(configs):
    declare_block(configs, destructive=True)
    with pytest.raises(devices.DeviceError, match="/dev/nvme-absent"):
        with devices.opened("nvme-scratch", 4096):
            pass


def test_a_file_device_removes_its_test_files(tmp_path):
    with devices.opened("local-disk", 4096) as opened:
        (opened.io_dir / "f").write_bytes(b"x" * 4096)
        work = opened.io_dir
    assert not work.exists()


needs_fuse = pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="/dev/fuse is absent: emussd needs FUSE")


@pytest.fixture(scope="module")
def emussd_binary():
    from emussd.harness import build
    return build()


@needs_fuse
def test_an_emulated_device_is_unmounted_when_the_experiment_fails(emussd_binary, tmp_path):
    with pytest.raises(RuntimeError, match="experiment failed"):
        with devices.opened("emu-optane", 1 << 20, emussd_binary=emussd_binary,
                            stats_out=tmp_path / "stats.json") as opened:
            mountpoint = opened.io_dir.parent
            assert os.path.ismount(mountpoint)
            (opened.io_dir / "f").write_bytes(b"y" * 8192)
            raise RuntimeError("experiment failed")
    assert not os.path.ismount(mountpoint)
    stats = (tmp_path / "stats.json").read_text()
    assert '"write"' in stats


@needs_fuse
def test_stale_mounts_are_unmounted(emussd_binary):
    """A left-over emussd (detached: no run holds it) is unmounted; one a live run holds is not."""
    import subprocess
    import time
    from emussd.harness import Mount
    root = devices.EMULATED_ROOT / "emu-optane"
    held = Mount(emussd_binary, devices.EMULATED_ROOT / "emu-virtual", read_latency_us=2000, alpha=2, k_r=4, k_w=4)
    held.start()
    (root / "backing").mkdir(parents=True, exist_ok=True)
    (root / "mnt").mkdir(parents=True, exist_ok=True)
    detached = [str(emussd_binary), "--backing", str(root / "backing"), "--mountpoint", str(root / "mnt"),
                "--read-latency-us", "2000", "--alpha", "1.1", "--k-r", "6", "--k-w", "5"]
    try:
        subprocess.run(detached, check=True, timeout=20)  # detaches once mounted
        deadline = time.monotonic() + 10
        while not os.path.ismount(root / "mnt") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert devices.unmount_stale() == [root / "mnt"]
        assert not os.path.ismount(root / "mnt")
        assert os.path.ismount(held.mountpoint), "a mount a live run holds must stay"
    finally:
        held.stop()
        subprocess.run(["fusermount3", "-uz", str(root / "mnt")], capture_output=True)


@needs_fuse
def test_an_emulated_device_is_unmounted_when_the_workflow_is_killed(emussd_binary, tmp_path):
    """A run killed mid-experiment (no cleanup code runs at all) must not leave the device mounted."""
    import signal
    import subprocess
    import sys
    import time

    script = (f"from pathlib import Path; from ssdartifact import devices; import time\n"
              f"with devices.opened('emu-optane', 1 << 20, emussd_binary=Path({str(emussd_binary)!r})) as d:\n"
              f"    print('mounted', flush=True); time.sleep(60)\n")
    experiment = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert experiment.stdout.readline().strip() == "mounted"
    mountpoint = devices.EMULATED_ROOT / "emu-optane" / "mnt"
    assert os.path.ismount(mountpoint)
    experiment.send_signal(signal.SIGKILL)
    experiment.wait()
    deadline = time.monotonic() + 10
    while os.path.ismount(mountpoint) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.ismount(mountpoint), "emussd must unmount when the process that mounted it dies"
