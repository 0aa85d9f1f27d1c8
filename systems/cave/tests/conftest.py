"""Shared fixtures: the built binary and helpers to write small graphs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cave import engine


@pytest.fixture(scope="session")
def binary() -> Path:
    return engine.build()


@pytest.fixture
def graph_dir(tmp_path) -> Path:
    # O_DIRECT needs a file system that supports it; pytest's tmp_path is on the root disk here.
    return tmp_path
