"""Fixtures of emussd's tests: the binary (built once per session) and mounts that are always unmounted."""

from __future__ import annotations

from pathlib import Path

import pytest

from emussd.harness import DEFAULT_BUILD_DIR, Mount, build


@pytest.fixture(scope="session")
def binary() -> Path:
    return build(DEFAULT_BUILD_DIR)


@pytest.fixture
def mounts(binary, tmp_path):
    """mounts(**device) mounts a new instance under tmp_path; all are unmounted at teardown."""
    started: list[Mount] = []

    def make(root: Path | None = None, **kw) -> Mount:
        root = root or tmp_path / f"dev{len(started)}"
        m = Mount(binary, root, **kw)
        started.append(m)
        return m.start()

    yield make
    for m in started:
        m.stop()
