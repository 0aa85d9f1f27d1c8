"""Chapter 5's run plan (cave.plan) and its per-figure summary (cave.results), on the committed
configs and on small hand-made ones."""

from __future__ import annotations

import pandas as pd
import pytest

from cave import plan
from cave.results import COMPARISON_COLUMNS, FIGURE_COLUMNS, RUN_COLUMNS, TABLE_5_2_COLUMNS, compare, preprocessing, \
    summarize
from ssdartifact import config

EXPERIMENT = config.load("experiments/cave.yaml")
DATASETS = config.load("datasets.yaml")


def profile(**figures) -> dict:
    return {"graph_size": "tiny", "repetitions": 2, "figures": figures}


def test_figures_5_5_and_5_8_share_their_bfs_runs():
    threads = [1, 4, 16]
    cave = profile(fig_5_5={"devices": ["emu-pcie"], "io_threads": threads},
                   fig_5_8={"devices": ["emu-pcie", "emu-sata"], "io_threads": threads})
    pcie = plan.device_points(EXPERIMENT, cave, DATASETS, "emu-pcie")
    assert len(pcie) == len(threads) * 2  # repetitions, once for both figures
    assert {p["algorithm"] for p in pcie} == {"bfs"} and {p["variant"] for p in pcie} == {"blocked"}
    assert {p["cache_floor_blocks"] for p in pcie} == {16}  # the largest point's slots at every point
    assert len(plan.device_points(EXPERIMENT, cave, DATASETS, "emu-sata")) == len(threads) * 2
    assert plan.cave_devices(cave) == ["emu-pcie", "emu-sata"]


def test_a_figure_may_repeat_its_points_more_often_than_the_profile_s_default():
    cave = profile(fig_5_6={"devices": ["emu-pcie"], "cache_fractions": [0.1, 0.3], "graphs": ["social"],
                            "repetitions": 3},
                   fig_5_8={"devices": ["emu-pcie"], "io_threads": [1, 4]})
    points = plan.device_points(EXPERIMENT, cave, DATASETS, "emu-pcie")
    assert sorted(p["repetition"] for p in points if p["algorithm"] == "bfs" and p["io_threads"] == "device") == \
        [0] * 4 + [1] * 4 + [2] * 4  # 2 variants x 2 cache sizes, 3 times
    assert sorted(p["repetition"] for p in points if p["io_threads"] in (1, 4)) == [0, 0, 1, 1]  # the default 2


def test_a_cache_figure_runs_both_variants_on_every_graph_at_the_device_s_k_r():
    fractions = [0.01, 0.1]
    points = plan.device_points(EXPERIMENT, profile(fig_5_10={"devices": ["emu-pcie"], "cache_fractions": fractions}),
                                DATASETS, "emu-pcie")
    graphs = EXPERIMENT["figures"]["fig_5_10"]["graphs"]
    assert len(points) == len(graphs) * 2 * len(fractions) * 2
    assert {p["io_threads"] for p in points} == {"device"}
    assert {plan.resolve(p, 80)["io_threads"] for p in points} == {80}
    assert {p["spec"]["name"] for p in points} == {f"{g}-tiny" for g in graphs}


def test_a_figure_may_use_another_graph_size_and_the_profile_replaces_algorithm_options():
    cave = {**profile(fig_5_13b={"devices": ["emu-pcie"], "io_threads": [1, 2], "graph_size": "small"}),
            "algorithm_options": {"dfs": {"dfs_threshold": 4}}}
    point = plan.device_points(EXPERIMENT, cave, DATASETS, "emu-pcie")[0]
    assert point["spec"] == {"name": "social-small", "generator": "rmat", "seed": 1, "scale": 16, "edge_factor": 16}
    assert point["options"] == {"source": 0, "dfs_threshold": 4}


@pytest.mark.parametrize("cave, message", [
    (profile(fig_5_8={"devices": ["emu-pcie"]}), "a concurrency figure needs io_threads"),
    (profile(fig_5_6={"devices": ["emu-pcie"]}), "a cache figure needs cache_fractions"),
    (profile(fig_5_2={"devices": ["emu-pcie"], "io_threads": [1, 2]}), "configs/experiments/cave.yaml has no such"),
])
def test_incomplete_figures_are_refused_with_the_key_to_fix(cave, message):
    with pytest.raises(plan.PlanError, match=message):
        plan.figure_grids(EXPERIMENT, cave)


def test_unknown_graphs_and_sizes_name_what_exists():
    with pytest.raises(plan.PlanError, match="sizes tiny, dense, compare, small, medium, thesis"):
        plan.graph_spec(DATASETS, "social", "huge")
    with pytest.raises(plan.PlanError, match="social, road, synthetic"):
        plan.graph_spec(DATASETS, "web", "tiny")


def run(system, io_threads, cache_fraction, runtime, repetition=0, graph="social"):
    row = {c: None for c in RUN_COLUMNS}
    row.update(device="emu-pcie", device_kind="emulated", device_k_r=80, graph=graph, dataset=f"{graph}-tiny",
               system=system, algorithm="bfs", variant={"CAVE": "nonblocked", "CAVE_blocked": "blocked"}.get(system),
               io_threads=io_threads, cache_fraction=cache_fraction, runtime_s=runtime, repetition=repetition)
    return row


def test_summary_averages_repetitions_and_normalizes_each_line():
    runs = pd.DataFrame([run("CAVE_blocked", 1, 0.03, 8.0), run("CAVE_blocked", 1, 0.03, 10.0, repetition=1),
                         run("CAVE_blocked", 4, 0.03, 3.0),
                         run("CAVE_blocked", 16, 0.03, 2.0)]).assign(figure="fig_5_8")
    out = summarize(runs, {"fig_5_8": ""})
    assert list(out.columns) == list(FIGURE_COLUMNS)
    assert out["runtime_s"].tolist() == [9.0, 3.0, 2.0]
    assert out["repetitions"].tolist() == [2, 1, 1]
    assert out["runtime_min_s"].tolist() == [8.0, 3.0, 2.0] and out["runtime_max_s"].tolist() == [10.0, 3.0, 2.0]
    assert out["speedup_vs_first"].tolist() == [1.0, 3.0, 4.5]
    assert out["relative_to_best"].tolist() == [4.5, 1.5, 1.0]


def test_a_cache_figure_s_lines_vary_the_cache_and_keep_the_reference_apart():
    runs = pd.DataFrame([run("CAVE", 80, 0.01, 6.0), run("CAVE", 80, 0.1, 2.0), run("CAVE_blocked", 80, 0.01, 1.0),
                         run("CAVE_blocked", 80, 0.1, 1.1), run("in-memory reference (scipy)", None, None, 0.1)])
    out = summarize(runs.assign(figure="fig_5_6"), {"fig_5_6": ""})
    by = {(r.system, r.cache_fraction): r for r in out.itertuples()}
    assert by[("CAVE", 0.01)].relative_to_best == 3.0 and by[("CAVE", 0.1)].relative_to_best == 1.0
    assert by[("CAVE_blocked", 0.1)].relative_to_best == pytest.approx(1.1)
    reference = out[out["system"] == "in-memory reference (scipy)"]
    assert len(reference) == 1 and reference["relative_to_best"].iloc[0] == 1.0


# --------------------------------------------------------------------------- the baselines


def test_a_cache_figure_runs_each_baseline_at_every_cache_share_in_their_own_campaign():
    fractions = [0.05, 0.3]
    cave = profile(fig_5_6={"devices": ["emu-pcie"], "cache_fractions": fractions, "graphs": ["social"]})
    ours = plan.device_points(EXPERIMENT, cave, DATASETS, "emu-pcie")
    theirs = plan.device_points(EXPERIMENT, cave, DATASETS, "emu-pcie", baselines=True)
    assert {p["kind"] for p in ours} == {"run"} and {p["kind"] for p in theirs} == {"baseline"}
    assert sorted((p["system"], p["cache_fraction"]) for p in theirs) == \
        sorted((s, f) for s in ("graphchi", "gridgraph", "mosaic") for f in fractions for _ in range(2))  # 2 each
    assert {p["io_threads"] for p in theirs} == {"device"} and {p["options"]["source"] for p in theirs} == {0}
    assert plan.baseline_devices(EXPERIMENT, cave) == ["emu-pcie"]
    assert plan.baseline_systems(EXPERIMENT, cave) == ["graphchi", "gridgraph", "mosaic"]


def test_a_profile_may_run_fewer_baselines_or_none():
    cave = profile(fig_5_6={"devices": ["emu-pcie"], "cache_fractions": [0.1, 0.3], "baselines": ["gridgraph"]},
                   fig_5_10={"devices": ["emu-sata"], "cache_fractions": [0.1, 0.3], "baselines": []})
    assert {p["system"] for p in plan.device_points(EXPERIMENT, cave, DATASETS, "emu-pcie", baselines=True)} == \
        {"gridgraph"}
    assert plan.device_points(EXPERIMENT, cave, DATASETS, "emu-sata", baselines=True) == []
    assert plan.baseline_devices(EXPERIMENT, cave) == ["emu-pcie"]


def test_graphx_runs_wcc_in_figure_5_11_beside_the_out_of_core_baselines():
    theirs = plan.device_points(EXPERIMENT, profile(fig_5_11={"devices": ["emu-pcie"]}), DATASETS, "emu-pcie",
                                baselines=True)
    graphs = EXPERIMENT["figures"]["fig_5_11"]["graphs"]
    assert {p["system"] for p in theirs if p["graph"] == graphs[0]} == {"graphchi", "graphx", "gridgraph", "mosaic"}
    assert {p["algorithm"] for p in theirs} == {"wcc"} and {p["graph"] for p in theirs} == set(graphs)


def test_comparisons_share_their_points_and_table_5_2_adds_cave_s_own_preprocessing():
    cave = profile(fig_5_1b={"devices": ["emu-pcie"]}, fig_5_9a={"devices": ["emu-pcie"]},
                   table_5_2={"devices": ["emu-pcie"]})
    ours = plan.device_points(EXPERIMENT, cave, DATASETS, "emu-pcie")
    theirs = plan.device_points(EXPERIMENT, cave, DATASETS, "emu-pcie", baselines=True)
    graphs = EXPERIMENT["figures"]["fig_5_9a"]["graphs"]  # 5.1B's graphs are among them
    assert len(ours) == len(graphs) * 2 and {p["variant"] for p in ours} == {"blocked"}
    assert {p["cache_fraction"] for p in ours + [p for p in theirs if p["kind"] == "baseline"]} == {0.03}
    assert len([p for p in theirs if p["kind"] == "baseline"]) == len(graphs) * 3 * 2  # 3 baselines, 2 repetitions
    assert sorted(p["graph"] for p in theirs if p["kind"] == "preprocess") == ["social", "social"]


@pytest.mark.parametrize("figures, message", [
    ({"fig_5_6": {"devices": ["emu-pcie"], "cache_fractions": [0.1, 0.3], "baselines": ["xstream"]}},
     "'xstream' is not a baseline this artifact runs"),
    ({"table_5_2": {"devices": ["emu-pcie"], "baselines": []}}, "Table 5.2 needs at least one baseline"),
    ({"fig_5_10": {"devices": ["emu-pcie"], "cache_fractions": [0.1], "baselines": ["graphx"]}},
     "graphx runs in the comparisons of WCC only .Figure 5.11., as the thesis ran it, not in a figure of wcc .cache."),
    ({"fig_5_1b": {"devices": ["emu-pcie"], "baselines": ["gridgraph", "graphx"]}}, "not in a figure of bfs"),
])
def test_unknown_or_missing_baselines_are_refused(figures, message):
    with pytest.raises(plan.PlanError, match=message):
        plan.figure_grids(EXPERIMENT, profile(**figures))


def baseline(system, graph, runtime, status="ran", repetition=0, fraction=0.03, limit=60.0):
    row = run(system, 80, fraction, runtime, graph=graph, repetition=repetition)
    row.update(experiment="baseline", variant=None, status=status, reason="" if status == "ran" else "why",
               time_limit_s=limit)
    return row


def test_a_comparison_gives_cave_s_speedup_over_each_baseline_and_keeps_why_one_did_not_run():
    grid = {"kind": "comparison", "devices": ["emu-pcie"], "algorithm": "bfs", "variant": "blocked",
            "graphs": ["social", "road"], "graph_size": "tiny", "baselines": ["graphchi", "gridgraph"],
            "cache_fraction": 0.03}
    runs = pd.DataFrame([run("CAVE_blocked", 80, 0.03, 2.0), run("CAVE_blocked", 80, 0.03, 4.0, repetition=1),
                         run("CAVE_blocked", 64, 0.03, 1.0),  # a concurrency sweep's point: not 80 = k_r
                         run("CAVE", 80, 0.03, 1.0),          # the other variant
                         run("CAVE_blocked", 80, 0.03, 0.5, graph="road"),
                         baseline("GridGraph", "social", 30.0), baseline("GridGraph", "social", 60.0, repetition=1),
                         baseline("GraphChi", "social", None, status="timed_out"),
                         baseline("GraphChi", "road", None, status="cannot_run"),
                         baseline("GridGraph", "road", 5.0, fraction=0.1),  # another cache share
                         run("in-memory reference (scipy)", None, None, 0.1)])
    rows = plan.figure_rows(runs, "fig_5_1b", grid)
    out = compare(rows, "CAVE_blocked")
    assert list(out.columns) == list(COMPARISON_COLUMNS)
    by = {(r.graph, r.system): r for r in out.itertuples()}
    assert set(by) == {("social", "CAVE_blocked"), ("social", "GridGraph"), ("social", "GraphChi"),
                       ("road", "CAVE_blocked"), ("road", "GraphChi")}
    assert by[("social", "CAVE_blocked")].runtime_s == 3.0 and by[("social", "CAVE_blocked")].speedup == 1.0
    assert by[("social", "GridGraph")].speedup == 15.0 and by[("social", "GridGraph")].repetitions == 2
    chi = by[("social", "GraphChi")]
    assert (chi.status, chi.repetitions, chi.speedup_at_least) == ("timed_out", 0, 20.0) and pd.isna(chi.speedup)
    assert (by[("road", "GraphChi")].status, by[("road", "GraphChi")].reason) == ("cannot_run", "why")
    assert pd.isna(by[("road", "GraphChi")].speedup_at_least)


def test_table_5_2_takes_the_median_preprocessing_of_each_system():
    grid = {"kind": "preprocess", "devices": ["emu-pcie"], "algorithm": "bfs", "graphs": ["social"],
            "graph_size": "tiny", "baselines": ["gridgraph"]}
    rows = [{**run("CAVE", None, None, None, repetition=r), "experiment": "preprocess", "algorithm": None,
             "preprocess_s": s, "disk_bytes": 100} for r, s in enumerate((1.0, 3.0, 2.0))]
    rows += [{**baseline("GridGraph", "social", 9.0), "preprocess_s": 4.0, "disk_bytes": 300},
             {**baseline("GridGraph", "social", 9.0, fraction=0.1), "algorithm": "wcc", "preprocess_s": 8.0}]
    out = preprocessing(plan.figure_rows(pd.DataFrame(rows), "table_5_2", grid))
    assert list(out.columns) == list(TABLE_5_2_COLUMNS)
    by = {r.system: r for r in out.itertuples()}
    assert (by["CAVE"].preprocess_s, by["CAVE"].repetitions, by["CAVE"].disk_bytes) == (2.0, 3, 100)
    assert (by["GridGraph"].preprocess_s, by["GridGraph"].disk_bytes) == (4.0, 300)  # its WCC grid left out
