"""Chapter 6's tidy CSVs: the documented columns of each, and the columns derived within a group
of runs (one configuration, every policy): ranks, ratios to ReStore and to Static, Figure 6.9's
migrations, the growth with scale, and the cross-check's agreement of the two engines."""

from __future__ import annotations

import itertools

from . import experiment

RULE_BASED = ["static", "tlfu", "tlru", "lrfu", "exd", "temp"]

# The group of runs each derived column compares within (one configuration, all policies).
GROUPS = {
    "fig_6_1": ["workload", "t1_pct", "t2_pct", "seed"],
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
    "policy_memory_bytes": "bytes of the policy's data structures, placement included, as the policy counts them",
    "policy_heap_bytes": "heap bytes the policy holds at the end of its run, measured by the allocator (in use with "
                         "it minus without it): Table 6.6's memory",
    "normalized_runtime": "runtime_us / Static's in the same group; NA when the CPU time is not measured",
    "normalized_data_access": "data_access_us / Static's in the same group (the thesis's normalized latency)",
    # derived here
    "migrations_up": "pages promoted (Tier 2 to 1 plus Tier 3 to 2): Figure 6.9's bar",
    "restore_speedup": "data_access_us / ReStore's in the same group: how many times faster ReStore is",
    "restore_migration_reduction": "migrations_up / ReStore's in the same group: how many times fewer ReStore "
                                   "makes (NA when ReStore makes none)",
    "promotion_rate": "migrations_up / the requests Tier 2 and Tier 3 served: the share of the accesses that could "
                      "promote which did (NA when the slower tiers served none)",
    "headroom": "tLFU's data_access_us / Static's in the same group: how much an oracle placement gains over tLFU, "
                "the room any migration policy has there (NA without both)",
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
    "policy_heap_mb": "policy_heap_bytes / 1e6",
    # cross-check
    "engine": "sim: virtual-time simulator; emu: real-time emulator (sleeping thread pools)",
    "runs": "runs of this engine whose median the times are (the simulator's virtual time: 1)",
    "spread": "(max - min) / median of this engine's runs' data_access_us",
    "rule_based": "the policy is one of the six rule-based ones (Static included), not ReStore",
    "tolerance": "simulated times closer than this (relative) may be ordered either way by the emulator",
    "policy_a": "first policy of the pair",
    "policy_b": "second policy of the pair",
    "sim_ratio": "data_access_us of policy_a / policy_b in the simulator",
    "emu_ratio": "data_access_us of policy_a / policy_b in the emulator (wall time)",
    "beyond_tolerance": "the simulator's times of the pair differ by more than the tolerance",
    "agree": "both engines order the pair the same way",
    # sensitivity study
    "parameter": "the swept parameter (configs/experiments/restore.yaml, sensitivity.parameters), the others at "
                 "the chapter's values",
    "value": "its value at this grid point (with the other options the value sets, e.g. a Poisson rate)",
    "position": "the value's place in the parameter's list minus the chapter's value's (0: the chapter's value)",
    "is_default": "the value is the one Chapter 6 runs with (options of configs/experiments/restore.yaml)",
    "claim": "claim id (configs/claims/), evaluated on this point's CSVs by the claims report's checker",
    "status": "pass, fail or not run, as in the claims report",
    "holds": "the claim passes at this point (NA: not run)",
    "measured": "what the check measured (as in the claims report)",
    "score": "how far it holds: the share of the check's rows (or groups) that hold, or a comparison's ratio "
             "(left / right; it holds above 1)",
    "points": "grid points where the claim was evaluated (the chapter's point counted once)",
    "holding": "points where it holds",
    "fraction_holding": "holding / points",
    "holds_at_default": "it holds at the chapter's values (1) or not (0)",
}

RUN_EXTRA = ["migrations_up", "promotion_rate", "headroom", "restore_speedup", "restore_migration_reduction", "rank",
             "adaptive_rank"]
CROSSCHECK_PAIR_COLUMNS = ["seed", "policy_a", "policy_b", "rule_based", "sim_ratio", "emu_ratio", "tolerance",
                           "beyond_tolerance", "agree"]


SENSITIVITY_COLUMNS = ["parameter", "value", "position", "is_default", "claim", "status", "holds", "score", "measured"]
SENSITIVITY_SUMMARY_COLUMNS = ["claim", "points", "holding", "fraction_holding", "holds_at_default"]


def sensitivity_summary(rows: list[dict]) -> list[dict]:
    """Per claim, over the distinct grid points (the chapter's point, a row of every parameter,
    counted once; points where it was not run left out): how many, how many hold, the share."""
    out = []
    for claim in dict.fromkeys(r["claim"] for r in rows):
        mine = [r for r in rows if r["claim"] == claim]
        defaults = [r for r in mine if r["is_default"]]
        distinct = [r for r in mine if not r["is_default"]] + defaults[:1]
        judged = [r for r in distinct if r["holds"] is not None]
        holding = sum(r["holds"] for r in judged)
        out.append({"claim": claim, "points": len(judged), "holding": holding,
                    "fraction_holding": holding / len(judged) if judged else None,
                    "holds_at_default": None if defaults[0]["holds"] is None else int(defaults[0]["holds"])})
    return out


def columns(names: list[str]) -> dict[str, str]:
    return {name: COLUMN_DOCS[name] for name in names}


def csv_columns(figure: str) -> list[str]:
    base = getattr(experiment, f"{figure.upper()}_COLUMNS")
    if figure in ("fig_6_1", "fig_6_8", "fig_6_10", "fig_6_11"):
        return [*base, "normalized_data_access", *RUN_EXTRA]
    if figure == "fig_6_12":
        return [*base, *RUN_EXTRA, "largest_group", "normalized_growth"]
    if figure == "fig_6_13":
        return [*base, *RUN_EXTRA]
    if figure == "crosscheck":
        return [*base, "rule_based"]
    return list(base)


def _ratio(a, b):
    return a / b if a is not None and b else None


def _ranks(values: dict[str, float]) -> dict[str, int]:
    """Rank 1 = smallest; equal values share the lower rank."""
    ordered = sorted(values.values())
    return {key: ordered.index(value) + 1 for key, value in values.items()}


def add_group_columns(rows: list[dict], group_keys: list[str]) -> list[dict]:
    """Figure 6.9's migrations, each run's promotion rate and, within each group (one configuration,
    every policy), the headroom (tLFU against Static), each policy's rank, its ratio to ReStore, and
    (when missing) its data access normalized to Static."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        row["migrations_up"] = row["migrations_t2_t1"] + row["migrations_t3_t2"]
        row["promotion_rate"] = _ratio(row["migrations_up"], row["accesses_t2"] + row["accesses_t3"])
        groups.setdefault(tuple(row[k] for k in group_keys), []).append(row)
    for members in groups.values():
        by_policy = {r["policy"]: r for r in members}
        restore, static, tlfu = by_policy.get("restore"), by_policy.get("static"), by_policy.get("tlfu")
        headroom = _ratio(tlfu and tlfu["data_access_us"], static and static["data_access_us"])
        ranks = _ranks({r["policy"]: r["data_access_us"] for r in members})
        adaptive = _ranks({r["policy"]: r["data_access_us"] for r in members if r["policy"] != "static"})
        for r in members:
            if "normalized_data_access" not in r or r["normalized_data_access"] is None:
                r["normalized_data_access"] = _ratio(r["data_access_us"], static and static["data_access_us"])
            r["headroom"] = headroom
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


def shape(figure: str, rows: list[dict]) -> list[dict]:
    """The rows of `figure` with its derived columns."""
    if figure in GROUPS:
        add_group_columns(rows, GROUPS[figure])
    if figure == "fig_6_12":
        add_scale_columns(rows)
    if figure == "crosscheck":
        for r in rows:
            r["rule_based"] = r["policy"] in RULE_BASED
    return rows
