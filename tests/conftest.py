"""Shared fixtures: a scratch copy of configs/ that a test may break."""

import os
import shutil
import subprocess

import pytest

from ssdartifact import REPO_ROOT, config


@pytest.fixture
def configs(tmp_path, monkeypatch):
    """A copy of configs/ that the config loader reads instead of the real one."""
    copy = tmp_path / "configs"
    shutil.copytree(REPO_ROOT / "configs", copy)
    monkeypatch.setattr(config, "CONFIG_DIR", copy)
    monkeypatch.setattr(config, "SCHEMA_DIR", copy / "schemas")
    return copy


@pytest.fixture
def loop_device(tmp_path):
    """A 16 MiB loop device over a sparse file (root only; skipped where loop devices are unavailable)."""
    if os.geteuid() != 0:
        pytest.skip("attaching a loop device needs root")
    for tool in ("losetup", "blkid"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    image = tmp_path / "disk.img"
    with open(image, "wb") as handle:
        handle.truncate(16 << 20)  # sparse
    attach = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True)
    if attach.returncode != 0:
        pytest.skip(f"no loop device available (e.g. in a container): {attach.stderr.strip()}")
    loop = attach.stdout.strip()
    try:
        yield loop
    finally:
        subprocess.run(["losetup", "--detach", loop], check=True)
