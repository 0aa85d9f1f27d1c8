"""Which of Chapter 6's CSVs a profile produces, and the parameters of each: planning for the
workflow's rules (workflow/rules/restore.smk), read when the workflow is parsed.

`figure_params` turns configs/experiments/restore.yaml and the profile's `restore` key into the
parameters of one `restore.experiment` function. Every CSV is computed in virtual time with the
measured CPU time off (deterministic, checksummed), except Table 6.6 (CPU time per access,
measured) and the cross-check with the real-time emulator.
"""

from __future__ import annotations

import copy

from ssdartifact import devices, routes

from .engine import RestoreError, option_text

EXPERIMENT = "experiments/restore.yaml"
RESULTS = "results/restore"
BINARY = "systems/restore/build/restore-sim"

# Where each CSV is written: the routes of configs/inventory/, the one place for the path of every
# CSV a figure or table reads (ssdartifact.routes); the others are written here.
FIGURE_CSV = routes.pattern("simulate_restore_figures")  # a virtual-time figure's or table's: {name}
TABLE_6_6_CSV = routes.outputs("measure_restore_overhead")["table_6_6"]
CROSSCHECK_CSVS = [f"{RESULTS}/crosscheck.csv", f"{RESULTS}/crosscheck_pairs.csv"]


def figure_csv(name: str) -> str:
    return FIGURE_CSV.format(name=name)


# Figure/table -> the restore.experiment function that computes it (Figure 6.9 is drawn from fig_6_8's runs).
DETERMINISTIC = ["fig_6_1", "fig_6_4", "fig_6_5", "fig_6_7", "fig_6_8", "fig_6_10", "fig_6_11", "fig_6_12", "fig_6_13",
                 "table_6_5"]
USES_TRACES = {"fig_6_7", "fig_6_13", "table_6_5"}
# The authors' released programs beside ours on the same streams (restore.original): real time,
# measured; built from their pinned source, so 'not run' where it cannot be found (without_original)
ORIGINAL = "original"
ORIGINAL_CSVS = list(routes.outputs("run_restore_original").values())  # original, original_summary
# TPC-C's trace from our own PostgreSQL (ace.trace), recorded by a profile that builds the server
# and sizes it (its restore.tpcc_trace), unless configs/experiments/restore.yaml names a tpcc trace
TPCC_TRACE = "scratch/ace/tpcc-trace/buffer.trace"


def recorded_tpcc(experiment: dict, profile: dict) -> dict | None:
    """The profile's TPC-C trace sizing ({warehouses, transactions}) when this run records one."""
    sizing = profile.get("restore", {}).get("tpcc_trace")
    if sizing and not profile.get("ace_server", False):
        raise RestoreError(f"profile {profile.get('name')!r}: key restore.tpcc_trace records TPC-C on the ACE "
                           "server, which this profile does not build (ace_server: false)")
    return sizing if sizing and "tpcc" not in experiment["traces"] else None


def with_recorded_traces(experiment: dict, profile: dict) -> dict:
    """configs/experiments/restore.yaml's traces, and the TPC-C trace this run records."""
    if recorded_tpcc(experiment, profile) is None:
        return experiment
    return {**experiment, "traces": {**experiment["traces"], "tpcc": {"path": TPCC_TRACE, "format": "postgres"}}}


def deterministic_figures(profile_restore: dict | None) -> list[str]:
    """The virtual-time figures and tables this profile regenerates, in a fixed order."""
    figures = (profile_restore or {}).get("figures", {})
    return [name for name in DETERMINISTIC if name in figures]


def outputs(profile_restore: dict | None, recorded_trace: bool = False) -> dict[str, list[str]]:
    """The CSVs this profile produces: {"simulated": the virtual-time ones (one job computes them),
    "deterministic": those checksummed, "measured": the others}. With a trace this run records
    (TPC-C on our server: its catalog lookups and background writes follow timing), the figures
    that read traces are measured results too."""
    figures = (profile_restore or {}).get("figures", {})
    simulated = [figure_csv(name) for name in deterministic_figures(profile_restore)]
    on_recorded = [figure_csv(name) for name in deterministic_figures(profile_restore)
                   if recorded_trace and name in USES_TRACES]
    measured = on_recorded + ([TABLE_6_6_CSV] if "table_6_6" in figures else [])
    measured += CROSSCHECK_CSVS if "crosscheck" in figures else []
    measured += ORIGINAL_CSVS if ORIGINAL in figures else []
    sensitivity = SENSITIVITY_CSVS if "sensitivity" in (profile_restore or {}) else []
    return {"simulated": simulated, "sensitivity": sensitivity,
            "deterministic": [path for path in simulated if path not in on_recorded] + sensitivity,
            "measured": measured}


def without_original(profile_restore: dict, unreachable: str, fix: str) -> tuple[dict, dict[str, dict]]:
    """The profile's `restore` without the authors' programs' runs when their pinned source cannot be
    found here (`unreachable` says where it was looked for; "" when it can), and the CSVs those runs
    would have made, each with why and the command that runs them (`fix`), as for CAVE's baselines."""
    figures = profile_restore.get("figures", {})
    if not unreachable or ORIGINAL not in figures:
        return profile_restore, {}
    reason = {"why": "pinned sources unreachable (the authors' ReStore)", "fix": fix}
    kept = {name: block for name, block in figures.items() if name != ORIGINAL}
    return {**profile_restore, "figures": kept}, {path: reason for path in ORIGINAL_CSVS}


# The sensitivity study (configs/experiments/restore.yaml, key sensitivity): every claim's verdict
# at each grid point, and per claim the share of the points where it holds. Virtual time: checksummed.
SENSITIVITY_CSVS = [routes.outputs("simulate_restore_sensitivity")["sensitivity"],
                    f"{RESULTS}/sensitivity_summary.csv"]
# The chapter's value of a swept parameter is in `options`, or one of these top-level keys.
TOP_LEVEL_OPTIONS = ("server_model", "arrival", "clients")


def _label(parameter: str, value) -> str:
    """A grid value as the CSV and the figure name it: the parameter's own value first, then the
    other options it sets (e.g. "poisson rate=10000")."""
    if not isinstance(value, dict):
        return option_text(value)
    own = [option_text(value[parameter])] if parameter in value else []
    return " ".join(own + [f"{k}={option_text(v)}" for k, v in value.items() if k != parameter])


def sensitivity_points(experiment: dict, profile_restore: dict) -> list[dict]:
    """The one-at-a-time grid: for each swept parameter (configs/experiments/restore.yaml,
    sensitivity.parameters; the profile's restore.sensitivity.values picks a subset) each value,
    every other option at the chapter's. A point is {parameter, value (its label), position (its
    index minus the chapter's value's, so 0 is the chapter's), is_default, options (the overrides;
    {} at the chapter's value)}. Raises RestoreError naming the key when a parameter's chapter value
    is not stated, is not among its values, or the profile picks a value the experiment lacks."""
    where = "configs/experiments/restore.yaml: key sensitivity.parameters"
    chosen = profile_restore["sensitivity"].get("values", {})
    unknown = sorted(set(chosen) - set(experiment["sensitivity"]["parameters"]))
    if unknown:
        raise RestoreError(f"profile: key restore.sensitivity.values: {', '.join(unknown)} not among {where}")
    points = []
    for parameter, values in experiment["sensitivity"]["parameters"].items():
        if parameter in experiment["options"]:
            chapter = experiment["options"][parameter]
        elif parameter in TOP_LEVEL_OPTIONS:
            chapter = experiment[parameter]
        else:
            raise RestoreError(f"{where}.{parameter}: the chapter's value is not stated; add {parameter} to "
                               "`options` (the grid is centred on it)")
        chapter_options = {**{k: experiment[k] for k in TOP_LEVEL_OPTIONS}, **experiment["options"]}
        overrides = [value if isinstance(value, dict) else {parameter: value} for value in values]
        defaults = [all(chapter_options.get(k) == v for k, v in o.items()) for o in overrides]
        if sum(defaults) != 1:
            raise RestoreError(f"{where}.{parameter}: the chapter's value ({option_text(chapter)}) must be among "
                               f"the values exactly once; it is there {sum(defaults)} times")
        picked = chosen.get(parameter, values)
        missing = [v for v in picked if v not in values]
        if missing:
            raise RestoreError(f"profile: key restore.sensitivity.values.{parameter}: {missing} not among {where}."
                               f"{parameter}")
        if not any(d for v, d in zip(values, defaults) if v in picked):
            raise RestoreError(f"profile: key restore.sensitivity.values.{parameter}: the chapter's value "
                               f"({option_text(chapter)}) must be one of them")
        centre = defaults.index(True)
        for index, (value, override, default) in enumerate(zip(values, overrides, defaults)):
            if value in picked:
                points.append({"parameter": parameter, "value": _label(parameter, value), "position": index - centre,
                               "is_default": default, "options": {} if default else override})
    return points


def sensitivity_params(experiment: dict, profile_restore: dict) -> dict[str, dict]:
    """The runs of one grid point, before its overrides: each swept figure's restore.experiment
    parameters (figure_params) with the profile's restore.sensitivity sizes (pages, requests, seeds,
    figure blocks) replacing its restore ones."""
    sizing = profile_restore["sensitivity"]
    profile = {**profile_restore, **{k: sizing[k] for k in ("pages", "requests", "seeds", "jobs") if k in sizing}}
    figures = {}
    for figure in experiment["sensitivity"]["figures"]:
        block = {**(profile_restore.get("figures", {}).get(figure) or {}), **sizing.get("figures", {}).get(figure, {})}
        figures[figure] = figure_params(experiment, {**profile, "figures": {figure: block}}, figure)
    unknown = sorted(set(sizing.get("figures", {})) - set(figures))
    if unknown:
        raise RestoreError(f"profile: key restore.sensitivity.figures: {', '.join(unknown)} not among "
                           "configs/experiments/restore.yaml's sensitivity.figures")
    return figures


def tier_models(names: list[str]) -> dict[str, list]:
    """The tiers' device models (ssdartifact.devices.model), as restore.experiment takes them:
    one list per parameter, fastest tier first."""
    models = [devices.model(name) for name in names]
    return {key: [model[key] for model in models] for key in ("read_latency_us", "alpha", "k_r", "k_w")}


def trace_csv(name: str) -> str:
    return f"{RESULTS}/traces/{name}.csv"


def trace_inputs(experiment: dict, figure: str) -> list[str]:
    """The converted traces a figure reads (none unless configs/experiments/restore.yaml has `traces`)."""
    return [trace_csv(name) for name in experiment["traces"]] if figure in USES_TRACES else []


def figure_params(experiment: dict, profile_restore: dict, figure: str) -> dict:
    """restore.experiment's parameters of one figure: the experiment's common values, the profile's
    size, the experiment's figure block, then the profile's figure block (each wins over the last)."""
    if figure not in experiment["figures"]:
        raise RestoreError(f"configs/experiments/restore.yaml: key figures: no block {figure!r}")
    p = {key: copy.deepcopy(experiment[key]) for key in
         ("server_model", "arrival", "clients", "policies", "default_capacity_pct", "options")}
    p["tiers"] = tier_models(experiment["tiers"])
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
