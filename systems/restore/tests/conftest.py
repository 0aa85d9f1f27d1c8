"""Fixtures of the ReStore tests: the restore-sim binary, built once per session."""

from __future__ import annotations

import pytest

from restore.engine import build


@pytest.fixture(scope="session")
def binary():
    return build()
