"""Chapter 4's tidy results: every run's row, and per figure the runs' means with ACE's
speedup and its changes in misses and writes against the same policy's baseline.

Speedup = baseline runtime / ACE runtime for the same work (thesis §4.5); runtime
reduction = 1 - 1/speedup; a delta is (ACE - baseline) / baseline in %.
"""

from __future__ import annotations

import math

import pandas as pd

from . import plan

RUN_COLUMNS = {
    "device": "the declared device (configs/devices.yaml) that held the database",
    "device_kind": "file, block or emulated (configs/devices.yaml)",
    "device_preset": "the emulated device's preset (configs/emussd_presets.yaml), NA for a real device",
    "device_alpha": "the device's alpha: measured (cost ratio, 8 KiB random I/O) or declared",
    "device_k_w": "the device's k_w: measured by the characterization (8 KiB random writes) or declared",
    "k_w_source": "measured (this profile's characterization) or declared (the emulated device's)",
    "database_kind": "synthetic (pgbench_accounts) or tpcc",
    "database_size": "pgbench scale of the synthetic database, or TPC-C warehouses",
    "database_pages": "8 KiB pages of the loaded database",
    "workload": "Table 4.2's name (MS, WIS, RIS, MU), R<read %>-L<hot ops %>-<hot pages %> for a sweep point, "
                "or the TPC-C mix",
    "read_pct": "synthetic: share of operations that read, %",
    "hot_ops_pct": "synthetic: share of operations on the hot pages, %",
    "hot_pages_pct": "synthetic: share of the pages that are hot, %",
    "tpcc_mix": "TPC-C: the standard mix, or the one transaction run alone",
    "policy": "buffer replacement policy (clock = PostgreSQL's Clock Sweep, lru, cflru, lru_wsr)",
    "variant": "baseline (the policy alone), ace (ACE's Writer), ace_pf (ACE's Writer and history prefetching)",
    "n_w": "pages ACE writes at once (ace_n_w; for the baseline: the device's k_w, unused)",
    "n_e": "pages read at once with prefetching (ace_n_e; unused without it)",
    "pool_fraction": "shared_buffers as a share of the database",
    "pool_pages": "shared_buffers in 8 KiB pages",
    "clients": "pgbench clients",
    "transactions": "measured transactions per client",
    "warmup_transactions": "transactions per client before the counters were reset",
    "seed": "pgbench's --random-seed of the measured transactions",
    "repetition": "0-based repetition of this point",
    "runtime_s": "seconds to run the measured transactions (transactions / pgbench's tps)",
    "wall_s": "wall-clock seconds of the measured pgbench, connections included",
    "tps": "transactions per second (pgbench, without connection time)",
    "latency_ms": "mean transaction latency (pgbench)",
    "measured_transactions": "transactions pgbench processed (all clients)",
    "new_orders": "TPC-C: NewOrder transactions processed (tpmC = new_orders / runtime_s * 60)",
    "hits": "shared-buffer requests found in the pool (pg_ace_counters)",
    "misses": "shared-buffer requests read from the device",
    "evictions": "pages evicted",
    "dirty_victims": "victims that were dirty when chosen",
    "writes_backend": "pages written by backends",
    "writes_bgwriter": "pages written by the background writer",
    "writes_checkpointer": "pages written by the checkpointer",
    "logical_writes": "pages PostgreSQL wrote: backends + background writer + checkpointer",
    "dirty_pages_before": "dirty pages in the pool when the measured run started (pg_buffercache)",
    "dirty_pages_after": "dirty pages in the pool when it ended",
    "ace_batches": "ACE write batches",
    "ace_batch_pages": "pages written in ACE batches",
    "prefetch_issued": "pages ACE's Reader prefetched",
    "prefetch_used": "prefetched pages requested while still in the pool",
    "ace_pins_refused": "pages left out of ACE's batches and prefetches because the server-wide budget of ACE's pins "
                        "(shared_buffers / 8) was in use; 0: the budget never limited a batch or a prefetch",
    "device_written_pages": "pages the device wrote during the measured run (see device_writes_source); "
                            "NA if not measured",
    "device_writes_source": "emussd counters, SMART (a block device's smartctl), or not measured",
}

FIGURE_COLUMNS = {
    **{k: RUN_COLUMNS[k] for k in ("device", "device_kind", "device_preset", "device_alpha", "device_k_w",
                                   "k_w_source", "database_kind", "database_size", "database_pages", "workload",
                                   "read_pct", "hot_ops_pct", "hot_pages_pct",
                                   "tpcc_mix", "policy", "variant", "n_w", "n_e", "pool_fraction", "pool_pages",
                                   "clients", "transactions")},
    "repetitions": "runs averaged in this row",
    "runtime_s": "mean runtime of the measured work, seconds",
    "runtime_sd": "standard deviation of the runtime over the repetitions (NA for one)",
    "tps": "mean transactions per second",
    "tpm_new_order": "TPC-C: NewOrder transactions per minute (tpmC); NA for synthetic runs",
    "misses": "mean buffer misses",
    "logical_writes": "mean pages written by PostgreSQL during the run",
    "owed_writes": "mean of logical_writes + dirty_pages_after - dirty_pages_before (runs.csv): the writes the "
                   "run's updates cost, written during the run or still owed by the pool at its end",
    "device_written_pages": "mean pages written by the device (NA if not measured)",
    "ace_batches": "mean ACE write batches",
    "prefetch_issued": "mean prefetched pages",
    "baseline_runtime_s": "the same policy's baseline runtime on the same point",
    "speedup": "baseline_runtime_s / runtime_s (1 for the baseline)",
    "runtime_reduction_pct": "100 * (1 - 1/speedup)",
    "delta_misses_pct": "100 * (misses - baseline misses) / baseline misses",
    "delta_logical_writes_pct": "100 * (owed_writes - baseline's) / baseline's: the writes ACE adds (a page "
                                "written early and dirtied again is written twice), end-of-run state included",
    "delta_device_writes_pct": "100 * (device writes + change in dirty pages - baseline's) / baseline's "
                               "(NA if not measured)",
}

# What makes a point (its repetitions are averaged), and what its baseline shares with it.
BASELINE_KEYS = ("device", "database_kind", "database_size", "workload", "read_pct", "hot_ops_pct", "hot_pages_pct",
                 "tpcc_mix", "pool_fraction", "policy")
POINT_KEYS = (*BASELINE_KEYS, "variant", "n_w", "n_e")


def _delta(value: float, baseline: float) -> float:
    if value is None or baseline is None or math.isnan(value) or math.isnan(baseline) or baseline == 0:
        return float("nan")
    return 100.0 * (value - baseline) / baseline


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs' means per point, with speedup and deltas against the point's baseline."""
    keys = list(POINT_KEYS)
    frame = runs.copy()
    for key in keys:
        frame[key] = frame[key].astype(object).where(frame[key].notna(), "")
    frame["tpm_new_order"] = frame["new_orders"] / frame["runtime_s"] * 60
    owed_change = frame["dirty_pages_after"] - frame["dirty_pages_before"]
    frame["owed_writes"] = frame["logical_writes"] + owed_change
    frame["owed_device_writes"] = frame["device_written_pages"] + owed_change
    grouped = frame.groupby(keys, sort=False, dropna=False)
    means = grouped.agg(device_kind=("device_kind", "first"), device_preset=("device_preset", "first"),
                        device_alpha=("device_alpha", "first"),
                        device_k_w=("device_k_w", "first"), k_w_source=("k_w_source", "first"),
                        database_pages=("database_pages", "first"), pool_pages=("pool_pages", "first"),
                        clients=("clients", "first"),
                        transactions=("transactions", "first"), repetitions=("runtime_s", "size"),
                        runtime_s=("runtime_s", "mean"), runtime_sd=("runtime_s", "std"), tps=("tps", "mean"),
                        tpm_new_order=("tpm_new_order", "mean"), misses=("misses", "mean"),
                        logical_writes=("logical_writes", "mean"), owed_writes=("owed_writes", "mean"),
                        owed_device_writes=("owed_device_writes", "mean"),
                        device_written_pages=("device_written_pages", "mean"),
                        ace_batches=("ace_batches", "mean"), prefetch_issued=("prefetch_issued", "mean")).reset_index()
    baselines = means[means["variant"] == "baseline"].set_index(list(BASELINE_KEYS))
    rows = []
    for row in means.to_dict("records"):
        base = baselines.loc[tuple(row[k] for k in BASELINE_KEYS)]
        row["baseline_runtime_s"] = base["runtime_s"]
        row["speedup"] = base["runtime_s"] / row["runtime_s"]
        row["runtime_reduction_pct"] = 100.0 * (1 - 1 / row["speedup"])
        row["delta_misses_pct"] = _delta(row["misses"], base["misses"])
        row["delta_logical_writes_pct"] = _delta(row["owed_writes"], base["owed_writes"])
        row["delta_device_writes_pct"] = _delta(row.pop("owed_device_writes"), base["owed_device_writes"])
        rows.append({k: (None if v == "" else v) for k, v in row.items()})
    return pd.DataFrame(rows, columns=list(FIGURE_COLUMNS))


def figure_rows(runs: pd.DataFrame, experiment: dict, figure: str, grid: dict, profile_ace: dict) -> pd.DataFrame:
    """The runs of one figure's grid (on each of its devices, with that device's k_w)."""
    selected = []
    for device in grid["devices"]:
        on_device = runs[runs["device"] == device]
        if on_device.empty:
            continue
        k_w = int(on_device["device_k_w"].iloc[0])
        for point in plan.figure_points(experiment, figure, grid, profile_ace):
            point = plan.resolve(point, k_w)
            mask = on_device["repetition"].notna()
            for key in ("database_kind", "database_size", "workload", "pool_fraction", "policy", "variant", "n_w",
                        "n_e"):
                mask &= on_device[key] == point[key]
            selected.append(on_device[mask])
    return pd.concat(selected) if selected else runs.iloc[0:0]
