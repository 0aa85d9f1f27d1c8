"""Chapter 4's experiment plumbing without a server: pgbench's report, the grids of each
figure, shared runs, and the speedups and deltas of the figure CSVs."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace import experiment, plan, results
from ssdartifact import config

DATA = Path(__file__).parent / "data"


def test_pgbench_report_with_several_scripts():
    parsed = experiment.parse_pgbench((DATA / "pgbench_two_scripts.txt").read_text())
    assert parsed["transactions"] == 100 and parsed["failed"] == 0
    assert parsed["tps"] == pytest.approx(20916.126333) and parsed["latency_ms"] == pytest.approx(0.096)
    assert parsed["per_script"] == {"a": 76, "b": 24}


def test_pgbench_report_with_one_script():
    parsed = experiment.parse_pgbench((DATA / "pgbench_one_script.txt").read_text())
    assert parsed["transactions"] == 100 and parsed["per_script"] == {"a": 100}


def test_a_report_without_its_numbers_is_an_error():
    with pytest.raises(experiment.ExperimentError, match="no .*tps"):
        experiment.parse_pgbench("pgbench (15.18)\nnumber of transactions actually processed: 1/1\n"
                                 "number of failed transactions: 0 (0.000%)\nlatency average = 1 ms\n")


class _ServerShowing:
    """A server that answers current_setting(...) with the given settings, as psql -A -t prints them."""

    def __init__(self, **settings):
        self.settings = settings

    def sql(self, query: str) -> str:
        return "|".join(str(self.settings[name]) for name in re.findall(r"current_setting\('(\w+)'\)", query))


@pytest.mark.parametrize("variant,n_w_effective,n_e_effective,refused", [
    ("ace_pf", 8, 8, False), ("ace", 8, 1, False), ("baseline", 1, 1, False),
    ("ace_pf", 8, 3, True),  # the pool allows fewer pages at once than n_e
    ("ace", 3, 1, True), ("ace", 8, 8, True),  # a server prefetching in a run without prefetching
])
def test_a_run_whose_server_batches_less_than_its_n_w_is_refused(variant, n_w_effective, n_e_effective, refused):
    run = experiment.Run(database=experiment.Database("synthetic", 1), workload="MS", policy="lru", variant=variant,
                         n_w=8, n_e=8, pool_fraction=0.001, clients=1, transactions=1, warmup_transactions=0,
                         seed=1, repetition=0, read_pct=50, hot_ops_pct=90, hot_pages_pct=10)
    server = _ServerShowing(ace_n_w_effective=n_w_effective, ace_n_e_effective=n_e_effective, shared_buffers="128kB")
    if refused:
        with pytest.raises(experiment.ExperimentError,
                           match="at most 1 \\+ shared_buffers / 8 pages.*larger pool_fraction"):
            experiment.check_batch_sizes(server, run)
    else:
        experiment.check_batch_sizes(server, run)


@pytest.fixture(scope="module")
def ace_config():
    return config.load("experiments/ace.yaml")


PROFILE = {"scale": 2, "clients": 2, "transactions": 100, "warmup_transactions": 10, "repetitions": 2, "figures": {
    "fig_4_8": {"devices": ["dev-a", "dev-b"]},
    "fig_4_12": {"devices": ["dev-a"], "pool_fractions": [0.02, 0.06]},
    "fig_4_13": {"devices": ["dev-a"], "n_ws": [1, 8]},
}}


def test_points_shared_by_figures_run_once(ace_config):
    runs = plan.runs(plan.device_points(ace_config, PROFILE, "dev-a"), PROFILE, 90, k_w=8)
    fig_4_8 = 4 * 4 * 3                    # workloads x policies x variants
    fig_4_12_new = 4 * 2                   # the 2 % pool, baseline and ace_pf (6 % is Figure 4.8's)
    fig_4_13_new = 4                       # ACE at n_w = 1 (n_w = k_w = 8 and the baselines are Figure 4.8's)
    assert len(runs) == 2 * (fig_4_8 + fig_4_12_new + fig_4_13_new)  # two repetitions
    assert len({run.key() for run in runs}) == len(runs)
    assert len(plan.runs(plan.device_points(ace_config, PROFILE, "dev-b"), PROFILE, 90, k_w=8)) == 2 * fig_4_8
    assert plan.ace_devices(PROFILE) == ["dev-a", "dev-b"]


def test_device_concurrency_and_repetitions(ace_config):
    runs = plan.runs(plan.device_points(ace_config, {**PROFILE, "figures": {"fig_4_13": {"devices": ["d"],
                                                                                         "n_ws": [2, 8]}}}, "d"),
                     PROFILE, 90, k_w=5)
    ace_runs = [r for r in runs if r.variant == "ace"]
    assert sorted({r.n_w for r in ace_runs}) == [2, 8] and {r.n_e for r in runs} == {5}
    assert {r.n_w for r in runs if r.variant == "baseline"} == {5}
    assert {r.repetition for r in runs} == {0, 1} and len({r.key() for r in runs}) == len(runs)


def test_a_figure_may_repeat_its_points_more_and_a_shared_point_runs_as_often_as_most_asked(ace_config):
    """Figure 4.11 repeated three times, Figure 4.8 twice (the profile's): the MS points both figures
    run (baseline and ace_pf) three times, every other point of Figure 4.8 twice."""
    profile = {**PROFILE, "figures": {"fig_4_8": {"devices": ["d"], "policies": ["clock"]},
                                      "fig_4_11": {"devices": ["d"], "policies": ["clock"], "repetitions": 3}}}
    runs = plan.runs(plan.device_points(ace_config, profile, "d"), profile, 90, k_w=8)
    per_point = {}
    for run in runs:
        per_point.setdefault((run.workload, run.variant, run.n_w), set()).add(run.repetition)
    assert len({run.key() for run in runs}) == len(runs)
    read_pcts = {plan.workload_name(ace_config, r, 90, 10) for r in ace_config["figures"]["fig_4_11"]["read_pcts"]}
    assert read_pcts >= {"MS"}
    in_fig_4_11 = {(w, v) for w in read_pcts for v in ace_config["figures"]["fig_4_11"]["variants"]}
    assert any(key[:2] in in_fig_4_11 for key in per_point) and any(key[:2] not in in_fig_4_11 for key in per_point)
    for (workload, variant, _), repetitions in per_point.items():
        assert repetitions == set(range(3 if (workload, variant) in in_fig_4_11 else 2)), (workload, variant)
    # the profile's count alone: two, as before
    assert {r.repetition for r in plan.runs(plan.device_points(ace_config, PROFILE, "dev-b"), PROFILE, 90, k_w=8)} \
        == {0, 1}


def test_a_device_measured_beyond_the_server_s_largest_batch_runs_at_it(ace_config):
    """The full profile characterizes up to 256 threads; ace_n_w above 64 would stop the server."""
    runs = plan.runs(plan.device_points(ace_config, {**PROFILE, "figures": {"fig_4_8": {"devices": ["d"]}}}, "d"),
                     PROFILE, 90, k_w=200)
    assert {r.n_w for r in runs} == {r.n_e for r in runs} == {plan.MAX_BATCH}
    patch = (Path(plan.__file__).parents[1] / "patches" / "0001-concurrent-io.patch").read_text()
    assert f"#define CONCURRENT_IO_MAX_BATCH {plan.MAX_BATCH}\n" in patch


def test_sweep_points_are_named_by_their_mix(ace_config):
    assert plan.workload_name(ace_config, 50, 90, 10) == "MS"
    assert plan.workload_name(ace_config, 0, 90, 10) == "R0-L90-10"


def _run_row(**fields):
    row = {"device": "d", "database_kind": "synthetic", "database_size": 2, "database_pages": 500,
           "device_kind": "emulated", "device_preset": None, "device_alpha": 2.0, "device_k_w": 8,
           "k_w_source": "declared", "workload": "MS", "read_pct": 50, "hot_ops_pct": 90, "hot_pages_pct": 10,
           "tpcc_mix": None, "pool_fraction": 0.06, "pool_pages": 100, "policy": "lru", "variant": "baseline",
           "n_w": 8, "n_e": 8, "clients": 2, "transactions": 100, "new_orders": None, "tps": 1.0,
           "device_written_pages": None, "ace_batches": 0, "prefetch_issued": 0, "dirty_pages_before": 50,
           "dirty_pages_after": 50}
    return {**row, **fields}


def test_speedup_and_deltas_against_the_same_policys_baseline():
    runs = pd.DataFrame([
        _run_row(variant="baseline", runtime_s=3.0, misses=1000, logical_writes=400, repetition=0),
        _run_row(variant="baseline", runtime_s=5.0, misses=1000, logical_writes=400, repetition=1),
        _run_row(variant="ace", runtime_s=2.0, misses=1010, logical_writes=404, repetition=0),
        _run_row(variant="ace", n_w=2, runtime_s=3.2, misses=1000, logical_writes=390, repetition=0,
                 dirty_pages_after=60),
        _run_row(variant="baseline", policy="clock", runtime_s=9.0, misses=1, logical_writes=1, repetition=0),
    ])
    table = results.summarize(runs).set_index(["policy", "variant", "n_w"])
    assert table.loc[("lru", "baseline", 8), "runtime_s"] == 4.0
    assert table.loc[("lru", "baseline", 8), "repetitions"] == 2
    assert table.loc[("lru", "ace", 8), "speedup"] == pytest.approx(2.0)
    assert table.loc[("lru", "ace", 8), "runtime_reduction_pct"] == pytest.approx(50.0)
    assert table.loc[("lru", "ace", 8), "delta_misses_pct"] == pytest.approx(1.0)
    assert table.loc[("lru", "ace", 8), "delta_logical_writes_pct"] == pytest.approx(1.0)
    assert table.loc[("lru", "ace", 2), "speedup"] == pytest.approx(1.25)
    # 10 fewer pages written, but 10 more left dirty in the pool: the same writes owed
    assert table.loc[("lru", "ace", 2), "delta_logical_writes_pct"] == pytest.approx(0.0)
    assert pd.isna(table.loc[("lru", "ace", 8), "delta_device_writes_pct"])
    assert table.loc[("clock", "baseline", 8), "speedup"] == 1.0


def test_tpcc_points_take_their_sizes_and_run_lengths(ace_config):
    profile = {**PROFILE, "warehouses": 3, "tpcc_clients": 4, "tpcc_transactions": 20, "tpcc_warmup_transactions": 5,
               "figures": {
        "fig_4_15": {"devices": ["d"], "policies": ["lru"]},
        "fig_4_16": {"devices": ["d"], "warehouses": [3, 6]},
    }}
    runs = plan.runs(plan.device_points(ace_config, profile, "d"), profile, 90, k_w=8)
    mixes = {(r.database.size, r.tpcc_mix) for r in runs}
    assert {(3, m) for m in ("mix", "new_order", "payment", "order_status", "delivery", "stock_level")} <= mixes
    assert (6, "mix") in mixes and (6, "delivery") not in mixes
    assert {r.database.kind for r in runs} == {"tpcc"} and {r.transactions for r in runs} == {20}
    assert {r.warmup_transactions for r in runs} == {5} and {r.read_pct for r in runs} == {None}
    assert {r.clients for r in runs} == {4}
    # the 3-warehouse LRU mix is shared by both figures
    assert len([r for r in runs if (r.database.size, r.tpcc_mix, r.policy) == (3, "mix", "lru")]) == 2 * 2


def test_a_run_is_either_synthetic_or_tpcc():
    fields = {"database": experiment.Database("synthetic", 1), "workload": "MS", "policy": "lru", "n_w": 4,
              "n_e": 4, "pool_fraction": 0.1, "clients": 1, "transactions": 10, "warmup_transactions": 0, "seed": 1,
              "repetition": 0}
    with pytest.raises(ValueError, match="either synthetic"):
        experiment.Run(variant="ace", tpcc_mix="mix", read_pct=50, hot_ops_pct=90, hot_pages_pct=10, **fields)
    with pytest.raises(ValueError, match="variant 'fast'"):
        experiment.Run(variant="fast", read_pct=50, hot_ops_pct=90, hot_pages_pct=10, **fields)


# ---- placing a run's cluster: mirror rewrites the last run's in place

def _tree(root: Path) -> dict:
    """Every entry under root: kind, mode and content (or link target), by relative path."""
    found = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_symlink():
            found[name] = ("link", os.readlink(path))
        elif path.is_dir():
            found[name] = ("dir", path.stat().st_mode & 0o7777)
        else:
            found[name] = ("file", path.stat().st_mode & 0o7777, path.read_bytes())
    return found


_NAMES = st.sampled_from(["a", "b", "c", "pg_wal", "postmaster.pid"])
_CONTENT = st.binary(max_size=3 * experiment.MIRROR_CHUNK // 2) | st.sampled_from([b"", b"\0" * 5000])
_TREE = st.recursive(_CONTENT | st.tuples(st.just("link"), st.sampled_from(["a", "../x", "/nowhere"])),
                     lambda children: st.dictionaries(_NAMES, children, max_size=4), max_leaves=12)


def _build(root: Path, spec) -> None:
    for name, child in spec.items():
        path = root / name
        if isinstance(child, dict):
            path.mkdir()
            path.chmod(0o750)
            _build(path, child)
        elif isinstance(child, tuple):
            path.symlink_to(child[1])
        else:
            path.write_bytes(child)
            path.chmod(0o640 if len(child) % 2 else 0o600)


@settings(max_examples=150, deadline=None)
@given(source=st.dictionaries(_NAMES, _TREE, max_size=5), earlier=st.dictionaries(_NAMES, _TREE, max_size=5))
def test_mirror_makes_any_earlier_tree_an_exact_copy_of_the_source(tmp_path_factory, source, earlier):
    root = tmp_path_factory.mktemp("mirror")
    (root / "source").mkdir()
    (root / "target").mkdir()
    _build(root / "source", source)
    _build(root / "target", earlier)  # what the last run left: other files, kinds, sizes and links
    experiment.mirror(root / "source", root / "target", exclude=("pg_wal", "postmaster.*"))
    expected = {name: entry for name, entry in _tree(root / "source").items()
                if name.split("/")[0] not in ("pg_wal", "postmaster.pid")}
    assert _tree(root / "target") == expected


def test_mirror_writes_only_the_chunks_that_differ(tmp_path):
    chunk = experiment.MIRROR_CHUNK
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "f").write_bytes(b"a" * chunk + b"b" * chunk + b"c" * chunk)
    experiment.mirror(tmp_path / "source", tmp_path / "target")
    placed = tmp_path / "target" / "f"
    placed.write_bytes(b"a" * chunk + b"X" * chunk + b"c" * chunk + b"tail")  # a run changed one chunk and grew
    inode = placed.stat().st_ino
    writes = []
    real_pwrite = os.pwrite
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "pwrite", lambda fd, data, offset: writes.append(offset) or real_pwrite(fd, data, offset))
        experiment.mirror(tmp_path / "source", tmp_path / "target")
    assert writes == [chunk] and placed.stat().st_ino == inode  # the same file, one chunk rewritten
    assert placed.read_bytes() == (tmp_path / "source" / "f").read_bytes()


def test_mirror_creates_the_target_and_its_parents(tmp_path):
    (tmp_path / "source" / "sub").mkdir(parents=True)
    (tmp_path / "source" / "sub" / "f").write_bytes(b"data")
    experiment.mirror(tmp_path / "source", tmp_path / "wal" / "baseline")
    assert _tree(tmp_path / "wal" / "baseline") == _tree(tmp_path / "source")
