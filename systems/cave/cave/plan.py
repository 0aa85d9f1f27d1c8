"""Chapter 5's runs, planned from configs/experiments/cave.yaml, configs/datasets.yaml and the
profile's `cave`; and the rows of each figure's CSV, from the runs.

    grids = figure_grids(experiment, profile_cave)             # figure -> its grid
    points = device_points(experiment, profile_cave, datasets, "emu-pcie")
    rows = figure_rows(runs, "fig_5_8", grids["fig_5_8"])      # runs: a DataFrame of every run

A point is one run on one device: a graph (a spec for experiment.prepare_graph), an algorithm,
a variant, a number of concurrent I/Os ("device" until the device's k_r is known) and a cache
share. Points that several figures share (Figures 5.5 and 5.8 are the same BFS runs) run once.
"""

from __future__ import annotations

import json

CONCURRENCY_FIGURES = ("fig_5_5", "fig_5_8", "fig_5_13a", "fig_5_13b")
TIMELINE_FIGURES = ("fig_5_9b",)
CACHE_FIGURES = ("fig_5_6", "fig_5_10", "fig_5_12")
# Figures drawn from two panels' runs: their CSV holds both (column `panel`).
FIGURE_CSVS = {"fig_5_5": ["fig_5_5"], "fig_5_8": ["fig_5_8"], "fig_5_13": ["fig_5_13a", "fig_5_13b"],
               "fig_5_9b": ["fig_5_9b"], "fig_5_6": ["fig_5_6"], "fig_5_10": ["fig_5_10"], "fig_5_12": ["fig_5_12"]}


class PlanError(ValueError):
    pass


def figure_grids(experiment: dict, profile_cave: dict) -> dict[str, dict]:
    """The profile's figures, each the experiment's entry with the profile's devices and sweeps."""
    grids = {}
    for figure, placed in profile_cave.get("figures", {}).items():
        if figure not in experiment["figures"]:
            raise PlanError(f"profile key cave.figures.{figure}: configs/experiments/cave.yaml has no such figure")
        grid = {**experiment["figures"][figure], **placed}
        grid.setdefault("graph_size", profile_cave["graph_size"])
        kind = grid["kind"]
        if kind == "concurrency" and "io_threads" not in grid:
            raise PlanError(f"profile key cave.figures.{figure}: a concurrency figure needs io_threads")
        if kind == "cache" and "cache_fractions" not in grid:
            raise PlanError(f"profile key cave.figures.{figure}: a cache figure needs cache_fractions")
        grids[figure] = grid
    return grids


def graph_spec(datasets: dict, name: str, size: str) -> dict:
    """The spec of one generated graph at one size, for cave.experiment.prepare_graph."""
    graphs = datasets["generated"]
    if name not in graphs:
        raise PlanError(f"configs/experiments/cave.yaml names graph {name!r}, which configs/datasets.yaml's "
                        f"generated does not have ({', '.join(graphs)})")
    graph = graphs[name]
    if size not in graph["sizes"]:
        raise PlanError(f"graph size {size!r} (profile key cave.graph_size or a figure's graph_size): "
                        f"configs/datasets.yaml's {name} has sizes {', '.join(graph['sizes'])}")
    return {"name": f"{name}-{size}", "generator": graph["generator"], "seed": graph["seed"], **graph["sizes"][size]}


def algorithm_options(experiment: dict, profile_cave: dict, algorithm: str) -> dict:
    return {**experiment["defaults"]["algorithm_options"][algorithm],
            **profile_cave.get("algorithm_options", {}).get(algorithm, {})}


def _points_of(figure: str, grid: dict, experiment: dict, profile_cave: dict, datasets: dict) -> list[dict]:
    defaults = experiment["defaults"]
    kind = grid["kind"]
    graphs = grid["graphs"] if kind == "cache" else [grid["graph"]]
    variants = ["nonblocked", "blocked"] if kind == "cache" else [grid["variant"]]
    threads = grid["io_threads"] if kind == "concurrency" else [defaults["io_threads"]]
    fractions = grid["cache_fractions"] if kind == "cache" else [defaults["cache_fraction"]]
    # The cache has at least one slot per reader thread: a concurrency sweep keeps the cache of
    # its largest point at every point, so that only the concurrency changes along the line.
    floor = {"cache_floor_blocks": max(threads)} if kind == "concurrency" else {}
    points = []
    for name in graphs:
        for variant in variants:
            for io_threads in threads:
                for fraction in fractions:
                    for repetition in range(grid.get("repetitions", profile_cave["repetitions"])):
                        points.append({**floor,
                            "kind": "timeline" if kind == "timeline" else "run", "graph": name,
                            "spec": graph_spec(datasets, name, grid["graph_size"]), "algorithm": grid["algorithm"],
                            "variant": variant, "io_threads": io_threads, "cache_fraction": fraction,
                            "io_engine": defaults["io_engine"], "repetition": repetition,
                            "options": algorithm_options(experiment, profile_cave, grid["algorithm"])})
    return points


def key(point: dict) -> str:
    return json.dumps(point, sort_keys=True)


def device_points(experiment: dict, profile_cave: dict, datasets: dict, device: str) -> list[dict]:
    """Every run on one device, once each, in the order of the figures."""
    seen, points = set(), []
    for figure, grid in figure_grids(experiment, profile_cave).items():
        if device not in grid["devices"]:
            continue
        for point in _points_of(figure, grid, experiment, profile_cave, datasets):
            if key(point) not in seen:
                seen.add(key(point))
                points.append(point)
    return points


def cave_devices(profile_cave: dict) -> list[str]:
    devices = []
    for grid in profile_cave.get("figures", {}).values():
        devices += [d for d in grid["devices"] if d not in devices]
    return devices


def resolve(point: dict, k_r: int) -> dict:
    """The point with io_threads "device" replaced by the device's k_r."""
    return {**point, "io_threads": k_r if point["io_threads"] == "device" else point["io_threads"]}


def figure_rows(runs, figure: str, grid: dict):
    """The runs of one figure (a DataFrame of every run: the columns of results.RUN_COLUMNS)."""
    kind = grid["kind"]
    selected = runs[runs["device"].isin(grid["devices"]) & (runs["algorithm"] == grid["algorithm"])]
    if kind == "cache":
        graphs = [f"{name}-{grid['graph_size']}" for name in grid["graphs"]]
        is_cave = selected["system"].isin(["CAVE", "CAVE_blocked"])
        selected = selected[selected["dataset"].isin(graphs)
                            & (~is_cave | selected["cache_fraction"].isin(grid["cache_fractions"]))]
    else:
        selected = selected[(selected["dataset"] == f"{grid['graph']}-{grid['graph_size']}")
                            & (selected["variant"] == grid["variant"])]
        if kind == "concurrency":
            selected = selected[selected["io_threads"].isin(grid["io_threads"])]
    return selected.assign(figure=figure)
