"""The characterization on a raw block device (a loop device): fio writes to the device itself,
only after the safety checks, and gives alpha and k like any other device."""

import io

import pytest
import yaml

from pio import bench, fio
from ssdartifact import config, devices


def test_a_declared_loop_device_is_characterized_through_its_node(configs, loop_device, tmp_path):
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    data["devices"].append({"name": "loop-scratch", "kind": "block", "path": loop_device, "destructive": True,
                            "max_bytes": 16 << 20})
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    experiment = config.load("experiments/pio.yaml")
    settings = experiment["characterization"]
    settings.update(random_block_sizes=[4096], sequential_block_sizes=[], file_size=1 << 20)
    experiment["queue_depth"]["depths"] = [1, 2]
    experiment["interference"]["background_fractions"] = [0, 1]
    progress = io.StringIO()
    with devices.opened("loop-scratch", 4 << 20) as opened:
        assert opened.block_path is not None and opened.io_dir is None
        target = fio.Target(block_device=opened.block_path)
        results = bench.run(bench.OpenedTarget("loop-scratch", target, None, precondition=True), experiment,
                            {"runtime_ms": 150, "ramp_ms": 0}, 4, tmp_path / "raw", progress)
    (row,) = results.alpha_k
    assert row["device"] == "loop-scratch" and row["k_r"] >= 1 and row["alpha"] > 0
    assert {r["sweep"] for r in results.sweeps} == {"threads", "queue_depth"}
    assert len(results.interference) == 2
    assert results.writeback == [] and "file systems only" in progress.getvalue()
    assert "preconditioning" in progress.getvalue()
    assert (tmp_path / "raw" / "precondition.json").exists()


def test_a_loop_device_with_a_file_system_is_refused_before_any_io(configs, loop_device):
    import shutil
    import subprocess

    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 is not installed")
    subprocess.run(["mkfs.ext4", "-q", loop_device], check=True, stdin=subprocess.DEVNULL, capture_output=True)
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    data["devices"].append({"name": "loop-scratch", "kind": "block", "path": loop_device, "destructive": True,
                            "max_bytes": 16 << 20})
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(devices.DeviceError, match="TYPE=ext4"):
        with devices.opened("loop-scratch", 4096):
            pass
