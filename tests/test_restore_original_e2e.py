"""The workflow's rule run_restore_original end to end, in a fresh copy of the repository: with the
authors' pinned ReStore source (SSD_SOURCES, as CI sets it) their four programs are built, patched,
and run beside restore-sim on a tiny stream; without it, the rule is left out of the run (its CSVs
are marked 'not run: pinned sources unreachable'). Slow: it builds restore-sim and their programs."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ssdartifact import sources

pytestmark = pytest.mark.e2e

SYSTEMS = ("core", "workflow", "labs", "systems/ace", "systems/cave", "systems/emussd", "systems/pio",
           "systems/restore")


def snakemake(clone: Path, *arguments: str, **environment) -> subprocess.CompletedProcess:
    """Snakemake in the copy, with the copy's own Python packages (not the checkout's)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")} | environment
    env["PYTHONPATH"] = os.pathsep.join(str(clone / path) for path in SYSTEMS)
    return subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", *arguments, "--config",
                           "profile=ci-original"], cwd=clone, env=env, capture_output=True, text=True)


def rows(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_rule_runs_the_authors_programs_beside_ours_and_is_left_out_without_their_source(clone, tmp_path):
    found, why = sources.where_from("restore_original", tmp_path / "downloads")
    if found is None:
        pytest.skip(f"the authors' ReStore source is not here: {why}")
    profile = yaml.safe_load((clone / "configs/profiles/ci.yaml").read_text())
    profile["name"] = "ci-original"
    profile["restore"]["figures"] = {"original": {"workloads": ["5hf90"], "pages": 1000, "requests": 3000,
                                                  "repeats": 2}}
    (clone / "configs/profiles/ci-original.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))
    target = "results/restore/original_summary.csv"

    offline = snakemake(clone, "-n", "results/claims/claims.csv", SSD_SOURCES=str(tmp_path / "empty"))
    assert offline.returncode == 0, offline.stdout[-2000:] + offline.stderr[-2000:]
    assert "rule check_claims:" in offline.stdout and "run_restore_original" not in offline.stdout

    done = snakemake(clone, target)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    runs = rows(clone / "results/restore/original.csv")
    theirs = [r for r in runs if r["implementation"] == "authors"]
    assert sorted((r["policy"], r["repeat"]) for r in theirs) == sorted(
        (p, str(n)) for p in ("restore", "tlfu", "temp", "tlru") for n in (1, 2))
    assert all(r["requests"] == "3000" and r["capacity_pages"].startswith("30:80:") for r in runs)
    assert all(int(r["accesses_t1"]) + int(r["accesses_t2"]) + int(r["accesses_t3"]) == 3000 for r in runs)
    summary = {(r["implementation"], r["policy"]): r for r in rows(clone / target)}
    assert len(summary) == 8 and float(summary[("authors", "tlfu")]["vs_tlfu"]) == 1
    # the two tLFUs serve each tier alike (ties between pages of equal frequency aside)
    assert float(summary[("artifact", "tlfu")]["tier_gap"]) < 0.03
    sidecar = json.loads((clone / f"{target}.json").read_text())
    assert sidecar["tools"]["restore_original"].startswith("BU-DiSC/ReStore@8144333f923c patched")
    assert any(path.endswith("Run_RL") for path in sidecar["inputs"])
