"""The two Chapter 6 tables that describe the policies and workloads rather than measure them, as tidy
CSVs for their table scripts: Table 6.1, the features each migration policy captures (declared here,
beside the policies' code, with where in the code each one shows), and Table 6.4, the synthetic
workloads the experiment runs (configs/experiments/restore.yaml) with the phases restore-sim gives
each name (src/workload.cc, its presets; a unit test keeps the two in step)."""

from __future__ import annotations

import re

from ssdartifact import tidy

# Table 6.1's rows (T1669-1676) and what each means for a policy of src/builtin_policies.cc.
FEATURES = {
    "access_frequency": "the policy counts a page's accesses",
    "access_recency": "the policy weighs when a page was accessed last",
    "dynamic_allocation": "pages move between tiers as the workload runs (not a fixed placement)",
    "workload_drift": "the policy follows a change of the hot set: yes, partly (a decay that forgets slowly), no",
    "device_properties": "the tiers' latency, asymmetry and concurrency enter the decision",
}
YES, PARTLY, NO = "yes", "partly", "no"

# Each policy's declared properties, in Table 6.1's order; where the code shows them:
#   tlfu  key + 1 per access (ScorePolicy::touch, kTlfu): frequency only, a count never forgets
#   tlru  key = the access's stamp (kTlru): recency only
#   lrfu  CRF = sum of 2^(-lambda t) over past accesses (kLrfu): both, forgetting at rate lambda
#   exd   sum of e^(-alpha t) (kExd): both, as LRFU with another decay
#   restore  the RL agents (rl.cc) over the temperature model (temperature.cc: recency and frequency)
#         and each tier's queued work times its read and write costs (s_2, T1809)
POLICY_FEATURES = {
    "exd": {"access_frequency": YES, "access_recency": YES, "dynamic_allocation": YES,
            "workload_drift": PARTLY, "device_properties": NO},
    "lrfu": {"access_frequency": YES, "access_recency": YES, "dynamic_allocation": YES,
             "workload_drift": PARTLY, "device_properties": NO},
    "tlru": {"access_frequency": NO, "access_recency": YES, "dynamic_allocation": YES,
             "workload_drift": NO, "device_properties": NO},
    "tlfu": {"access_frequency": YES, "access_recency": NO, "dynamic_allocation": YES,
             "workload_drift": NO, "device_properties": NO},
    "restore": {"access_frequency": YES, "access_recency": YES, "dynamic_allocation": YES,
                "workload_drift": YES, "device_properties": YES},
}

# restore-sim's workload presets (src/workload.cc, preset()): name -> phases, '+' between
# phases, XhfY = Y % of the requests on X % of the pages, @SET which hot set, *N N phases each
# on a new hot set.
WORKLOAD_PRESETS = {
    "5hf90": "5hf90@0", "10hf90": "10hf90@1", "10hf80": "10hf80@1",
    "A": "5hf90@0+10hf80@1", "B": "5hf90@0+10hf80@1+20hf80@2", "C": "5hf90*10", "D": "5hf90*50",
}
_PHASE = re.compile(r"^(?P<x>[0-9.]+)hf(?P<y>[0-9.]+)(?:@(?P<set>[0-9]+))?(?:\*(?P<n>[0-9]+))?$")

TABLE_6_1_COLUMNS = {"policy": "restore-sim's policy name", **FEATURES}
TABLE_6_4_COLUMNS = {
    "workload": "the name the experiment runs (configs/experiments/restore.yaml)",
    "kind": "static (one phase) or dynamic (phases of equal length, each with its own hot set)",
    "phases": "restore-sim's phases for the name (src/workload.cc)",
    "description": "the phases in words",
}


def describe(spec: str) -> tuple[str, str]:
    """(kind, words) of a preset's phases: '5hf90*10' -> ('dynamic', '10 phases of 90 % of the
    requests on 5 % of the pages, each on a new hot set')."""
    phases = []
    count = 0
    for term in spec.split("+"):
        match = _PHASE.match(term)
        if not match:
            raise ValueError(f"workload phase {term!r} is not XhfY[@SET][*N]")
        n = int(match["n"] or 1)
        count += n
        words = f"{match['y']} % of the requests on {match['x']} % of the pages"
        phases.append(f"{n} phases of {words}, each on a new hot set" if n > 1 else words)
    return ("static" if count == 1 else "dynamic"), "; then ".join(phases)


def write_table_6_1(csv_out: str, policies: list[str]) -> list[dict]:
    """The feature matrix of the experiment's policies that Table 6.1 compares (Static and TEMP,
    which it leaves out, are left out here too)."""
    rows = [{"policy": p, **POLICY_FEATURES[p]} for p in POLICY_FEATURES if p in policies]
    tidy.write_csv(csv_out, TABLE_6_1_COLUMNS, rows)
    return rows


def write_table_6_4(csv_out: str, workloads: list[str]) -> list[dict]:
    rows = []
    for name in workloads:
        if name not in WORKLOAD_PRESETS:
            raise ValueError(f"workload {name!r} is not one of restore-sim's presets: {', '.join(WORKLOAD_PRESETS)}")
        kind, words = describe(WORKLOAD_PRESETS[name])
        rows.append({"workload": name, "kind": kind, "phases": WORKLOAD_PRESETS[name], "description": words})
    tidy.write_csv(csv_out, TABLE_6_4_COLUMNS, rows)
    return rows
