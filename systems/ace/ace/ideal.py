"""ACE's "ideal" speedup (thesis Figures 4.2 and 4.14A) from the bufferpool simulator:
ACE's Writer over LRU alone in virtual time, where only the device's time counts, on the
synthetic workload of configs/experiments/ace.yaml (key `simulator`).

The simulator runs every configuration in one process (`run_grid`); a point's speedup is
LRU's virtual runtime over ACE-LRU's on the same accesses. The output is deterministic.
"""

from __future__ import annotations

from pathlib import Path

from . import sim

COLUMNS = {
    "device": "the device model whose alpha and k the point uses (Figure 4.2), or 'emulated' (4.14A: the k_r "
              "and k_w of configs/experiments/ace.yaml's simulator.fig_4_14a.device, alpha swept)",
    "alpha": "write/read cost ratio of the device model",
    "k_r": "read concurrency of the device model",
    "k_w": "write concurrency of the device model",
    "n_w": "pages ACE writes at once (Figure 4.2: the device's k_w)",
    "read_pct": "share of the operations that read, %",
    "pool_pages": "bufferpool pages (pool_fraction of the workload's pages)",
    "baseline_runtime_us": "LRU's virtual runtime",
    "ace_runtime_us": "ACE-LRU's (no prefetching) virtual runtime",
    "speedup": "baseline_runtime_us / ace_runtime_us",
    "baseline_misses": "LRU's misses",
    "ace_misses": "ACE-LRU's misses (the Writer never changes what is resident: equal)",
    "write_batches": "ACE-LRU's write batches (a single dirty eviction counts as one)",
}


def _shared(simulator: dict) -> dict:
    workload = simulator["workload"]
    return {"policy": "lru", "synthetic": True, "ops": workload["ops"], "pages": workload["pages"],
            "hot_ops_pct": workload["hot_ops_pct"], "hot_pages_pct": workload["hot_pages_pct"],
            "seed": workload["seed"], "read_latency_us": simulator["read_latency_us"],
            "pool_pages": round(simulator["pool_fraction"] * workload["pages"])}


def _speedups(binary: Path, points: list[dict], shared: dict) -> list[dict]:
    """Each point (device, alpha, k_r, k_w, n_w, read_pct) with LRU and ACE-LRU simulated."""
    configurations = [{"alpha": p["alpha"], "k_r": p["k_r"], "k_w": p["k_w"], "n_w": p["n_w"],
                       "read_pct": p["read_pct"], "ace": ace} for p in points for ace in (False, True)]
    rows = sim.run_grid(binary, configurations, **shared)
    out = []
    for point, baseline, ace in zip(points, rows[0::2], rows[1::2]):
        out.append({**point, "pool_pages": shared["pool_pages"],
                    "baseline_runtime_us": baseline["virtual_runtime_us"],
                    "ace_runtime_us": ace["virtual_runtime_us"],
                    "speedup": baseline["virtual_runtime_us"] / ace["virtual_runtime_us"],
                    "baseline_misses": baseline["misses"], "ace_misses": ace["misses"],
                    "write_batches": ace["write_batches"]})
    return out


def figure_4_2(binary: Path, simulator: dict, models: dict[str, dict]) -> list[dict]:
    """`models`: each device model of simulator.fig_4_2.presets by name (ssdartifact.devices.model)."""
    grid = simulator["fig_4_2"]
    points = [{"device": name, "alpha": models[name]["alpha"], "k_r": models[name]["k_r"],
               "k_w": models[name]["k_w"], "n_w": models[name]["k_w"], "read_pct": read}
              for name in grid["presets"] for read in grid["read_pcts"]]
    return _speedups(binary, points, _shared(simulator))


def figure_4_14a(binary: Path, simulator: dict, model: dict) -> list[dict]:
    """`model`: the device model of simulator.fig_4_14a.device, whose k_r and k_w the grid uses."""
    grid = simulator["fig_4_14a"]
    points = [{"device": "emulated", "alpha": alpha, "k_r": model["k_r"], "k_w": model["k_w"], "n_w": n_w,
               "read_pct": grid["read_pct"]} for alpha in grid["alphas"] for n_w in grid["n_ws"]]
    return _speedups(binary, points, _shared(simulator))
