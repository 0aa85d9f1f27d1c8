"""Declared devices (ssdartifact.devices), and emulated ones opened through emussd.device: presets,
refusals, time dilation, and emulated devices that are always unmounted."""

import os

import pytest
import yaml

from emussd import device as emulated
from ssdartifact import devices
from steps.runtime import open_device


def test_a_preset_fills_in_the_model_and_declared_keys_override_it(configs):
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    data["devices"].append({"name": "emu-fast", "kind": "emulated", "preset": "sata-like", "read_latency_us": 3000})
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    model = devices.emulated_model(devices.declaration("emu-fast"))
    assert model == {"read_latency_us": 3000, "alpha": 1.5, "k_r": 25, "k_w": 9, "page_size": 4096}


def test_an_undeclared_device_is_refused():
    with pytest.raises(devices.DeviceError,
                       match="'nvme9' is not declared in configs/devices.yaml; declared: local-disk"):
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


def test_a_declared_file_device_is_checked_where_it_is_opened_and_never_created(configs, tmp_path):
    """On a cluster the node that holds the device checks it, when the experiment opens it."""
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    data["devices"].append({"name": "my-ssd", "kind": "file", "path": str(tmp_path / "mnt" / "nvme"),
                            "max_bytes": 1 << 30, "cluster": {"node": "n1"}})
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(devices.DeviceError, match=r"device 'my-ssd': key path: '.*/mnt/nvme' does not exist"):
        with devices.opened("my-ssd", 4096):
            pass
    assert not (tmp_path / "mnt").exists()


def test_a_file_device_removes_its_test_files(tmp_path):
    with devices.opened("local-disk", 4096) as opened:
        (opened.io_dir / "f").write_bytes(b"x" * 4096)
        work = opened.io_dir
    assert not work.exists()


needs_fuse = pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="/dev/fuse is absent: emussd needs FUSE")

# A machine that emulates 1,000,000 page I/Os per second with a 10 us round trip: every declared device
# fits with time dilation 1 (a real calibration takes 10 to 20 s; test_emussd_timing uses this machine's).
ROOMY = {"host": {}, "capacity_iops": 1e6, "round_trip_us": 10.0}


@pytest.fixture(autouse=True)
def roomy_machine(monkeypatch):
    from emussd.capacity import Calibration
    monkeypatch.setattr(emulated, "capacity_calibration",
                        lambda binary, progress=None, retake="never": Calibration(**ROOMY))


def calibrated(monkeypatch, capacity_iops, round_trip_us):
    from emussd.capacity import Calibration
    monkeypatch.setattr(emulated, "capacity_calibration",
                        lambda binary, progress=None, retake="never": Calibration({}, capacity_iops, round_trip_us))


def test_a_device_beyond_the_machine_gets_the_dilation_that_fits_it(monkeypatch):
    calibrated(monkeypatch, capacity_iops=16000, round_trip_us=60)  # usable: 12,000 page I/Os per second
    device = {"name": "fast", "kind": "emulated", "read_latency_us": 50, "alpha": 1.2, "k_r": 16, "k_w": 16}
    plan, _ = emulated.emulation({**device, "read_latency_us": 2000, "k_r": 64}, "emussd")
    assert plan.factor == 2.7  # 64 / 2 ms = 32,000 per s: 2.67 x 12,000
    assert "declared peak 32,000 page I/Os per s, this machine emulates 12,000 faithfully" in plan.describe()
    plan, _ = emulated.emulation(device, "emussd")
    assert plan.factor == 60  # at 50 us the gap needs more: 60 us is 2 % of 3,000 us = 60 x 50 us
    cheap_writes = {**device, "read_latency_us": 2000, "alpha": 0.1, "k_r": 1, "k_w": 1}
    plan, _ = emulated.emulation(cheap_writes, "emussd")
    assert plan.factor == 15  # its 200 us write, the shortest service time, needs 3,000 us


def test_a_preset_within_the_machine_keeps_its_time_scale(monkeypatch):
    calibrated(monkeypatch, capacity_iops=16000, round_trip_us=60)
    plan, _ = emulated.emulation(devices.declaration("emu-pcie"), "emussd")
    assert plan.factor == 1


def test_a_declared_dilation_below_the_needed_one_is_refused_with_the_numbers(monkeypatch):
    calibrated(monkeypatch, capacity_iops=16000, round_trip_us=60)
    device = {"name": "fast", "kind": "emulated", "read_latency_us": 50, "alpha": 1.2, "k_r": 16, "k_w": 16,
              "time_dilation": 20}
    with pytest.raises(devices.DeviceError, match=r"declares time_dilation 20, but this machine needs at least "
                                                  r"time dilation 60 \(declared peak 320,000"):
        emulated.emulation(device, "emussd")
    plan, _ = emulated.emulation({**device, "time_dilation": 70}, "emussd")
    assert plan.factor == 70


def test_a_device_no_dilation_can_fit_is_refused_with_the_numbers(monkeypatch):
    calibrated(monkeypatch, capacity_iops=100, round_trip_us=60)
    device = {"name": "huge", "kind": "emulated", "read_latency_us": 1000, "alpha": 1, "k_r": 4096, "k_w": 1}
    with pytest.raises(devices.DeviceError, match=r"'huge' cannot be emulated faithfully on this machine: it needs a "
                                                  r"time dilation of 55000, which makes a page read take 55 s"):
        emulated.emulation(device, "emussd")


def test_results_are_converted_to_the_declared_time_scale():
    rows = [{"threads": 4, "iops": 100.0, "lat_mean_us": 40000.0, "alpha_cost": 3.0, "lat_p99_us": ""}]
    (row,) = devices.to_declared_time(rows, 40, times=("lat_mean_us", "lat_p99_us"), rates=("iops",))
    assert row == {"threads": 4, "iops": 4000.0, "lat_mean_us": 1000.0, "alpha_cost": 3.0, "lat_p99_us": "",
                   "time_dilation": 40}
    assert rows[0]["iops"] == 100.0  # the measured rows are left as they were


@pytest.fixture(scope="module")
def emussd_binary():
    from emussd.harness import build
    return build()


@needs_fuse
def test_an_emulated_device_is_unmounted_when_the_experiment_fails(emussd_binary, tmp_path):
    with pytest.raises(RuntimeError, match="experiment failed"):
        with open_device("emu-optane", 1 << 20, emussd_binary=emussd_binary,
                            stats_out=tmp_path / "stats.json") as opened:
            mountpoint = opened.io_dir.parent
            assert os.path.ismount(mountpoint)
            assert opened.time_dilation == 1 and opened.provenance()["emulation"]["time_dilation"] == 1
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
    root = emulated.EMULATED_ROOT / "emu-optane"
    held = Mount(emussd_binary, emulated.EMULATED_ROOT / "emu-virtual", read_latency_us=2000, alpha=2, k_r=4, k_w=4)
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
        assert emulated.unmount_stale() == [root / "mnt"]
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

    script = (f"from pathlib import Path; from emussd import device; import time\n"
              f"from emussd.capacity import Calibration\n"
              f"from steps.runtime import open_device\n"
              f"device.capacity_calibration = lambda binary, progress=None, retake='never': Calibration(**{ROOMY!r})\n"
              f"with open_device('emu-optane', 1 << 20, emussd_binary=Path({str(emussd_binary)!r})) as d:\n"
              f"    print('mounted', flush=True); time.sleep(60)\n")
    experiment = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert experiment.stdout.readline().strip() == "mounted"
    mountpoint = emulated.EMULATED_ROOT / "emu-optane" / "mnt"
    assert os.path.ismount(mountpoint)
    experiment.send_signal(signal.SIGKILL)
    experiment.wait()
    deadline = time.monotonic() + 10
    while os.path.ismount(mountpoint) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.ismount(mountpoint), "emussd must unmount when the process that mounted it dies"


@needs_fuse
def test_an_emulated_device_beyond_the_machine_runs_dilated(emussd_binary, configs, monkeypatch):
    calibrated(monkeypatch, capacity_iops=16000, round_trip_us=60)
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    data["devices"].append({"name": "emu-fast", "kind": "emulated", "read_latency_us": 50, "alpha": 1.2,
                            "k_r": 16, "k_w": 16})
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    import json
    from emussd.harness import STATS_NAME
    with open_device("emu-fast", 1 << 20, emussd_binary=emussd_binary, saturating=True) as opened:
        params = json.loads((opened.io_dir.parent / STATS_NAME).read_text())["params"]
        assert opened.time_dilation == 60 and params["time_dilation"] == 60
        assert params["read_latency_us"] == 50  # the declaration, not the wall-clock time
        assert opened.provenance()["emulation"]["calibration"]["capacity_iops"] == 16000
        (opened.io_dir / "f").write_bytes(b"x" * 4096)
    assert opened.provenance()["emulation"]["fidelity"]["write"]["count"] == 1
    # A database or a graph engine (not a thread sweep) runs at the declared time scale.
    with open_device("emu-fast", 1 << 20, emussd_binary=emussd_binary) as opened:
        params = json.loads((opened.io_dir.parent / STATS_NAME).read_text())["params"]
        assert opened.time_dilation == 1 and params["time_dilation"] == 1


def test_fidelity_warns_when_requests_complete_late():
    stats = {"ops": {"read": {"count": 10, "declared_service_time_us": 10000, "late_time_us": 300, "overruns": 0},
                     "write": {"count": 4, "declared_service_time_us": 8000, "late_time_us": 1000, "overruns": 1}}}
    facts = emulated.fidelity(stats)
    assert facts["read"] == {"count": 10, "mean_service_us": 1000, "mean_late_us": 30, "overruns": 0}
    assert facts["warning"] == "writes completed on average 250 us (12%) after their 2000 us service time"


@needs_fuse
def test_check_config_refuses_a_device_it_cannot_emulate_with_the_numbers(emussd_binary, configs, monkeypatch, capsys):
    from steps.__main__ import main
    calibrated(monkeypatch, capacity_iops=16000, round_trip_us=60)
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    data["devices"] += [{"name": "emu-fast", "kind": "emulated", "read_latency_us": 50, "alpha": 1.2, "k_r": 16,
                         "k_w": 16},
                        {"name": "emu-huge", "kind": "emulated", "read_latency_us": 1000, "alpha": 1, "k_r": 4096,
                         "k_w": 4096}]
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    profile = yaml.safe_load((configs / "profiles" / "ci.yaml").read_text())
    profile["devices"] = ["emu-optane", "emu-fast"]
    (configs / "profiles" / "ci.yaml").write_text(yaml.safe_dump(profile))
    assert main(["check-config", "--profile", "ci"]) == 0
    out = capsys.readouterr().out
    assert "emulated device emu-optane: in thread sweeps, time dilation 1.5 (declared peak 3,000" in out
    assert "emulated device emu-fast: in thread sweeps, time dilation 60 (declared peak 320,000" in out
    profile["devices"].append("emu-huge")
    profile["characterize"]["devices"] = ["emu-huge"]  # a thread sweep: 0.69 s per read, 1 s per fio point
    (configs / "profiles" / "ci.yaml").write_text(yaml.safe_dump(profile))
    assert main(["check-config", "--profile", "ci"]) == 2
    err = capsys.readouterr().err
    assert ("'emu-huge': with time dilation 350 (declared peak 4,096,000 page I/Os per s, this machine emulates "
            "12,000") in err
    assert "its slowest page takes 350 ms on the wall clock" in err and "raise runtime_ms to at least 3500" in err
    calibrated(monkeypatch, capacity_iops=100, round_trip_us=60)  # a machine 160 times slower
    assert main(["check-config", "--profile", "ci"]) == 2
    assert ("'emu-huge' cannot be emulated faithfully on this machine: it needs a time dilation of 55000, which "
            "makes a page read take 55 s on the wall clock (emussd's limit: 10 s)") in capsys.readouterr().err


@needs_fuse
def test_a_refreshed_emulated_device_shows_the_files_changed_behind_its_back(emussd_binary):
    """ACE rewrites the last run's cluster through prepare_dir; without a refresh the kernel keeps
    the sizes it cached (FUSE) and an append lands after a hole of zeros."""
    with open_device("emu-optane", 1 << 20, emussd_binary=emussd_binary) as opened:
        seen, placed = opened.io_dir / "postgresql.conf", opened.prepare_dir / "postgresql.conf"
        seen.write_bytes(b"x" * 5000)
        assert seen.stat().st_size == 5000  # the kernel caches the size it was told (for 1 s)
        os.truncate(placed, 100)  # changed behind the device's back
        (opened.prepare_dir / "new").write_bytes(b"n")
        opened.refresh()
        with open(seen, "ab") as handle:
            handle.write(b"tail")
        assert placed.read_bytes() == b"x" * 100 + b"tail"
        assert (opened.io_dir / "new").read_bytes() == b"n"


def test_one_function_resolves_every_device_model():
    """A preset, an emulated device (its preset under its own keys) and ReStore's tiers resolve
    alike; a real device's model is measured, never declared."""
    assert devices.model("pcie-like") == {"read_latency_us": 10000, "alpha": 2.8, "k_r": 80, "k_w": 8,
                                          "page_size": 4096}
    assert devices.model("emu-pcie-db") == {"read_latency_us": 1000, "alpha": 2.8, "k_r": 80, "k_w": 8,
                                            "page_size": 8192}
    assert devices.model("restore-tier-3")["read_latency_us"] == 500
    with pytest.raises(devices.DeviceError, match="'local-disk' is a file device: its alpha and k are measured"):
        devices.model("local-disk")
    with pytest.raises(devices.DeviceError, match="'nope' is neither a device of configs/devices.yaml nor a preset"):
        devices.model("nope")


def test_a_config_is_validated_once_and_each_caller_gets_its_own_copy(configs):
    from ssdartifact import config
    first = config.load("devices.yaml")
    first["devices"].clear()
    assert config.load("devices.yaml")["devices"], "a caller's change must not reach the next caller"
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    data["devices"][0]["max_bytes"] = -1
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(config.ConfigError, match="max_bytes"):
        config.load("devices.yaml")  # a changed file is read and validated again
