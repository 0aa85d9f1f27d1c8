"""Shared fixtures: a scratch copy of configs/ that a test may break, a fresh copy of the repository
for the end-to-end tests, a loop device."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

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


@pytest.fixture(scope="module")
def clone():
    """A copy of every tracked (or new, not ignored) file: no outputs, no environment. Outside
    pytest's own temporary tree, which others may not traverse: run as root, PostgreSQL runs as
    `nobody` and must reach its cluster on the copy's devices, as in a checkout of a user's."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO_ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    top = Path(tempfile.mkdtemp(prefix="artifact-e2e-", dir="/tmp"))
    top.chmod(0o755)
    root = top / "artifact"
    for relative in filter(None, listed):
        source = REPO_ROOT / relative
        if source.is_file():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / relative)
    yield root
    subprocess.run(["fusermount3", "-uz", *map(str, root.glob("scratch/emussd/*/mnt"))], capture_output=True)
    shutil.rmtree(top, ignore_errors=True)
