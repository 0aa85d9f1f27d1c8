"""Steps of ReStore's rules (workflow/rules/restore.smk); see steps.py for the contract.

Thesis Chapter 6 on ReStore's simulator (systems/restore): `plan` says which CSVs a profile
produces, `figure_params` turns configs/experiments/restore.yaml and the profile's `restore` key
into the parameters of one `restore.experiment` function, and the steps run them and write
the tidy CSV with the columns the figures and claims read (ranks and ratios within a group).

Every CSV is computed in virtual time with the measured CPU time off (deterministic, checksummed),
except Table 6.6 (CPU time per access, measured) and the cross-check with the real-time emulator.
"""

from __future__ import annotations

import copy
import itertools
import shutil
from pathlib import Path

from . import config, provenance
from .steps import StepFailed, in_image
from .tidy import write_csv

EXPERIMENT = "experiments/restore.yaml"
RESULTS = "results/restore"
BINARY = "systems/restore/build/restore-sim"

# Figure/table -> the restore.experiment function that computes it (Figure 6.9 is drawn from fig_6_8's runs).
DETERMINISTIC = ["fig_6_4", "fig_6_5", "fig_6_7", "fig_6_8", "fig_6_10", "fig_6_11", "fig_6_12", "fig_6_13",
                 "table_6_5"]
MEASURED = ["table_6_6", "crosscheck"]
USES_TRACES = {"fig_6_7", "fig_6_13", "table_6_5"}
RULE_BASED = ["static", "tlfu", "tlru", "lrfu", "exd", "temp"]

# The group of runs each derived column compares within (one configuration, all policies).
GROUPS = {
    "fig_6_8": ["workload", "t1_pct", "t2_pct", "seed"],
    "fig_6_10": ["workload", "t1_pct", "t2_pct", "seed"],
    "fig_6_11": ["asymmetry", "read_pct", "seed"],
    "fig_6_12": ["group", "seed"],
    "fig_6_13": ["trace", "seed"],
}

COLUMN_DOCS = {
    # Figures 6.4 and 6.5
    "pair": "membership-function pair (1, 2, ...)",
    "xbar": "expected value x-bar of the input (the curves cross at 0.5 there)",
    "range": "range(x) = max x - min x of the input",
    "a": "a = exp(b * x-bar) of mu_Large(x) = 1 / (1 + a exp(-b x)) (thesis L1847)",
    "b": "b = 10 / range(x) (thesis L1847)",
    "x": "input value",
    "category": "Large or Small (mu_Small = 1 - mu_Large)",
    "membership": "membership value in [0, 1]",
    "timestep": "timestep (one request unit per timestep)",
    "requested": "requests to the page in this timestep",
    "temperature": "the page's temperature after this timestep (thesis L1904-1910)",
    # runs
    "workload": "workload: Table 6.4's name, or XhfY[@SET][*N] (systems/restore/README.md)",
    "t1_pct": "Tier 1 capacity (% of the pages)",
    "t2_pct": "Tier 2 capacity (% of the pages)",
    "asymmetry": "asymmetric: the tiers' alpha (1.5/2/4); symmetric: alpha = 1 on every tier",
    "alpha": "alpha of the tiers, fastest first (colon-separated)",
    "group": "scale group, 1 = smallest (pages, requests)",
    "trace": "trace name (ycsb: YCSB's scrambled zipfian generated at the profile's size)",
    "policy": "migration policy (static = the oracle placement, no migrations)",
    "seed": "seed of the workload generator",
    "pages": "unique pages",
    "requests": "requests replayed",
    "read_pct": "percentage of reads (configured, or measured for a trace)",
    "capacity_pages": "tier capacities in pages, fastest first (colon-separated)",
    "data_access_us": "virtual time until every I/O (migrations included) finished (us): deterministic",
    "cpu_us": "measured CPU time in the policy (us); NA: not measured (deterministic runs)",
    "runtime_us": "data_access_us + cpu_us; NA when the CPU time is not measured",
    "mean_latency_us": "mean client response time, queueing included (us)",
    "accesses_t1": "requests served by Tier 1",
    "accesses_t2": "requests served by Tier 2",
    "accesses_t3": "requests served by Tier 3",
    "migrations_t2_t1": "pages promoted from Tier 2 to Tier 1",
    "migrations_t3_t2": "pages promoted from Tier 3 to Tier 2",
    "demotions_t1_t2": "pages demoted from Tier 1 to Tier 2",
    "demotions_t2_t3": "pages demoted from Tier 2 to Tier 3",
    "migrations_total": "all page moves (promotions + demotions)",
    "overhead_us_per_access": "cpu_us / requests (Table 6.6's CPU); NA when not measured",
    "policy_memory_bytes": "bytes of the policy's data structures, placement included (Table 6.6's memory)",
    "normalized_runtime": "runtime_us / Static's in the same group; NA when the CPU time is not measured",
    "normalized_data_access": "data_access_us / Static's in the same group (the thesis's normalized latency)",
    # derived here
    "migrations_up": "pages promoted (Tier 2 to 1 plus Tier 3 to 2): Figure 6.9's bar",
    "restore_speedup": "data_access_us / ReStore's in the same group: how many times faster ReStore is",
    "restore_migration_reduction": "migrations_up / ReStore's in the same group: how many times fewer ReStore makes (NA when ReStore makes none)",
    "rank": "rank of data_access_us among all policies of the group (1 = fastest; ties share the lower rank)",
    "adaptive_rank": "rank of data_access_us among the migrating policies of the group (Static excluded: NA)",
    "largest_group": "true for the largest scale group of this profile",
    "normalized_growth": "normalized_data_access / the same policy's in group 1",
    # Figure 6.7, Table 6.5
    "access_count": "requests to a page",
    "unique_pages": "pages requested at least once",
    "operations": "requests in the trace",
    "reads": "read requests",
    "writes": "write requests",
    # Table 6.6
    "repeat": "repetition (1, 2, ...)",
    "policy_memory_mb": "policy_memory_bytes / 1e6",
    # cross-check
    "engine": "sim: virtual-time simulator; emu: real-time emulator (sleeping thread pools)",
    "rule_based": "the policy is one of the six rule-based ones (Static included), not ReStore",
    "tolerance": "simulated times closer than this (relative) may be ordered either way by the emulator",
    "policy_a": "first policy of the pair",
    "policy_b": "second policy of the pair",
    "sim_ratio": "data_access_us of policy_a / policy_b in the simulator",
    "emu_ratio": "data_access_us of policy_a / policy_b in the emulator (wall time)",
    "beyond_tolerance": "the simulator's times of the pair differ by more than the tolerance",
    "agree": "both engines order the pair the same way",
}

RUN_EXTRA = ["migrations_up", "restore_speedup", "restore_migration_reduction", "rank", "adaptive_rank"]
CROSSCHECK_PAIR_COLUMNS = ["seed", "policy_a", "policy_b", "rule_based", "sim_ratio", "emu_ratio", "tolerance",
                           "beyond_tolerance", "agree"]


def _columns(names: list[str]) -> dict[str, str]:
    return {name: COLUMN_DOCS[name] for name in names}


def csv_columns(figure: str) -> list[str]:
    from restore import experiment  # noqa: PLC0415 (the workflow imports this module before any build)

    base = getattr(experiment, f"{figure.upper()}_COLUMNS")
    if figure in ("fig_6_8", "fig_6_10"):
        return [*base, "normalized_data_access", *RUN_EXTRA]
    if figure == "fig_6_11":
        return [*base, "normalized_data_access", *RUN_EXTRA]
    if figure == "fig_6_12":
        return [*base, *RUN_EXTRA, "largest_group", "normalized_growth"]
    if figure == "fig_6_13":
        return [*base, *RUN_EXTRA]
    if figure == "crosscheck":
        return [*base, "rule_based"]
    return list(base)


# ---- planning (used by the rules when the workflow is parsed) ----------------------------------

def deterministic_figures(profile_restore: dict | None) -> list[str]:
    """The virtual-time figures and tables this profile regenerates, in a fixed order."""
    figures = (profile_restore or {}).get("figures", {})
    return [name for name in DETERMINISTIC if name in figures]


def plan(profile_restore: dict | None) -> dict[str, list[str]]:
    """The CSVs this profile produces: {"deterministic": [...], "measured": [...]}."""
    figures = (profile_restore or {}).get("figures", {})
    deterministic = [f"{RESULTS}/{name}.csv" for name in deterministic_figures(profile_restore)]
    measured = [f"{RESULTS}/{name}.csv" for name in MEASURED if name in figures]
    if "crosscheck" in figures:
        measured.append(f"{RESULTS}/crosscheck_pairs.csv")
    return {"deterministic": deterministic, "measured": measured}


def trace_csv(name: str) -> str:
    return f"{RESULTS}/traces/{name}.csv"


def trace_inputs(experiment: dict, figure: str) -> list[str]:
    """The converted traces a figure reads (none unless configs/experiments/restore.yaml has `traces`)."""
    return [trace_csv(name) for name in experiment["traces"]] if figure in USES_TRACES else []


def figure_params(experiment: dict, profile_restore: dict, figure: str) -> dict:
    """restore.experiment's parameters of one figure: the experiment's common values, the profile's
    size, the experiment's figure block, then the profile's figure block (each wins over the last)."""
    if figure not in experiment["figures"]:
        raise StepFailed(f"configs/experiments/restore.yaml: key figures: no block {figure!r}")
    p = {key: copy.deepcopy(experiment[key]) for key in
         ("tiers", "server_model", "arrival", "clients", "policies", "default_capacity_pct", "options")}
    p.update(pages=profile_restore["pages"], requests=profile_restore["requests"],
             seeds=list(profile_restore["seeds"]))
    if "jobs" in profile_restore:
        p["jobs"] = profile_restore["jobs"]
    p.update(copy.deepcopy(experiment["figures"][figure]))
    p.update(copy.deepcopy(profile_restore.get("figures", {}).get(figure) or {}))
    if figure in DETERMINISTIC:
        p["options"]["cpu_timing"] = False  # virtual time only: the same bytes for the same seed
    if figure in USES_TRACES:
        p["traces"] = {}
        for name, spec in experiment["traces"].items():
            p["traces"][name] = {"path": trace_csv(name)}
            if "capacity_pct" in spec:
                p["traces"][name]["capacity_pct"] = spec["capacity_pct"]
    return p


# ---- derived columns ---------------------------------------------------------------------------

def _ratio(a, b):
    return a / b if a is not None and b else None


def _ranks(values: dict[str, float]) -> dict[str, int]:
    """Rank 1 = smallest; equal values share the lower rank."""
    ordered = sorted(values.values())
    return {key: ordered.index(value) + 1 for key, value in values.items()}


def add_group_columns(rows: list[dict], group_keys: list[str]) -> list[dict]:
    """Figure 6.9's migrations and, within each group (one configuration, every policy), each
    policy's rank, its ratio to ReStore, and (when missing) its data access normalized to Static."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        row["migrations_up"] = row["migrations_t2_t1"] + row["migrations_t3_t2"]
        groups.setdefault(tuple(row[k] for k in group_keys), []).append(row)
    for members in groups.values():
        by_policy = {r["policy"]: r for r in members}
        restore, static = by_policy.get("restore"), by_policy.get("static")
        ranks = _ranks({r["policy"]: r["data_access_us"] for r in members})
        adaptive = _ranks({r["policy"]: r["data_access_us"] for r in members if r["policy"] != "static"})
        for r in members:
            if "normalized_data_access" not in r or r["normalized_data_access"] is None:
                r["normalized_data_access"] = _ratio(r["data_access_us"], static and static["data_access_us"])
            r["restore_speedup"] = _ratio(r["data_access_us"], restore and restore["data_access_us"])
            r["restore_migration_reduction"] = _ratio(r["migrations_up"], restore and restore["migrations_up"])
            r["rank"] = ranks[r["policy"]]
            r["adaptive_rank"] = adaptive.get(r["policy"])
    return rows


def add_scale_columns(rows: list[dict]) -> list[dict]:
    largest = max(r["group"] for r in rows)
    first = {(r["policy"], r["seed"]): r["normalized_data_access"] for r in rows if r["group"] == 1}
    for r in rows:
        r["largest_group"] = r["group"] == largest
        r["normalized_growth"] = _ratio(r["normalized_data_access"], first.get((r["policy"], r["seed"])))
    return rows


def crosscheck_pairs(rows: list[dict], tolerance: float) -> list[dict]:
    """Every pair of policies: does the real-time emulator order them as the simulator does?"""
    out = []
    for seed in sorted({r["seed"] for r in rows}):
        sim = {r["policy"]: r["data_access_us"] for r in rows if r["engine"] == "sim" and r["seed"] == seed}
        emu = {r["policy"]: r["data_access_us"] for r in rows if r["engine"] == "emu" and r["seed"] == seed}
        for a, b in itertools.combinations([p for p in sim if p in emu], 2):
            s, e = sim[a] / sim[b], emu[a] / emu[b]
            out.append({"seed": seed, "policy_a": a, "policy_b": b, "rule_based": a in RULE_BASED and b in RULE_BASED,
                        "sim_ratio": s, "emu_ratio": e, "tolerance": tolerance,
                        "beyond_tolerance": abs(s - 1) > tolerance, "agree": (s - 1) * (e - 1) > 0 or s == e})
    return out


# ---- steps -------------------------------------------------------------------------------------

@in_image("restore")
def build_restore_simulator(binary: str, log: str) -> None:
    from restore import engine  # noqa: PLC0415

    try:
        built = engine.build(Path(binary).parent)
    except engine.RestoreError as error:
        raise StepFailed(f"building ReStore's simulator failed (systems/restore/README.md):\n{error}") from None
    Path(log).write_text(f"built {built}\n", encoding="utf-8")


@in_image("restore")
def convert_restore_trace(name: str, source: str, trace_format: str, csv_out: str, log: str) -> None:
    """One real workload's trace in restore-sim's page-trace format (configs/experiments/restore.yaml, traces)."""
    from restore import traces  # noqa: PLC0415

    if not Path(source).exists():
        raise StepFailed(f"configs/experiments/restore.yaml: key traces.{name}.path: {source} does not exist; "
                         "record or download the trace there, or remove it from `traces`")
    Path(csv_out).parent.mkdir(parents=True, exist_ok=True)
    started = provenance.now()
    try:
        if trace_format == "page":
            tmp = Path(csv_out + ".tmp")
            shutil.copyfile(source, tmp)
            tmp.replace(csv_out)
            stats = traces.trace_stats(csv_out)
        else:
            stats = {"postgres": traces.convert_postgres, "snia": traces.convert_snia,
                     "thesios": traces.convert_thesios}[trace_format](source, csv_out)
    except traces.TraceFormatError as error:
        raise StepFailed(f"configs/experiments/restore.yaml: key traces.{name}: {error}") from None
    provenance.write_sidecar(csv_out, produced_by="ssdartifact.restore_steps.convert_restore_trace", inputs=[source],
                             started=started, columns={"page": "dense page id (order of first use)",
                                                       "op": "R or W"})
    Path(log).write_text(f"{name}: {stats}\n", encoding="utf-8")


def _run_figure(figure: str, binary: str, params: dict, csv_out: str, jobs: int = 1,
                pairs_out: str | None = None) -> str:
    """One figure's (or table's) runs with restore.experiment, as a tidy CSV with its sidecar;
    `jobs` restore-sim processes unless the profile sets `jobs` (the rows do not depend on it).
    Returns a line for the log."""
    from restore import engine, experiment  # noqa: PLC0415

    started = provenance.now()
    params = {"jobs": jobs, **params, "binary": binary}
    try:
        rows = getattr(experiment, figure)(params)
    except engine.RestoreError as error:
        raise StepFailed(f"{figure}: {error}") from None
    if figure in GROUPS:
        add_group_columns(rows, GROUPS[figure])
    if figure == "fig_6_12":
        add_scale_columns(rows)
    if figure == "crosscheck":
        for r in rows:
            r["rule_based"] = r["policy"] in RULE_BASED
    columns = _columns(csv_columns(figure))
    write_csv(csv_out, columns, ({c: r.get(c) for c in columns} for r in rows))
    sidecar_configs = {f"configs/{EXPERIMENT}": config.config_hash(EXPERIMENT)}
    inputs = [binary, *(spec["path"] for spec in params.get("traces", {}).values())]
    provenance.write_sidecar(csv_out, produced_by=f"ssdartifact.restore_steps ({figure})",
                             inputs=inputs, configs=sidecar_configs, started=started, columns=columns)
    message = f"{figure}: {len(rows)} rows ({started} to {provenance.now()})\n"
    if figure == "crosscheck" and pairs_out:
        pairs = crosscheck_pairs(rows, params.get("tolerance", 0.05))
        write_csv(pairs_out, _columns(CROSSCHECK_PAIR_COLUMNS), pairs)
        provenance.write_sidecar(pairs_out, produced_by="ssdartifact.restore_steps (crosscheck)",
                                 inputs=[csv_out], configs=sidecar_configs, started=started,
                                 columns=_columns(CROSSCHECK_PAIR_COLUMNS))
        summary = experiment.rank_agreement([r for r in rows if r["seed"] == params["seeds"][0]],
                                            params.get("tolerance", 0.05))
        message += f"rank agreement of the engines (all policies, seed {params['seeds'][0]}): {summary}\n"
    return message


@in_image("restore")
def simulate_restore_figures(figures: list[str], binary: str, params: dict, csvs: list[str], log: str,
                             jobs: int) -> None:
    """Every deterministic Chapter 6 CSV of the profile, one after the other (one workflow job: each
    figure's runs are spread over `jobs` processes), in virtual time with the CPU timing off."""
    messages = [_run_figure(figure, binary, params[figure], csv, jobs) for figure, csv in zip(figures, csvs)]
    Path(log).write_text("".join(messages), encoding="utf-8")


@in_image("restore")
def measure_restore_overhead(binary: str, params: dict, csv_out: str, log: str) -> None:
    """Table 6.6: CPU time per access (measured: one process, nothing beside it) and memory."""
    Path(log).write_text(_run_figure("table_6_6", binary, params, csv_out, 1), encoding="utf-8")


@in_image("restore")
def crosscheck_restore_emulator(binary: str, params: dict, csv_out: str, pairs_out: str, log: str) -> None:
    """The simulator and the real-time emulator on the same small runs, and every pair's agreement."""
    Path(log).write_text(_run_figure("crosscheck", binary, params, csv_out, 1, pairs_out), encoding="utf-8")
