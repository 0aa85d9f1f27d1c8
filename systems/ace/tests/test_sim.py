"""The bufferpool simulator (systems/ace/sim): its GoogleTest suite via ctest, and the command
line as the workflow uses it through ace.sim."""

from __future__ import annotations

import subprocess

import pytest

from ace.sim import SIM_BUILD, SimError, build, run, run_grid
from ssdartifact.native import googletest_failures

SMALL = {"pool_pages": 200, "synthetic": True, "ops": 20_000, "pages": 2_000}


@pytest.fixture(scope="module")
def binary():
    return build()


def test_googletest_unit_tests_pass(binary):
    """Thesis Figure 4.6 and the slides' examples, Clock Sweep, CFLRU, ExpCache, the virtual
    time, ACE's invariants, the PIO model check and determinism (tests/*.cc)."""
    failures = googletest_failures(SIM_BUILD, "-j2", timeout=600)
    assert not failures, failures


def test_build_is_a_no_op_when_up_to_date(binary):
    before = binary.stat().st_mtime_ns
    assert build() == binary
    assert binary.stat().st_mtime_ns == before


@pytest.mark.parametrize("args, message", [
    (["--policy", "arc"], "--policy must be one of lru, cflru, lru_wsr, clock, expcache"),
    (["--prefetch", "history"], "--prefetch needs --ace on"),
    (["--alpha", "-1"], "--alpha must be in"),
    (["--pool-pages", "ten"], "--pool-pages needs a number"),
    (["--trace", "x.csv"], "give either --trace FILE or --synthetic"),
    (["--frobnicate", "1"], "unknown option --frobnicate"),
])
def test_bad_arguments_exit_2_with_a_clear_message(binary, args, message):
    base = ["--pool-pages", "10", "--synthetic", "--ops", "10", "--pages", "100"]
    proc = subprocess.run([str(binary), *base, *args], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert f"ace-sim: error: {message}" in proc.stderr
    assert "--help" in proc.stderr


def test_a_missing_trace_is_refused(binary, tmp_path):
    with pytest.raises(SimError, match="cannot read trace file"):
        run(binary, pool_pages=10, trace=tmp_path / "missing.csv")


def test_help(binary):
    proc = subprocess.run([str(binary), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--pool-pages" in proc.stdout


def test_run_returns_the_row_with_numbers(binary):
    row = run(binary, policy="lru", ace=True, n_w=8, k_w=8, alpha=2.8, **SMALL)
    assert row["policy"] == "lru" and row["ace"] == "on" and row["n_w"] == 8
    assert row["accesses"] == 20_000 == row["hits"] + row["misses"]
    assert row["hit_ratio"] == pytest.approx(row["hits"] / row["accesses"], abs=1e-6)
    assert row["workload"] == "synthetic" and row["ops"] == 20_000
    assert row["pages_written"] >= row["write_batches"] > 0


def test_grid_output_equals_per_point_output(binary, tmp_path):
    trace = tmp_path / "t.simple"
    trace.write_text("".join(f"{'W' if i % 3 == 0 else 'R'} {i * 7 % 50}\n" for i in range(400)))
    rows = [
        {"policy": "lru", "ace": False, "synthetic": True, "ops": 20_000, "pages": 2_000},
        {"policy": "clock", "ace": True, "n_w": 4, "alpha": 3, "synthetic": True, "ops": 20_000, "pages": 2_000},
        {"policy": "cflru", "ace": True, "trace": trace, "trace_format": "simple"},
        {"policy": "lru_wsr", "ace": True, "prefetch": "history", "synthetic": True, "ops": 20_000,
         "pages": 2_000, "read_pct": 10},
        {"policy": "expcache", "ace": True, "seed": 3, "synthetic": True, "ops": 20_000, "pages": 2_000},
    ]
    shared = {"pool_pages": 30, "k_w": 4}
    grid = run_grid(binary, rows, **shared)
    points = [run(binary, **{**shared, **row}) for row in rows]
    assert grid == points
    assert [r["policy"] for r in grid] == ["lru", "clock", "cflru", "lru_wsr", "expcache"]
    assert grid[2]["workload"] == "t.simple"


def test_ace_speeds_up_a_write_heavy_workload_and_never_slows_down_a_read_only_one(binary):
    common = dict(policy="lru", pool_pages=500, synthetic=True, ops=50_000, pages=5_000, alpha=2.8, k_w=8)
    write_heavy = [run(binary, ace=ace, read_pct=10, **common) for ace in (False, True)]
    read_only = [run(binary, ace=ace, read_pct=100, **common) for ace in (False, True)]
    assert write_heavy[0]["virtual_runtime_us"] / write_heavy[1]["virtual_runtime_us"] > 1.5
    assert read_only[0]["virtual_runtime_us"] == read_only[1]["virtual_runtime_us"]
    assert read_only[1]["pages_written"] == 0


def test_build_without_cmake_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr("ssdartifact.native.shutil.which", lambda tool: None if tool == "cmake" else "/usr/bin/" + tool)
    with pytest.raises(SimError, match=r"cmake not found: .*apt-get install cmake g\+\+ libgtest-dev"):
        build(tmp_path / "build")
