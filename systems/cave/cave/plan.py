"""Chapter 5's runs, planned from configs/experiments/cave.yaml, configs/datasets.yaml and the
profile's `cave`; and the rows of each figure's CSV, from the runs.

    grids = figure_grids(experiment, profile_cave)             # figure -> its grid
    points = device_points(experiment, profile_cave, datasets, "emu-pcie")
    rows = figure_rows(runs, "fig_5_8", grids["fig_5_8"])      # runs: a DataFrame of every run

A point is one run on one device: a graph (a spec for experiment.prepare_graph), an algorithm,
a variant, a number of concurrent I/Os ("device" until the device's k_r is known) and a cache
share. Points that several figures share (Figures 5.5 and 5.8 are the same BFS runs) run once.

The baselines (GraphChi, GridGraph, Mosaic; GraphX for WCC: cave.baselines) have points of their own,
planned here and run by their own campaign (cave.baselines.campaign), which `device_points(..., baselines=True)` lists:
a cache figure that names `baselines` runs each of them at every cache share, a comparison figure
(5.1B, 5.9A, 5.11) runs CAVE and each baseline at the default share, and Table 5.2 times each
system's preprocessing of the same graph (kind "preprocess" for CAVE's own conversion).
"""

from __future__ import annotations

import json

CONCURRENCY_FIGURES = ("fig_5_5", "fig_5_8", "fig_5_13a", "fig_5_13b")
TIMELINE_FIGURES = ("fig_5_9b",)
CACHE_FIGURES = ("fig_5_6", "fig_5_7", "fig_5_10", "fig_5_12")
COMPARISON_FIGURES = ("fig_5_1b", "fig_5_9a", "fig_5_11")
PREPROCESSING_TABLES = ("table_5_2",)
# Figures drawn from two panels' runs: their CSV holds both (column `panel`).
FIGURE_CSVS = {"fig_5_5": ["fig_5_5"], "fig_5_8": ["fig_5_8"], "fig_5_13": ["fig_5_13a", "fig_5_13b"],
               "fig_5_9b": ["fig_5_9b"], "fig_5_6": ["fig_5_6"], "fig_5_7": ["fig_5_7"], "fig_5_10": ["fig_5_10"],
               "fig_5_12": ["fig_5_12"], "fig_5_1b": ["fig_5_1b"], "fig_5_9a": ["fig_5_9a"], "fig_5_11": ["fig_5_11"],
               "table_5_2": ["table_5_2"]}
# The baselines' names in the rows and figures (cave.baselines.case.DRIVERS's keys here), and CAVE's.
BASELINE_NAMES = {"graphchi": "GraphChi", "gridgraph": "GridGraph", "mosaic": "Mosaic", "graphx": "GraphX"}
IN_MEMORY_WCC_ONLY = ("graphx",)  # as the thesis ran GraphX: Figure 5.11B only (cave.baselines.graphx)
SYSTEM_OF_VARIANT = {"nonblocked": "CAVE", "blocked": "CAVE_blocked"}


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
        if kind == "comparison":
            grid["cache_fraction"] = experiment["defaults"]["cache_fraction"]
        if kind == "concurrency" and "io_threads" not in grid:
            raise PlanError(f"profile key cave.figures.{figure}: a concurrency figure needs io_threads")
        if kind == "cache" and "cache_fractions" not in grid:
            raise PlanError(f"profile key cave.figures.{figure}: a cache figure needs cache_fractions")
        unknown = [name for name in grid.get("baselines", []) if name not in BASELINE_NAMES]
        if unknown:
            raise PlanError(f"cave.figures.{figure}.baselines: {', '.join(map(repr, unknown))} is not a baseline "
                            f"this artifact runs ({', '.join(BASELINE_NAMES)})")
        wcc_only = [name for name in grid.get("baselines", []) if name in IN_MEMORY_WCC_ONLY]
        if wcc_only and (grid["algorithm"] != "wcc" or kind != "comparison"):
            raise PlanError(f"cave.figures.{figure}.baselines: {', '.join(wcc_only)} runs in the comparisons of WCC "
                            "only (Figure 5.11), as the thesis ran it, not in a figure of "
                            f"{grid['algorithm']} ({kind})")
        if kind == "preprocess" and not grid.get("baselines"):
            raise PlanError(f"cave.figures.{figure}: Table 5.2 needs at least one baseline to compare with")
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
    """CAVE's points of a figure, then its baselines' (cave.baselines.campaign runs those)."""
    defaults = experiment["defaults"]
    kind = grid["kind"]
    if kind == "preprocess":
        return _baseline_points(grid, experiment, profile_cave, datasets, [defaults["cache_fraction"]], with_cave=True)
    graphs = grid["graphs"] if kind in ("cache", "comparison") else [grid["graph"]]
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
    return points + _baseline_points(grid, experiment, profile_cave, datasets, fractions)


def _baseline_points(grid: dict, experiment: dict, profile_cave: dict, datasets: dict, fractions: list[float],
                     with_cave: bool = False) -> list[dict]:
    """Each baseline of the figure on each of its graphs and cache shares (its memory budget is the
    share of CAVE's file), with the device's k_r threads; `with_cave`: CAVE's own preprocessing too."""
    points = []
    for name in grid.get("graphs", []):
        spec = graph_spec(datasets, name, grid["graph_size"])
        for repetition in range(grid.get("repetitions", profile_cave["repetitions"])):
            if with_cave:
                points.append({"kind": "preprocess", "system": "cave", "graph": name, "spec": spec,
                               "repetition": repetition})
            for system in grid.get("baselines", []):
                for fraction in fractions:
                    points.append({"kind": "baseline", "system": system, "graph": name, "spec": spec,
                                   "algorithm": grid["algorithm"], "io_threads": experiment["defaults"]["io_threads"],
                                   "cache_fraction": fraction, "repetition": repetition,
                                   "options": {k: v for k, v in algorithm_options(
                                       experiment, profile_cave, grid["algorithm"]).items()
                                       if k in ("source", "iterations", "damping")}})
    return points


def key(point: dict) -> str:
    return json.dumps(point, sort_keys=True)


BASELINE_KINDS = ("baseline", "preprocess")


def device_points(experiment: dict, profile_cave: dict, datasets: dict, device: str,
                  baselines: bool = False) -> list[dict]:
    """Every CAVE run on one device (with `baselines`: every baseline's), once each, in the order
    of the figures."""
    seen, points = set(), []
    for figure, grid in figure_grids(experiment, profile_cave).items():
        if device not in grid["devices"]:
            continue
        for point in _points_of(figure, grid, experiment, profile_cave, datasets):
            if (point["kind"] in BASELINE_KINDS) != baselines:
                continue
            if key(point) not in seen:
                seen.add(key(point))
                points.append(point)
    return points


def cave_devices(profile_cave: dict) -> list[str]:
    devices = []
    for grid in profile_cave.get("figures", {}).values():
        devices += [d for d in grid["devices"] if d not in devices]
    return devices


def baseline_devices(experiment: dict, profile_cave: dict) -> list[str]:
    """The devices some figure runs a baseline on."""
    grids = figure_grids(experiment, profile_cave)
    return [d for d in cave_devices(profile_cave)
            if any(d in grid["devices"] and grid.get("baselines") for grid in grids.values())]


def baseline_systems(experiment: dict, profile_cave: dict) -> list[str]:
    """The baselines some figure of the profile runs (each is built once)."""
    named = {name for grid in figure_grids(experiment, profile_cave).values() for name in grid.get("baselines", [])}
    return [name for name in BASELINE_NAMES if name in named]


def resolve(point: dict, k_r: int) -> dict:
    """The point with io_threads "device" replaced by the device's k_r."""
    if "io_threads" not in point:  # CAVE's preprocessing (Table 5.2) reads no device
        return point
    return {**point, "io_threads": k_r if point["io_threads"] == "device" else point["io_threads"]}


def figure_rows(runs, figure: str, grid: dict):
    """The runs of one figure (a DataFrame of every run: the columns of results.RUN_COLUMNS)."""
    kind = grid["kind"]
    selected = runs[runs["device"].isin(grid["devices"])]
    if kind == "preprocess":
        graphs = [f"{name}-{grid['graph_size']}" for name in grid["graphs"]]
        systems = ["CAVE", *(BASELINE_NAMES[name] for name in grid["baselines"])]
        return selected[selected["dataset"].isin(graphs) & selected["system"].isin(systems)
                        & selected["experiment"].isin(["preprocess", "baseline"])
                        & ((selected["experiment"] == "preprocess") | (selected["algorithm"] == grid["algorithm"]))
                        ].assign(figure=figure)
    selected = selected[selected["algorithm"] == grid["algorithm"]]
    if kind in ("cache", "comparison"):
        graphs = [f"{name}-{grid['graph_size']}" for name in grid["graphs"]]
        baselines = [BASELINE_NAMES[name] for name in grid.get("baselines", [])]
        if kind == "cache":
            cave, fractions = ["CAVE", "CAVE_blocked"], grid["cache_fractions"]
        else:  # one CAVE at the device's k_r, as the baselines
            cave, fractions = [SYSTEM_OF_VARIANT[grid["variant"]]], [grid["cache_fraction"]]
            selected = selected[selected["system"].isin(baselines) | (selected["io_threads"] == selected["device_k_r"])]
        measured = selected["system"].isin(cave + baselines) & selected["cache_fraction"].isin(fractions)
        reference = selected["experiment"].eq("run") & ~selected["system"].isin(["CAVE", "CAVE_blocked", *baselines])
        return selected[selected["dataset"].isin(graphs) & (measured | (reference & (kind == "cache")))
                        ].assign(figure=figure)
    selected = selected[(selected["dataset"] == f"{grid['graph']}-{grid['graph_size']}")
                        & (selected["variant"] == grid["variant"])]
    if kind == "concurrency":
        selected = selected[selected["io_threads"].isin(grid["io_threads"])]
    return selected.assign(figure=figure)
