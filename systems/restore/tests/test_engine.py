"""restore-sim: its GoogleTest suite via ctest, the command line's errors and determinism."""

from __future__ import annotations

import subprocess

import pytest

from restore.engine import BUILD_DIR, RestoreError, run, run_grid
from ssdartifact.native import googletest_failures

SMALL = {"pages": 1000, "requests": 20_000}


def test_googletest_unit_tests_pass(binary):
    """Queueing against closed forms, every policy on hand-made traces, the RL update by hand,
    memberships, workloads, trace reading, CLI (tests/*.cc)."""
    failures = googletest_failures(BUILD_DIR, "-j2", timeout=600)
    assert not failures, failures


@pytest.mark.parametrize("args, message", [
    (["--policy", "arc"], "--policy must be static, tlfu, tlru, lrfu, exd, temp, restore"),
    (["--alpha", "1:2"], "--alpha has 2 values for 3 tiers"),
    (["--capacity-pct", "1:2:50"], "the tiers hold"),
    (["--clients", "0"], "--clients must be in [1, 1000000]"),
    (["--workload", "7hf"], "--workload:"),
    (["--engine", "gpu"], "--engine must be sim or emu"),
    (["--frobnicate", "1"], "unknown option --frobnicate"),
])
def test_bad_arguments_exit_2_naming_the_option(binary, args, message):
    proc = subprocess.run([str(binary), "--requests", "10", *args], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert f"restore-sim: error: {message}" in proc.stderr


def test_errors_reach_python_with_the_tools_message(binary, tmp_path):
    with pytest.raises(RestoreError, match="cannot read trace file"):
        run(binary, trace=tmp_path / "missing.csv")


def test_help_lists_every_option(binary):
    out = subprocess.run([str(binary), "--help"], capture_output=True, text=True).stdout
    for option in ("--engine", "--capacity-pct", "--server-model", "--arrival", "--rl-decision", "--temp-timestep",
                   "--dump-trace", "--grid"):
        assert option in out


def test_same_seed_same_bytes(binary):
    cmd = [str(binary), "--policy", "all", "--workload", "A", "--pages", "2000", "--requests", "50000",
           "--cpu-timing", "off"]
    first = subprocess.run(cmd, capture_output=True, check=True).stdout
    second = subprocess.run(cmd, capture_output=True, check=True).stdout
    assert first == second
    other = subprocess.run([*cmd, "--seed", "2"], capture_output=True, check=True).stdout
    assert other != first


def test_rows_are_converted_and_consistent(binary):
    rows = run(binary, policy="all", **SMALL)
    assert [r["policy"] for r in rows] == ["static", "tlfu", "tlru", "lrfu", "exd", "temp", "restore"]
    for r in rows:
        assert r["reads"] + r["writes"] == r["requests"] == 20_000
        assert r["accesses_t1"] + r["accesses_t2"] + r["accesses_t3"] == r["requests"]
        assert r["runtime_us"] == pytest.approx(r["data_access_us"] + r["cpu_us"], abs=1e-2)
        assert r["overhead_us_per_access"] > 0 and r["policy_memory_bytes"] > 0
        assert r["capacity_pages"] == "30:80:1000"
    static = rows[0]
    assert static["migrations_total"] == 0
    assert rows[2]["migrations_t2_t1"] > rows[1]["migrations_t2_t1"]  # recency churns more than frequency


def test_grid_matches_single_runs(binary):
    configs = [{"policy": "tlfu", "capacity_pct": [1, 4, 100]}, {"policy": "static:temp", "workload": "C"},
               {"policy": "restore", "seed": 3}]
    grid = run_grid(binary, configs, jobs=2, cpu_timing=False, **SMALL)
    single = [r for c in configs for r in run(binary, cpu_timing=False, **SMALL, **c)]
    assert [r["policy"] for r in grid] == ["tlfu", "static", "temp", "restore"]
    assert grid == single
