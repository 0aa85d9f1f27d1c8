"""The experiment driver: one function per thesis figure/table family. Each takes a plain dict of
parameters (as in configs/experiments/restore.yaml; every key optional, DEFAULTS fill the rest)
and returns tidy rows (dicts) whose keys are the module constant <NAME>_COLUMNS, in that order.

    from restore import experiment
    rows = experiment.fig_6_8({"requests": 100_000, "tier_grid": {"t1_pct": [3], "t2_pct": [8]}})

Runtime columns: data_access_us is the deterministic virtual time until every I/O finished;
cpu_us the measured time spent in the policy (host-dependent); runtime_us their sum (Fig 6.8's
stacked bar). normalized_* divide by Static's value of the same group and seed.
"""

from __future__ import annotations

import copy
import itertools
import math
import statistics
import tempfile
from pathlib import Path

from . import engine, traces

POLICIES = ["static", "tlfu", "tlru", "lrfu", "exd", "temp", "restore"]

DEFAULTS = {
    "seeds": [1],
    "pages": 10_000,
    "requests": 1_000_000,
    "jobs": 2,
    # Thesis L1991 latencies and asymmetries; the original code's thread pools (8/4/2).
    "tiers": {"read_latency_us": [30, 200, 500], "alpha": [1.5, 2, 4], "k_r": [8, 4, 2], "k_w": [8, 4, 2]},
    "server_model": "shared",
    "arrival": "closed",
    "clients": 32,
    "policies": POLICIES,
    "tier_grid": {"t1_pct": [1, 3, 6, 12], "t2_pct": [4, 8, 16]},
    "default_capacity_pct": [3, 8, 100],  # L1991: the sweeps' configuration
    "options": {},  # any other restore-sim option, e.g. {"rl_decision": "plain"}
}

RUN_COLUMNS = ["policy", "seed", "pages", "requests", "read_pct", "capacity_pages", "data_access_us", "cpu_us",
               "runtime_us", "mean_latency_us", "accesses_t1", "accesses_t2", "accesses_t3", "migrations_t2_t1",
               "migrations_t3_t2", "demotions_t1_t2", "demotions_t2_t3", "migrations_total",
               "overhead_us_per_access", "policy_memory_bytes"]
FIG_6_4_COLUMNS = ["pair", "xbar", "range", "a", "b", "x", "category", "membership"]
FIG_6_5_COLUMNS = ["seed", "timestep", "requested", "temperature"]
FIG_6_8_COLUMNS = ["workload", "t1_pct", "t2_pct", *RUN_COLUMNS]  # Fig 6.8 (runtime) and Fig 6.9 (migrations)
FIG_6_10_COLUMNS = FIG_6_8_COLUMNS
FIG_6_1_COLUMNS = FIG_6_8_COLUMNS
FIG_6_11_COLUMNS = ["asymmetry", "alpha", "workload", *RUN_COLUMNS]
FIG_6_12_COLUMNS = ["group", "workload", *RUN_COLUMNS, "normalized_runtime", "normalized_data_access"]
FIG_6_13_COLUMNS = ["trace", *RUN_COLUMNS, "normalized_runtime", "normalized_data_access"]
FIG_6_7_COLUMNS = traces.FREQUENCY_COLUMNS
TABLE_6_5_COLUMNS = traces.STATS_COLUMNS
TABLE_6_6_COLUMNS = ["policy", "workload", "seed", "repeat", "requests", "overhead_us_per_access",
                     "policy_memory_bytes", "policy_memory_mb", "policy_heap_bytes", "policy_heap_mb"]
CROSSCHECK_COLUMNS = ["engine", "policy", "seed", "pages", "requests", "runs", "spread", "data_access_us",
                      "mean_latency_us",
                      "migrations_total", "rank"]

# Real-trace tier capacities of thesis L2046 as percentages of Table 6.5's unique pages
# (the slowest tier capped at 100 %).
TRACE_CAPACITY_PCT = {
    "tpcc": [100 * 2e6 / 16842331, 100 * 8e6 / 16842331, 100],
    "tpce": [100 * 2e6 / 19274163, 100 * 8e6 / 19274163, 100],
    "ycsb": [100 * 10e6 / 61960292, 100 * 20e6 / 61960292, 100],
    "thesios": [100 * 1000 / 16417, 100 * 5000 / 16417, 100],
}


def _params(params: dict | None, **extra) -> dict:
    p = copy.deepcopy(DEFAULTS)
    p.update(extra)
    for key, value in (params or {}).items():
        p[key] = copy.deepcopy(value)
    return p


def _binary(p: dict) -> Path:
    return Path(p["binary"]) if p.get("binary") else engine.build()


def _shared(p: dict) -> dict:
    shared = {key: p["tiers"][key] for key in ("read_latency_us", "alpha", "k_r", "k_w")}
    shared.update(server_model=p["server_model"], arrival=p["arrival"], clients=p["clients"])
    shared.update(p.get("options", {}))
    return shared


def _pick(row: dict, columns: list[str], **extra) -> dict:
    full = {**row, **extra}
    return {c: full.get(c) for c in columns}


def _normalize(rows: list[dict], group_keys: list[str]) -> None:
    """Adds normalized_runtime and normalized_data_access relative to Static in the same group."""
    base = {}
    for r in rows:
        if r["policy"] == "static":
            base[tuple(r[k] for k in group_keys)] = r
    for r in rows:
        s = base.get(tuple(r[k] for k in group_keys))
        r["normalized_runtime"] = (r["runtime_us"] / s["runtime_us"]
                                   if s and r["runtime_us"] is not None and s["runtime_us"] else None)
        r["normalized_data_access"] = r["data_access_us"] / s["data_access_us"] if s else None


# --- analytic ------------------------------------------------------------------------------

def fig_6_4(params: dict | None = None) -> list[dict]:
    """Membership function pairs (Eq. 6.2's sigmoid, b = 10 / range, a = e^{b xbar}) for the
    (xbar, range) pairs given (the thesis does not state its figure's values)."""
    p = _params(params, pairs=[[0.5, 1.0], [0.3, 0.4]], x_min=0.0, x_max=1.0, points=101)
    rows = []
    for k, (xbar, rng) in enumerate(p["pairs"], 1):
        b = 10.0 / rng
        a = math.exp(b * xbar)
        for i in range(p["points"]):
            x = p["x_min"] + (p["x_max"] - p["x_min"]) * i / (p["points"] - 1)
            large = 1.0 / (1.0 + math.exp(b * (xbar - x)))
            for category, mu in (("Large", large), ("Small", 1.0 - large)):
                rows.append(dict(zip(FIG_6_4_COLUMNS, (k, xbar, rng, a, b, x, category, mu))))
    return rows


def fig_6_5(params: dict | None = None) -> list[dict]:
    """One page's temperature with `demo_requests` random requests over `demo_timesteps`."""
    p = _params(params, demo_timesteps=1000, demo_requests=100)
    rows = []
    for seed in p["seeds"]:
        for r in engine.temperature_demo(_binary(p), seed=seed, demo_timesteps=p["demo_timesteps"],
                                         demo_requests=p["demo_requests"], **p.get("options", {})):
            rows.append(_pick(r, FIG_6_5_COLUMNS, seed=seed))
    return rows


# --- simulations ---------------------------------------------------------------------------

def _tier_grid_runs(p: dict, workloads: list[str]) -> list[dict]:
    grid = [(w, t1, t2, seed) for w in workloads for t1 in p["tier_grid"]["t1_pct"]
            for t2 in p["tier_grid"]["t2_pct"] for seed in p["seeds"]]
    configs = [{"workload": w, "seed": seed, "capacity_pct": [t1, t2, 100], "policy": ":".join(p["policies"])}
               for w, t1, t2, seed in grid]
    out = engine.run_grid(_binary(p), configs, jobs=p["jobs"], pages=p["pages"], requests=p["requests"],
                          **_shared(p))
    rows, i = [], 0
    for w, t1, t2, seed in grid:
        for _ in p["policies"]:
            rows.append(_pick(out[i], FIG_6_8_COLUMNS, workload=w, t1_pct=t1, t2_pct=t2))
            i += 1
    return rows


def fig_6_8(params: dict | None = None) -> list[dict]:
    """Figs 6.8 and 6.9: static workloads x tier capacities x policies."""
    p = _params(params, workloads=["5hf90", "10hf90", "10hf80"])
    return _tier_grid_runs(p, p["workloads"])


def fig_6_1(params: dict | None = None) -> list[dict]:
    """Fig 6.1: the policies on three drifting workloads (L1683: A and YCSB named, the third not) at
    the sweeps' tier capacities (Section 6.6.1)."""
    p = _params(params, workloads=["A", "D", "ycsb"])
    t1, t2, _ = p["default_capacity_pct"]
    return _tier_grid_runs({**p, "tier_grid": {"t1_pct": [t1], "t2_pct": [t2]}}, p["workloads"])


def fig_6_10(params: dict | None = None) -> list[dict]:
    """Fig 6.10: dynamic workloads A-D x tier capacities x policies."""
    p = _params(params, workloads=["A", "B", "C", "D"])
    return _tier_grid_runs(p, p["workloads"])


def fig_6_11(params: dict | None = None) -> list[dict]:
    """Fig 6.11: read/write mix r1w..r99w with the tiers' asymmetry and with alpha = 1."""
    p = _params(params, workload="5hf90", read_pcts=[1, 10, 25, 50, 75, 90, 99])
    grid = [(asym, rp, seed) for asym in ("asymmetric", "symmetric") for rp in p["read_pcts"] for seed in p["seeds"]]
    configs = [{"read_pct": rp, "seed": seed, "alpha": p["tiers"]["alpha"] if asym == "asymmetric" else 1,
                "policy": ":".join(p["policies"])} for asym, rp, seed in grid]
    shared = _shared(p)
    shared.pop("alpha")
    out = engine.run_grid(_binary(p), configs, jobs=p["jobs"], workload=p["workload"], pages=p["pages"],
                          requests=p["requests"], capacity_pct=p["default_capacity_pct"], **shared)
    rows, i = [], 0
    for (asym, rp, seed), cfg in zip(grid, configs):
        for _ in p["policies"]:
            rows.append(_pick(out[i], FIG_6_11_COLUMNS, asymmetry=asym, alpha=engine.option_text(cfg["alpha"]),
                              workload=p["workload"]))
            i += 1
    return rows


def fig_6_12(params: dict | None = None) -> list[dict]:
    """Fig 6.12: (pages, requests) groups, latency normalized to Static."""
    p = _params(params, workload="5hf90",
                groups=[[10_000, 1_000_000], [100_000, 10_000_000], [1_000_000, 100_000_000],
                        [10_000_000, 100_000_000]])
    grid = [(k, int(pages), int(reqs), seed) for k, (pages, reqs) in enumerate(p["groups"], 1) for seed in p["seeds"]]
    configs = [{"pages": pages, "requests": reqs, "seed": seed, "policy": ":".join(p["policies"])}
               for _, pages, reqs, seed in grid]
    out = engine.run_grid(_binary(p), configs, jobs=p["jobs"], workload=p["workload"],
                          capacity_pct=p["default_capacity_pct"], **_shared(p))
    rows, i = [], 0
    for k, _, _, _ in grid:
        for _ in p["policies"]:
            rows.append({**out[i], "group": k, "workload": p["workload"]})
            i += 1
    _normalize(rows, ["group", "seed"])
    return [_pick(r, FIG_6_12_COLUMNS) for r in rows]


def fig_6_13(params: dict | None = None) -> list[dict]:
    """Fig 6.13: YCSB (synthetic scrambled zipfian, always) and the page traces given in
    params["traces"] = {name: path or {"path": ..., "capacity_pct": [...]}}; normalized to Static."""
    p = _params(params, ycsb={"workload": "ycsb", "capacity_pct": TRACE_CAPACITY_PCT["ycsb"]}, traces={})
    b = _binary(p)
    rows = []
    for seed in p["seeds"]:
        for r in engine.run(b, workload=p["ycsb"]["workload"], pages=p["pages"], requests=p["requests"], seed=seed,
                            capacity_pct=p["ycsb"]["capacity_pct"], policy=":".join(p["policies"]), **_shared(p)):
            rows.append({**r, "trace": "ycsb"})
    for name, spec in p["traces"].items():
        spec = spec if isinstance(spec, dict) else {"path": spec}
        caps = spec.get("capacity_pct", TRACE_CAPACITY_PCT.get(name.lower(), p["default_capacity_pct"]))
        for seed in p["seeds"]:
            for r in engine.run(b, trace=spec["path"], seed=seed, capacity_pct=caps, policy=":".join(p["policies"]),
                                **_shared(p)):
                rows.append({**r, "trace": name})
    _normalize(rows, ["trace", "seed"])
    return [_pick(r, FIG_6_13_COLUMNS) for r in rows]


def _trace_files(p: dict, tmp: Path) -> dict:
    """The traces to describe: the given page traces plus the synthetic YCSB one (dumped)."""
    files = {}
    if p.get("include_ycsb", True):
        path = tmp / "ycsb.csv"
        engine.run(_binary(p), workload="ycsb", pages=p["pages"], requests=p["requests"], seed=p["seeds"][0],
                   dump_trace=path)
        files["ycsb"] = path
    for name, spec in p.get("traces", {}).items():
        files[name] = Path(spec["path"] if isinstance(spec, dict) else spec)
    return files


def table_6_5(params: dict | None = None) -> list[dict]:
    """Table 6.5: unique pages and operations of each trace."""
    p = _params(params)
    with tempfile.TemporaryDirectory(prefix="restore-traces-") as tmp:
        return [{**traces.trace_stats(path), "trace": name} for name, path in _trace_files(p, Path(tmp)).items()]


def fig_6_7(params: dict | None = None) -> list[dict]:
    """Fig 6.7: per-page access-frequency distribution of each trace."""
    p = _params(params)
    rows = []
    with tempfile.TemporaryDirectory(prefix="restore-traces-") as tmp:
        for name, path in _trace_files(p, Path(tmp)).items():
            rows += [{**r, "trace": name} for r in traces.frequency_distribution(path)]
    return rows


def table_6_6(params: dict | None = None) -> list[dict]:
    """Table 6.6 on 5hf90: the measured CPU time per access in the policy, and its memory: the
    structures it counts (placement included) and, measured by the allocator, the heap it holds at
    the end of its run (restore-sim's policy_heap_bytes)."""
    p = _params(params, workload="5hf90", repeats=3)
    b = _binary(p)
    rows = []
    for seed, rep in itertools.product(p["seeds"], range(1, p["repeats"] + 1)):
        for r in engine.run(b, workload=p["workload"], pages=p["pages"], requests=p["requests"], seed=seed,
                            capacity_pct=p["default_capacity_pct"], policy=":".join(p["policies"]), **_shared(p)):
            rows.append(_pick(r, TABLE_6_6_COLUMNS, workload=p["workload"], repeat=rep,
                              policy_memory_mb=r["policy_memory_bytes"] / 1e6,
                              policy_heap_mb=r["policy_heap_bytes"] / 1e6))
    return rows


def crosscheck(params: dict | None = None) -> list[dict]:
    """The same small run in the simulator and in the real-time emulator; rank 1 = fastest. The
    emulator's runs are repeated (`repeats`) and each policy's times are their medians, its `spread`
    (max - min) / median: a busy machine's one slow run decides no order. The simulator's virtual
    time is the same at every run: it runs once."""
    p = _params(params, workload="5hf90", pages=1000, requests=10_000, repeats=1)
    b = _binary(p)
    rows = []
    for seed in p["seeds"]:
        for eng in ("sim", "emu"):
            runs = [engine.run(b, engine=eng, workload=p["workload"], pages=p["pages"], requests=p["requests"],
                               seed=seed, capacity_pct=p["default_capacity_pct"], policy=":".join(p["policies"]),
                               cpu_timing=False, **_shared(p)) for _ in range(p["repeats"] if eng == "emu" else 1)]
            out = []
            for per_policy in zip(*runs):
                times = [r["data_access_us"] for r in per_policy]
                middle = statistics.median(times)
                out.append({**per_policy[0], "runs": len(times), "spread": (max(times) - min(times)) / middle,
                            "data_access_us": middle,
                            "mean_latency_us": statistics.median(r["mean_latency_us"] for r in per_policy)})
            order = sorted(out, key=lambda r: r["data_access_us"])
            for r in out:
                rows.append(_pick(r, CROSSCHECK_COLUMNS, rank=order.index(r) + 1))
    return rows


def rank_agreement(rows: list[dict], tolerance: float = 0.05) -> dict:
    """Compares the engines' orderings from crosscheck() rows (one seed): over all policy pairs,
    Kendall's tau, and the pairs ordered differently whose simulated data-access times differ by
    more than `tolerance` (relative): near-ties in the simulator may flip under real sleeps."""
    sim = {r["policy"]: r["data_access_us"] for r in rows if r["engine"] == "sim"}
    emu = {r["policy"]: r["data_access_us"] for r in rows if r["engine"] == "emu"}
    policies = sorted(set(sim) & set(emu))
    concordant = discordant = 0
    violations = []
    for a, b in itertools.combinations(policies, 2):
        s = (sim[a] > sim[b]) - (sim[a] < sim[b])
        e = (emu[a] > emu[b]) - (emu[a] < emu[b])
        if s * e > 0:
            concordant += 1
        elif s * e < 0:
            discordant += 1
            if abs(sim[a] - sim[b]) > tolerance * min(sim[a], sim[b]):
                violations.append((a, b))
    pairs = concordant + discordant
    return {"policies": policies, "kendall_tau": (concordant - discordant) / pairs if pairs else None,
            "discordant_pairs": discordant, "violations": violations}
