"""Chapter 5's tidy CSVs, their documented columns: one row per run (RUN_COLUMNS: CAVE's, the
reference's and the baselines'), one per timeline sample (TIMELINE_COLUMNS), per figure the mean
over repetitions with the speedup over the first point of each line (FIGURE_COLUMNS), CAVE's
speedup over each baseline (COMPARISON_COLUMNS: Figures 5.1B, 5.9A, 5.11) and each system's
preprocessing (TABLE_5_2_COLUMNS). systems/cave/README.md defines the engine's counters in full."""

from __future__ import annotations

from . import experiment, plan

_ENGINE = {
    "experiment": "run (a measured run of CAVE or the reference), timeline (a sampled one), baseline (a baseline "
                  "system's run) or preprocess (CAVE's conversion of the baselines' edge list, timed for Table 5.2)",
    "dataset": "the graph and its size, e.g. social-small (configs/datasets.yaml)",
    "system": "CAVE (non-blocked), CAVE_blocked, the in-memory reference (scipy, the whole graph in memory), "
              "GraphChi, GridGraph or GraphX (cave.baselines)",
    "algorithm": "bfs, wcc, pagerank, randomwalk or dfs",
    "variant": "nonblocked or blocked (NA for the reference)",
    "device": "the declared device (configs/devices.yaml) that held the graph",
    "io_engine": "threads (a pool of reader threads) or uring",
    "io_threads": "concurrent I/Os: the number of threads issuing O_DIRECT reads",
    "cache_fraction": "the cache pool's size as a share of the graph's file",
    "cache_blocks": "the cache pool's slots (4 KiB blocks)",
    "repetition": "0-based repetition of the point",
    "runtime_s": "wall time of the algorithm (CAVE: the graph's metadata already loaded; a baseline: its whole "
                 "process, start to exit, reading its preprocessed files)",
    "load_s": "opening the graph: metadata, vertex array, cache and threads (not in runtime_s)",
    "cpu_util_pct": "process CPU time / runtime / online cores x 100",
    "block_reads": "4 KiB blocks read from the device during the algorithm",
    "bytes_read": "bytes read from the device during the algorithm",
    "read_mib_s": "bytes_read / runtime_s in MiB/s",
    "cache_hits": "cache lookups served from memory",
    "cache_misses": "cache lookups read from the device",
    "hit_ratio": "cache_hits / (cache_hits + cache_misses)",
    "lock_wait_s": "time the threads waited for the cache pool's global lock, summed over threads",
    "lock_wait_pct": "lock_wait_s / (runtime_s x io_threads) x 100: Figure 5.5's share of running time",
    "reached": "bfs: vertices reached; dfs: vertices visited",
    "levels": "bfs: levels (largest level + 1)",
    "components": "wcc: weakly connected components",
    "pagerank_sum": "pagerank: the sum of the scores",
    "steps": "randomwalk: steps taken by all walks",
    "dead_ends": "randomwalk: walks that stopped at a vertex without neighbours",
    "vertices": "vertices of the graph",
    "edges": "edges stored in the graph's file (both directions of an undirected edge)",
    "file_bytes": "size of the graph's block file",
}
assert list(_ENGINE) == experiment.RUN_COLUMNS, "cave.experiment.RUN_COLUMNS changed: document the new columns here"

# Where a run ran and what its device is: the device's declared or measured k_r is the number of
# concurrent I/Os that saturates it (the thesis runs CAVE with that many threads).
_DEVICE = {
    "device_kind": "file, block or emulated (configs/devices.yaml)",
    "device_k_r": "the device's k_r at 4 KiB: declared (emulated) or measured by the characterization",
    "k_r_source": "declared or measured",
    "graph": "the graph's name in configs/datasets.yaml",
    "graph_size": "its size (configs/datasets.yaml: sizes)",
}
# A baseline's run (cave.baselines.campaign); CAVE's rows leave these empty.
_BASELINE = {
    "status": "ran, cannot_run (by the system's design), over_budget (stopped at its memory limit) or timed_out; "
              "only ran has times",
    "reason": "why a baseline did not run (empty when it ran)",
    "budget_bytes": "a baseline's memory budget: its cache share of CAVE's file (its own cache or buffers)",
    "memory_limit": "how the memory limit (the budget plus configs/experiments/cave.yaml's baselines.allowance_mib "
                    "and per-thread buffers) was enforced, page cache included (GraphX: none, in memory)",
    "peak_bytes": "the largest memory use (page cache included) the limit's cgroup saw",
    "reported_s": "the runtime the baseline itself reports (GraphChi: runtime; GridGraph: its printed "
                  "seconds; GraphX: its load and components, after the JVM and Spark were up)",
    "preprocess_s": "seconds to convert the graph into the system's own format (Table 5.2); not through the "
                    "device's model",
    "disk_bytes": "bytes of the system's converted files (Table 5.2)",
    "time_limit_s": "the time a baseline's run may take (configs/experiments/cave.yaml: baselines.timeout_s)",
}
RUN_COLUMNS = {**_ENGINE, **_DEVICE, **_BASELINE}

TIMELINE_COLUMNS = {
    **{k: _ENGINE[k] for k in ("experiment", "dataset", "algorithm", "variant", "device", "io_threads",
                               "cache_fraction")},
    "t_s": "end of the sampling interval, seconds since the algorithm started",
    "cpu_pct": "process CPU time in the interval / interval / online cores x 100",
    "reads": "blocks read in the interval",
    "bytes_read": "bytes read in the interval",
    "read_mib_s": "read bandwidth in the interval, MiB/s",
    "bandwidth_util_pct": "read_mib_s / fio_read_mib_s x 100: the thesis's bandwidth utilization (T1577)",
    "fio_read_mib_s": "fio's 4 KiB O_DIRECT random-read bandwidth with as many jobs as io_threads, same device",
    "fio_cpu_pct": "fio's CPU time in that run / its runtime / online cores x 100: the reads alone, no graph work",
    **_DEVICE,
}

# A figure's point: the mean of its repetitions.
_POINT_KEYS = ["device", "device_kind", "device_k_r", "graph", "dataset", "system", "algorithm", "variant",
               "io_threads", "cache_fraction"]
_MEANS = ["runtime_s", "cpu_util_pct", "block_reads", "read_mib_s", "hit_ratio", "lock_wait_pct"]
FIGURE_COLUMNS = {
    "figure": "the thesis figure (fig_5_13a and fig_5_13b share fig_5_13.csv)",
    "panel": "the panel's letter, or empty",
    **{k: RUN_COLUMNS[k] for k in _POINT_KEYS},
    "repetitions": "runs averaged (those that ran)",
    "status": "ran when a repetition ran, else why none did (a baseline: " + RUN_COLUMNS["status"] + ")",
    "reason": RUN_COLUMNS["reason"],
    **{k: f"mean over the repetitions of: {RUN_COLUMNS[k]}" for k in _MEANS},
    "runtime_min_s": "the fastest repetition's runtime (the spread of runtime_s is runtime_min_s to runtime_max_s)",
    "runtime_max_s": "the slowest repetition's runtime",
    "speedup_vs_first": "runtime at the line's first point (fewest concurrent I/Os, or smallest cache) / this runtime",
    "relative_to_best": "runtime / the line's smallest runtime",
}
# A line of a figure: the points of one system on one graph and device. A concurrency figure's
# line varies the concurrent I/Os, a cache figure's the cache size; the other stays fixed.
_LINE = ["figure", "device", "graph", "system", "algorithm", "variant"]


def _status(statuses) -> str:
    """A point's status: ran when any repetition ran, else the first repetition's."""
    return "ran" if (statuses == "ran").any() else statuses.iloc[0]


def summarize(rows, panels: dict[str, str]):
    """Means over repetitions; per line of a figure, the speedup over its first point and the
    runtime relative to its best point."""
    import pandas as pd  # noqa: PLC0415

    if rows.empty:
        return pd.DataFrame(columns=list(FIGURE_COLUMNS))
    keys = ["figure", *_POINT_KEYS]
    rows = rows.astype({"variant": "string"}).fillna({"variant": ""})
    rows = rows.assign(status=rows["status"].fillna("ran"), reason=rows["reason"].replace("", None))
    means = rows.groupby(keys, dropna=False).agg(
        repetitions=("runtime_s", "count"), **{m: (m, "mean") for m in _MEANS},
        runtime_min_s=("runtime_s", "min"), runtime_max_s=("runtime_s", "max"),
        status=("status", _status), reason=("reason", "first")).reset_index()
    means["reason"] = means["reason"].where(means["status"] != "ran", "").fillna("")
    means = means.sort_values(["figure", "device", "graph", "system", "io_threads", "cache_fraction"],
                              ignore_index=True)
    line = means.groupby(_LINE, dropna=False)["runtime_s"]
    means["speedup_vs_first"] = line.transform("first") / means["runtime_s"]
    means["relative_to_best"] = means["runtime_s"] / line.transform("min")
    means["panel"] = means["figure"].map(panels).fillna("")
    means["variant"] = means["variant"].replace("", None)
    return means[list(FIGURE_COLUMNS)]


# CAVE against each baseline at one cache share (Figures 5.1B, 5.9A, 5.11): per system, graph and device.
_COMPARED = ["device", "device_kind", "device_k_r", "graph", "dataset", "algorithm", "cache_fraction"]
COMPARISON_COLUMNS = {
    "figure": "the thesis figure",
    "panel": "empty (one panel)",
    **{k: RUN_COLUMNS[k] for k in _COMPARED},
    "system": "CAVE's variant of the comparison, or the baseline",
    "status": "ran when a repetition ran, else why none did: " + RUN_COLUMNS["status"],
    "reason": RUN_COLUMNS["reason"],
    "repetitions": "runs averaged (those that ran)",
    "runtime_s": "mean over the repetitions of: " + RUN_COLUMNS["runtime_s"],
    "runtime_min_s": "the fastest repetition's runtime",
    "runtime_max_s": "the slowest repetition's runtime",
    "cave_system": "the CAVE each speedup is over (configs/experiments/cave.yaml: the figure's variant)",
    "cave_runtime_s": "that CAVE's mean runtime on the same device, graph and cache share",
    "speedup": "CAVE's speedup over this system: runtime_s / cave_runtime_s (1 for CAVE itself)",
    "speedup_at_least": "speedup, or for a system stopped at its time limit the least it can be: time_limit_s / "
                        "cave_runtime_s",
    "time_limit_s": RUN_COLUMNS["time_limit_s"],
    "peak_bytes": "the largest peak memory of the repetitions (baselines: page cache included)",
    "budget_bytes": RUN_COLUMNS["budget_bytes"],
}

# Table 5.2: each system's preprocessing of the same graph.
TABLE_5_2_COLUMNS = {
    "table": "table_5_2",
    "device": "the device whose backing folder the files were made in",
    "graph": RUN_COLUMNS["graph"],
    "dataset": RUN_COLUMNS["dataset"],
    "system": "CAVE (its conversion of the same edge list), GraphChi or GridGraph",
    "repetitions": "preprocessings timed",
    "preprocess_s": "median over the repetitions of: " + RUN_COLUMNS["preprocess_s"],
    "preprocess_min_s": "the fastest repetition's",
    "preprocess_max_s": "the slowest repetition's",
    "disk_bytes": RUN_COLUMNS["disk_bytes"],
    "disk_mib": "disk_bytes in MiB",
    "vertices": RUN_COLUMNS["vertices"],
    "edges": RUN_COLUMNS["edges"],
}


def compare(rows, cave_system: str):
    """Per device, graph and system, the mean runtime of the repetitions that ran and CAVE's speedup
    over it; a system none of whose repetitions ran keeps its status and reason, without times."""
    import pandas as pd  # noqa: PLC0415

    if rows.empty:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    keys = ["figure", *_COMPARED, "system"]
    rows = rows.assign(status=rows["status"].fillna("ran"), reason=rows["reason"].replace("", None))
    table = rows.groupby(keys, dropna=False).agg(
        repetitions=("runtime_s", "count"), runtime_s=("runtime_s", "mean"), runtime_min_s=("runtime_s", "min"),
        runtime_max_s=("runtime_s", "max"), peak_bytes=("peak_bytes", "max"), budget_bytes=("budget_bytes", "max"),
        time_limit_s=("time_limit_s", "max"), status=("status", _status), reason=("reason", "first")).reset_index()
    table["reason"] = table["reason"].where(table["status"] != "ran", "").fillna("")
    cave = table[table["system"] == cave_system].set_index(["figure", "device", "dataset"])["runtime_s"]
    table["cave_system"] = cave_system
    table["cave_runtime_s"] = [cave.get((f, d, g)) for f, d, g in zip(table["figure"], table["device"],
                                                                        table["dataset"])]
    table["speedup"] = table["runtime_s"] / table["cave_runtime_s"]
    table["speedup_at_least"] = table["speedup"].where(table["status"] != "timed_out",
                                                       table["time_limit_s"] / table["cave_runtime_s"])
    table["panel"] = ""
    order = {name: index for index, name in enumerate([cave_system, *sorted(set(table["system"]) - {cave_system})])}
    table = table.sort_values(["figure", "device", "graph", "system"], key=lambda c: c.map(order) if c.name == "system"
                              else c, ignore_index=True)
    return table[list(COMPARISON_COLUMNS)]


def preprocessing(rows):
    """Table 5.2: per device, graph and system, the median preprocessing time and the files' size."""
    import pandas as pd  # noqa: PLC0415

    rows = rows[rows["preprocess_s"].notna()]
    if rows.empty:
        return pd.DataFrame(columns=list(TABLE_5_2_COLUMNS))
    table = rows.groupby(["device", "graph", "dataset", "system"], dropna=False).agg(
        repetitions=("preprocess_s", "size"), preprocess_s=("preprocess_s", "median"),
        preprocess_min_s=("preprocess_s", "min"), preprocess_max_s=("preprocess_s", "max"),
        disk_bytes=("disk_bytes", "max"), vertices=("vertices", "max"), edges=("edges", "max")).reset_index()
    table["disk_mib"] = table["disk_bytes"] / (1 << 20)
    table["table"] = "table_5_2"
    return table[list(TABLE_5_2_COLUMNS)]


def figure_table(name: str, runs, samples, grids: dict):
    """(the rows, their documented columns) of the figure CSV `name` (cave.plan.FIGURE_CSVS) from every
    run and timeline sample of the profile, for its figures' `grids` (cave.plan.figure_grids)."""
    import pandas as pd  # noqa: PLC0415

    panels = [panel for panel in plan.FIGURE_CSVS[name] if panel in grids]
    grid = grids[panels[0]]
    if grid["kind"] == "timeline":
        return samples[samples["device"].isin(grid["devices"])], TIMELINE_COLUMNS
    selected = pd.concat([plan.figure_rows(runs, panel, grids[panel]) for panel in panels], ignore_index=True)
    if grid["kind"] == "comparison":
        return compare(selected, plan.SYSTEM_OF_VARIANT[grid["variant"]]), COMPARISON_COLUMNS
    if grid["kind"] == "preprocess":
        return preprocessing(selected), TABLE_5_2_COLUMNS
    return summarize(selected, {panel: panel.removeprefix(name) for panel in panels}), FIGURE_COLUMNS
