"""Chapter 5's run plan (cave.plan) and its per-figure summary (cave.results), on the committed
configs and on small hand-made ones."""

from __future__ import annotations

import pandas as pd
import pytest

from cave import plan
from cave.results import FIGURE_COLUMNS, RUN_COLUMNS, summarize
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
    (profile(fig_5_7={"devices": ["emu-pcie"], "io_threads": [1, 2]}), "configs/experiments/cave.yaml has no such"),
])
def test_incomplete_figures_are_refused_with_the_key_to_fix(cave, message):
    with pytest.raises(plan.PlanError, match=message):
        plan.figure_grids(EXPERIMENT, cave)


def test_unknown_graphs_and_sizes_name_what_exists():
    with pytest.raises(plan.PlanError, match="sizes tiny, dense, small, medium, thesis"):
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
