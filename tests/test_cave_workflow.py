"""CAVE's workflow steps that need no device: fetching a real dataset (reachable, unreachable,
pinned) and the profile checks of Chapter 5's keys."""

from __future__ import annotations

import gzip
import json

import pytest

from cave import datasets
from ssdartifact import config
from ssdartifact.files import sha256_file
from steps import cave as cave_steps
from steps.runtime import StepFailed


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    """A gzipped SNAP edge list served from a file:// URL, as configs/datasets.yaml would list it."""
    source = tmp_path / "served" / "tiny.txt.gz"
    source.parent.mkdir()
    with gzip.open(source, "wt") as handle:
        handle.write("# tiny\n0 1\n1 2\n")
    entry = {"description": "tiny", "url": source.as_uri(), "format": "snap", "sha256": None}
    real_load = config.load
    monkeypatch.setattr(datasets.config, "load",
                        lambda name: {"downloads": {"TINY": entry}} if name == "datasets.yaml" else real_load(name))
    monkeypatch.setattr(datasets, "DOWNLOADS", tmp_path / "downloads")
    return entry, source


def fetch(tmp_path):
    record = tmp_path / "TINY.json"
    cave_steps.fetch_cave_dataset(name="TINY", record=str(record), log=str(tmp_path / "fetch.log"))
    return json.loads(record.read_text())


def test_a_reachable_dataset_is_fetched_and_its_unpinned_sha256_is_reported(dataset, tmp_path):
    entry, source = dataset
    result = fetch(tmp_path)
    assert result["status"] == "fetched" and result["sha256"] == sha256_file(source)
    assert "not pinned in configs/datasets.yaml yet" in (tmp_path / "fetch.log").read_text()
    assert (tmp_path / "downloads" / "tiny.txt.gz").read_bytes() == source.read_bytes()


def test_a_pinned_sha256_that_does_not_match_is_refused(dataset, tmp_path):
    entry, _ = dataset
    entry["sha256"] = "0" * 64
    with pytest.raises(StepFailed, match="refusing to use it"):
        fetch(tmp_path)


def test_an_unreachable_source_is_recorded_with_what_to_do(dataset, tmp_path, capsys):
    entry, _ = dataset
    entry["url"] = "http://127.0.0.1:9/tiny.txt.gz"  # the discard port: nothing listens
    result = fetch(tmp_path)
    assert result["status"] == "unreachable"
    assert "is not reachable" in result["message"] and "Download it by hand to" in result["message"]
    assert "Table 5.1 leaves it out" in capsys.readouterr().err


def test_the_profile_may_only_fetch_declared_datasets(tmp_path, monkeypatch):
    import shutil

    from ssdartifact import REPO_ROOT

    configs = tmp_path / "configs"
    shutil.copytree(REPO_ROOT / "configs", configs)
    text = (configs / "profiles/ci.yaml").read_text().replace("  table_5_1:", "  downloads: [WEB]\n  table_5_1:")
    (configs / "profiles/ci.yaml").write_text(text)
    monkeypatch.setattr(config, "CONFIG_DIR", configs)
    monkeypatch.setattr(config, "SCHEMA_DIR", configs / "schemas")
    with pytest.raises(config.ConfigError, match="key cave.downloads: 'WEB' is not in configs/datasets.yaml"):
        config.check_all("ci")


def test_a_container_runs_cave_s_steps_by_name(tmp_path):
    """In docker mode a step runs as `python -m steps run NAME` (its keyword arguments on stdin): CAVE's steps,
    registered from their own module, must be found there."""
    import subprocess
    import sys

    from ssdartifact import REPO_ROOT

    log = tmp_path / "build.log"
    call = json.dumps({"binary": "systems/cave/build/cave", "log": str(log)})
    proc = subprocess.run([sys.executable, "-m", "steps", "run", "build_cave"], input=call, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert log.read_text().startswith("built ")
