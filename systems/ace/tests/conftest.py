"""Fixtures of the ACE tests: the patched server (cassert build) and scratch directories
that the server's user can reach."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from ace.build import build


@pytest.fixture(scope="session")
def install() -> Path:
    """The patched server with PostgreSQL's assertions on (built once, then cached)."""
    return build("cassert")


@pytest.fixture
def server_root():
    """A directory for one cluster, outside pytest's private (mode 0700) temporary tree,
    so that the unprivileged server user can reach it."""
    root = Path(tempfile.mkdtemp(prefix="ace-test-", dir="/tmp"))
    root.chmod(0o755)  # mkdtemp's 0700 would shut the server's user out
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)
