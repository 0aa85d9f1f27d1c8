"""Chapter 5's tidy CSVs, their documented columns: one row per run (RUN_COLUMNS), one per
timeline sample (TIMELINE_COLUMNS), and per figure the mean over repetitions with the speedup
over the first point of each line (FIGURE_COLUMNS). systems/cave/README.md defines the engine's
counters in full."""

from __future__ import annotations

from . import experiment

_ENGINE = {
    "experiment": "run (a measured run) or timeline (a sampled one)",
    "dataset": "the graph and its size, e.g. social-small (configs/datasets.yaml)",
    "system": "CAVE (non-blocked), CAVE_blocked, or the in-memory reference (scipy, the whole graph in memory)",
    "algorithm": "bfs, wcc, pagerank, randomwalk or dfs",
    "variant": "nonblocked or blocked (NA for the reference)",
    "device": "the declared device (configs/devices.yaml) that held the graph",
    "io_engine": "threads (a pool of reader threads) or uring",
    "io_threads": "concurrent I/Os: the number of threads issuing O_DIRECT reads",
    "cache_fraction": "the cache pool's size as a share of the graph's file",
    "cache_blocks": "the cache pool's slots (4 KiB blocks)",
    "repetition": "0-based repetition of the point",
    "runtime_s": "wall time of the algorithm (the graph's metadata already loaded)",
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
RUN_COLUMNS = {**_ENGINE, **_DEVICE}

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
    "repetitions": "runs averaged",
    **{k: f"mean over the repetitions of: {RUN_COLUMNS[k]}" for k in _MEANS},
    "runtime_min_s": "the fastest repetition's runtime (the spread of runtime_s is runtime_min_s to runtime_max_s)",
    "runtime_max_s": "the slowest repetition's runtime",
    "speedup_vs_first": "runtime at the line's first point (fewest concurrent I/Os, or smallest cache) / this runtime",
    "relative_to_best": "runtime / the line's smallest runtime",
}
# A line of a figure: the points of one system on one graph and device. A concurrency figure's
# line varies the concurrent I/Os, a cache figure's the cache size; the other stays fixed.
_LINE = ["figure", "device", "graph", "system", "algorithm", "variant"]


def summarize(rows, panels: dict[str, str]):
    """Means over repetitions; per line of a figure, the speedup over its first point and the
    runtime relative to its best point."""
    import pandas as pd  # noqa: PLC0415

    if rows.empty:
        return pd.DataFrame(columns=list(FIGURE_COLUMNS))
    keys = ["figure", *_POINT_KEYS]
    rows = rows.astype({"variant": "string"}).fillna({"variant": ""})
    means = rows.groupby(keys, dropna=False).agg(
        repetitions=("runtime_s", "size"), **{m: (m, "mean") for m in _MEANS},
        runtime_min_s=("runtime_s", "min"), runtime_max_s=("runtime_s", "max")).reset_index()
    means = means.sort_values(["figure", "device", "graph", "system", "io_threads", "cache_fraction"],
                              ignore_index=True)
    line = means.groupby(_LINE, dropna=False)["runtime_s"]
    means["speedup_vs_first"] = line.transform("first") / means["runtime_s"]
    means["relative_to_best"] = means["runtime_s"] / line.transform("min")
    means["panel"] = means["figure"].map(panels).fillna("")
    means["variant"] = means["variant"].replace("", None)
    return means[list(FIGURE_COLUMNS)]
