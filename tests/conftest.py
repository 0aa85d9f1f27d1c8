"""Shared fixtures: a scratch copy of configs/ that a test may break."""

import shutil

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
