"""Shared fixtures: the built binary and helpers to write small graphs."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from cave import engine
from ssdartifact.devices import OpenDevice


@pytest.fixture(scope="session")
def binary() -> Path:
    return engine.build()


@pytest.fixture
def graph_dir(tmp_path) -> Path:
    # O_DIRECT needs a file system that supports it; pytest's tmp_path is on the root disk here.
    return tmp_path


@pytest.fixture
def folder_device(tmp_path):
    """A campaign's `open_device` whose device is a folder, and a dict counting its openings."""
    opened = {"count": 0}

    @contextmanager
    def open_device(needed):
        opened["count"] += 1
        folder = tmp_path / "device"
        folder.mkdir(exist_ok=True)
        yield OpenDevice("emu-pcie", {"kind": "file"}, folder, folder)

    return open_device, opened
