"""Which runs Chapter 4's figures need: configs/experiments/ace.yaml's grids, sized and
placed on devices by the profile (key `ace`).

Each figure's grid expands to runs; a run shared by several figures (Figure 4.8's MS
point is also Figure 4.12's 6 % point and Figure 4.13's n_w = k_w point) is one run, so
identical runs are identified by their parameters. n_w and n_e may be "device": the
device's k_w, resolved when the runs execute (the characterization measures it then).
"""

from __future__ import annotations

from .experiment import Database, Run

DEVICE = "device"  # n_w / n_e resolved to the device's k_w
MS_LOCALITY = (90, 10)  # the sweeps of Figures 4.11, 4.12, 4.13 and 4.14B use MS's locality


def figure_grids(experiment: dict, profile_ace: dict) -> dict[str, dict]:
    """Each figure this profile runs: its grid from the experiment, with the profile's overrides."""
    grids = {}
    for figure, placed in profile_ace.get("figures", {}).items():
        grid = {**experiment["figures"][figure], **{k: v for k, v in placed.items() if k != "devices"}}
        grid["devices"] = placed["devices"]
        grid.setdefault("policies", experiment["defaults"]["policies"])
        grids[figure] = grid
    return grids


def workload_name(experiment: dict, read_pct: int, hot_ops_pct: int, hot_pages_pct: int) -> str:
    """A named workload of Table 4.2 when the parameters are one, else e.g. R25-L90-10 (read 25 %, locality 90/10)."""
    for name, workload in experiment["synthetic_workloads"].items():
        if (workload["read_pct"], workload["hot_ops_pct"], workload["hot_pages_pct"]) == (
                read_pct, hot_ops_pct, hot_pages_pct):
            return name
    return f"R{read_pct}-L{hot_ops_pct}-{hot_pages_pct}"


def figure_points(experiment: dict, figure: str, grid: dict, profile_ace: dict) -> list[dict]:
    """The (database, workload, pool_fraction, n_w, policy, variant) points of one figure's grid."""
    defaults = experiment["defaults"]
    if "tpcc_mixes" in grid:  # Figures 4.15 and 4.16
        sizes = grid.get("warehouses", [profile_ace.get("warehouses", 1)])
        mixes = [("tpcc", size, f"tpcc-{mix}", {"tpcc_mix": mix}) for size in sizes for mix in grid["tpcc_mixes"]]
    else:
        hot_ops, hot_pages = MS_LOCALITY
        if "workloads" in grid:
            shapes = [(w["read_pct"], w["hot_ops_pct"], w["hot_pages_pct"])
                      for w in (experiment["synthetic_workloads"][name] for name in grid["workloads"])]
        elif "read_pcts" in grid:
            shapes = [(read, hot_ops, hot_pages) for read in grid["read_pcts"]]
        else:  # Figures 4.12 and 4.13 sweep the pool or n_w under MS
            ms = experiment["synthetic_workloads"]["MS"]
            shapes = [(ms["read_pct"], ms["hot_ops_pct"], ms["hot_pages_pct"])]
        mixes = [("synthetic", profile_ace["scale"], workload_name(experiment, *shape),
                  dict(zip(("read_pct", "hot_ops_pct", "hot_pages_pct"), shape))) for shape in shapes]
    pools = grid.get("pool_fractions", [defaults["pool_fraction"]])
    n_ws = grid.get("n_ws", [defaults["n_w"]])
    points = []
    for kind, size, name, workload in mixes:
        for pool in pools:
            for policy in grid["policies"]:
                for variant in grid["variants"]:
                    # the baseline does not depend on n_w: one baseline for every n_w
                    for n_w in ([defaults["n_w"]] if variant == "baseline" else n_ws):
                        points.append({"database_kind": kind, "database_size": size, "workload": name, **workload,
                                       "pool_fraction": pool, "n_w": n_w, "n_e": defaults["n_e"],
                                       "policy": policy, "variant": variant})
    return points


def device_points(experiment: dict, profile_ace: dict, device: str) -> list[dict]:
    """Every distinct point any figure runs on `device`, in a stable order, each with its
    `repetitions`: the figure's (more where a claim judges differences near the runs' noise) or the
    profile's, the most any of its figures asks for when figures share it."""
    points: dict[tuple, dict] = {}
    for figure, grid in figure_grids(experiment, profile_ace).items():
        if device in grid["devices"]:
            repetitions = grid.get("repetitions", profile_ace["repetitions"])
            for point in figure_points(experiment, figure, grid, profile_ace):
                kept = points.setdefault(tuple(sorted(point.items())), {**point, "repetitions": repetitions})
                kept["repetitions"] = max(kept["repetitions"], repetitions)
    return list(points.values())


def ace_devices(profile_ace: dict) -> list[str]:
    """Every device some figure runs on, in the profile's order of first mention."""
    devices = []
    for grid in profile_ace.get("figures", {}).values():
        devices += [d for d in grid["devices"] if d not in devices]
    return devices


# The server's largest batch (CONCURRENT_IO_MAX_BATCH in patches/0001-concurrent-io.patch): a
# device measured with a larger k_w (the full profile sweeps up to 256 threads) runs at it.
MAX_BATCH = 64


def resolve(point: dict, k_w: int) -> dict:
    """The point with n_w and n_e "device" replaced by the device's k_w, at most MAX_BATCH (the
    runs CSV records the n_w and n_e that ran, beside device_k_w)."""
    return {**point, **{k: min(k_w, MAX_BATCH) if point[k] == DEVICE else point[k] for k in ("n_w", "n_e")}}


def database_of(point: dict, profile_ace: dict, fillfactor: int) -> Database:
    """The database a point runs on (TPC-C's tables keep PostgreSQL's default fillfactor)."""
    kind = point["database_kind"]
    return Database(kind, point["database_size"], fillfactor if kind != "tpcc" else 100, profile_ace.get("seed", 1))


def databases(points: list[dict], profile_ace: dict, fillfactor: int) -> list[Database]:
    """Every database `points` run on, once each, in order of first use."""
    return list(dict.fromkeys(database_of(point, profile_ace, fillfactor) for point in points))


def runs(points: list[dict], profile_ace: dict, fillfactor: int, k_w: int) -> list[Run]:
    """The runs of `points` (device_points) on a device whose k_w is known, each point repeated
    its `repetitions` (else the profile's); points that are the same once n_w and n_e are known
    (n_w = 8 and "device" on a device with k_w = 8) run once, as often as the most either asks."""
    resolved: dict[tuple, int] = {}
    for point in points:
        repetitions = point.get("repetitions", profile_ace["repetitions"])
        key = tuple(sorted(resolve({k: v for k, v in point.items() if k != "repetitions"}, k_w).items()))
        resolved[key] = max(resolved.get(key, 0), repetitions)
    seed = profile_ace.get("seed", 1)
    out = []
    for key, repetitions in resolved.items():
        point = dict(key)
        database = database_of(point, profile_ace, fillfactor)
        del point["database_kind"], point["database_size"]
        tpcc = database.kind == "tpcc"
        prefix = "tpcc_" if tpcc else ""
        out += [Run(database=database, clients=profile_ace[f"{prefix}clients"],
                    transactions=profile_ace[f"{prefix}transactions"],
                    warmup_transactions=profile_ace[f"{prefix}warmup_transactions"], seed=seed,
                    repetition=repetition, **point)
                for repetition in range(repetitions)]
    return out
