"""ACE's ideal speedup from the simulator (Figures 4.2 and 4.14A) on a small workload."""

from __future__ import annotations

import pytest

from ace import ideal, sim

SIMULATOR = {"workload": {"ops": 20000, "pages": 2000, "hot_ops_pct": 90, "hot_pages_pct": 10, "seed": 3},
             "pool_fraction": 0.06, "read_latency_us": 100,
             "fig_4_2": {"presets": ["slow-writes", "fast-writes"], "read_pcts": [0, 50, 100]},
             "fig_4_14a": {"alphas": [1, 4], "n_ws": [1, 4, 8], "device": "k8", "read_pct": 0}}
MODELS = {"slow-writes": {"alpha": 4, "k_r": 8, "k_w": 8}, "fast-writes": {"alpha": 1, "k_r": 8, "k_w": 8}}


@pytest.fixture(scope="module")
def binary():
    return sim.build()


def test_figure_4_14a_points(binary):
    rows = {(r["alpha"], r["n_w"]): r for r in ideal.figure_4_14a(binary, SIMULATOR, {"alpha": 2, "k_r": 8, "k_w": 8})}
    assert len(rows) == 6
    assert rows[(4, 1)]["speedup"] == pytest.approx(1.0)  # one page at a time: the baseline itself
    assert rows[(1, 8)]["speedup"] < rows[(4, 8)]["speedup"]
    assert rows[(4, 4)]["speedup"] < rows[(4, 8)]["speedup"]
    assert all(r["ace_misses"] == r["baseline_misses"] for r in rows.values())
    # write-only, every miss evicts a dirty page: the PIO model's (1 + alpha) / (1 + alpha / n_w)
    assert rows[(4, 8)]["speedup"] == pytest.approx(5 / 1.5, rel=0.05)


def test_figure_4_2_points_take_the_presets(binary):
    rows = ideal.figure_4_2(binary, SIMULATOR, MODELS)
    assert [(r["device"], r["read_pct"]) for r in rows][:3] == [("slow-writes", 0), ("slow-writes", 50),
                                                              ("slow-writes", 100)]
    by = {(r["device"], r["read_pct"]): r["speedup"] for r in rows}
    assert by[("slow-writes", 0)] > by[("slow-writes", 50)] > by[("slow-writes", 100)] == pytest.approx(1.0)
    assert by[("slow-writes", 50)] > by[("fast-writes", 50)]
    assert set(rows[0]) == set(ideal.COLUMNS)
