"""`make plan PROFILE=full`: the profile's jobs per device and per node, their estimated hours and
the critical path, before anything runs (docs/cluster.md, "How long the full profile takes").

The jobs and their dependencies are Snakemake's own (a forced dry run of the profile). Each job's
time is estimated from the quick profile's run on this machine, scaled by the profile's sizes.
A measurement of ACE or CAVE (RUN_S) is two parts: its runs' own seconds, read from the quick
job's tidy CSV (pgbench's time, CAVE's algorithm and load, a baseline's process), which grow with
the runs' work, and the rest of the job (mounting the device, starting a server, copying a
database, starting a process), which grows with the number of runs:

    hours(job) = run seconds of the quick job x work(job in this profile) / work(the quick job)
                 + (the quick job's seconds - its run seconds) x runs(job) / runs(the quick job)

Any other job is one part:

    hours(job) = seconds of the same job in the quick run (results/benchmarks/; a job the quick
                 profile does not have: the mean of its rule's quick jobs)
                 x work(job in this profile) / work(the quick profile's job)

where `work` (WORK below) is what the runs' time grows with, linearly: ACE: transactions per run;
CAVE: edges of each run's graph; a characterization: the length of a fio point times the steps of
its thread search; a simulation: its requests; a build, a figure or a table does not scale.
Linear is a floor where a run's cost grows faster than its data (a 200x larger database misses
more per transaction), and the rest of an ACE run is taken as fixed though its database's copy
grows with the database. A baseline's run stops at its time limit (CAP_S). Without a quick run on
this machine, the committed record of the quick run the guide quotes (docs/numbers.json:
quick.job_* and quick.run_s.*) stands in, and the plan says so.
"""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ace import plan as ace_plan
from cave import plan as cave_plan
from restore import plan as restore_plan
from ssdartifact import REPO_ROOT, config, devices

MEASUREMENTS = {"characterize_device", "search_device_threads", "run_ace_experiments", "run_cave_experiments",
                "run_cave_baselines", "emussd_saturation_sweep"}


@dataclass
class Job:
    rule: str
    wildcards: dict[str, str]
    outputs: list[str]
    inputs: list[str]
    benchmark: str | None
    needs: set[int] = field(default_factory=set)
    hours: float = 0.0
    factor: float | None = 1.0  # None: a measurement of two parts (the source says how each scaled)
    source: str = ""

    @property
    def name(self) -> str:
        return self.rule + (f"[{','.join(self.wildcards.values())}]" if self.wildcards else "")


def dag(profile: str) -> dict[int, Job]:
    """Every job of a forced dry run of `profile`, with the jobs each needs (from files)."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--forceall", "--cores", "2",
                             "--config", f"profile={profile}"], cwd=REPO_ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise PlanError(f"the dry run of the {profile} profile failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    jobs: dict[int, Job] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule is None:
            continue
        fields = dict(re.findall(r"^    (\w+): (.*)$", block, flags=re.M))
        wildcards = dict(re.findall(r"(\w+)=([^,]+)", fields.get("wildcards", "")))
        jobs[int(fields["jobid"])] = Job(rule.group(1), wildcards, _files(fields.get("output")),
                                         _files(fields.get("input")), fields.get("benchmark"))
    producer = {path: jobid for jobid, job in jobs.items() for path in job.outputs}
    for job in jobs.values():
        job.needs = {producer[path] for path in job.inputs if path in producer}
    return jobs


def _files(listed: str | None) -> list[str]:
    return [item.strip() for item in listed.split(",")] if listed else []


class PlanError(RuntimeError):
    pass


# ---- what a job's time grows with, per rule (the scaling model of the module's docstring)

def _fio_point_s(profile: dict) -> float:
    return (profile["fio_point"]["runtime_ms"] + profile["fio_point"]["ramp_ms"]) / 1000


def _characterization(profile: dict, job: Job) -> float:
    sizes = (profile["characterize"].get("random_block_sizes")
             or config.load("experiments/pio.yaml")["characterization"]["random_block_sizes"])
    return _fio_point_s(profile) * math.log2(profile["characterize"]["max_threads"]) * len(sizes)


def _thread_searches(profile: dict, job: Job) -> float:
    return _fio_point_s(profile) * math.log2(profile["characterize"]["max_threads"])


def _ace_runs(profile: dict, job: Job) -> float:
    ace = profile["ace"]
    points = ace_plan.device_points(config.load("experiments/ace.yaml"), ace, job.wildcards["device"])
    return sum(p.get("repetitions", ace["repetitions"]) for p in points) * (ace["transactions"]
                                                                             + ace["warmup_transactions"])


def _edges(spec: dict) -> float:
    if "scale" in spec:
        return 2 ** spec["scale"] * spec["edge_factor"]
    return 1.5 * spec.get("rows", 1) * spec.get("cols", 1)


def _cave_runs(profile: dict, job: Job, baselines: bool = False) -> float:
    points = cave_plan.device_points(config.load("experiments/cave.yaml"), profile["cave"],
                                     config.load("datasets.yaml"), job.wildcards["device"], baselines=baselines)
    return sum(_edges(p["spec"]) for p in points if "spec" in p) or len(points)


def _restore_requests(profile: dict, job: Job) -> float:
    restore = profile["restore"]
    return restore["requests"] * len(restore["seeds"])


def _sensitivity(profile: dict, job: Job) -> float:
    restore = profile["restore"]
    points = restore_plan.sensitivity_points(config.load("experiments/restore.yaml"), restore)
    return len(points) * restore["sensitivity"].get("requests", restore["requests"])


WORK = {
    "characterize_device": _characterization,
    "search_device_threads": _thread_searches,
    "emussd_saturation_sweep": lambda profile, job: _fio_point_s(profile),
    "run_ace_experiments": _ace_runs,
    "load_ace_templates": lambda profile, job: profile["ace"]["scale"],
    "run_cave_experiments": _cave_runs,
    "run_cave_baselines": lambda profile, job: _cave_runs(profile, job, baselines=True),
    "simulate_restore_figures": _restore_requests,
    "simulate_restore_sensitivity": _sensitivity,
    "record_tpcc_trace": lambda profile, job: profile["restore"]["tpcc_trace"]["transactions"],
}


def _baselines_cap_s(profile: dict, job: Job) -> float:
    """A baseline's run stops at the profile's baseline_timeout_s (configs/experiments/cave.yaml)."""
    points = cave_plan.device_points(config.load("experiments/cave.yaml"), profile["cave"],
                                     config.load("datasets.yaml"), job.wildcards["device"], baselines=True)
    timeout = profile["cave"].get("baseline_timeout_s", config.load("experiments/cave.yaml")["baselines"]["timeout_s"])
    own = profile["cave"].get("baseline_timeout_s_by_system", {})
    return sum(own.get(point.get("system"), timeout) for point in points)


def _searches_s(profile: dict, job: Job) -> float:
    """A device's thread searches alone (search_device_threads) by their fio points: reads and writes
    at each block size (4 KiB; and 8 KiB for Figure 2.7's devices), a search doubling up to max_threads
    then bisecting back (about 2 log2(max_threads) points), each point its runtime and ramp."""
    raw = set(profile.get("raw_vs_fs", {}).get("devices", []))
    figure_2_7 = raw | {devices.declaration(d).get("file_system_twin") for d in raw}
    sizes = 2 if job.wildcards.get("device") in figure_2_7 else 1
    return 2 * sizes * 2 * math.log2(profile["characterize"]["max_threads"]) * _fio_point_s(profile)


# ---- a measurement's runs: their own seconds in the quick job's tidy CSV, and how many there are

RUN_CSV = {"run_ace_experiments": "results/ace/devices/{device}/runs.csv",
           "run_cave_experiments": "results/cave/devices/{device}/runs.csv",
           "run_cave_baselines": "results/cave/devices/{device}/baselines.csv"}


def _number(value: str) -> float:
    return float(value) if value not in ("", "NA", "nan") else 0.0


def _ace_run_s(row: dict) -> float:
    """pgbench's measured seconds, with its warm-up's at the same rate."""
    measured = _number(row["transactions"])
    return _number(row["wall_s"]) * (measured + _number(row["warmup_transactions"])) / measured if measured else 0.0


def _cave_run_s(row: dict) -> float:
    return _number(row["runtime_s"]) + _number(row.get("load_s", ""))


def _baseline_run_s(row: dict) -> float:
    """A baseline's process (its limit when it was stopped there) and its conversion of the graph."""
    limit = _number(row["time_limit_s"]) if row.get("status") == "timed_out" else 0.0
    return (_number(row["runtime_s"]) or limit) + _number(row.get("preprocess_s", ""))


ROW_S = {"run_ace_experiments": _ace_run_s, "run_cave_experiments": _cave_run_s,
         "run_cave_baselines": _baseline_run_s}


def run_seconds(rule: str, device: str, root: Path) -> float | None:
    """The seconds of a measurement's runs themselves, from its tidy CSV in the results tree
    `root`; None when the tree has no such CSV."""
    path = root / RUN_CSV[rule].format(device=device)
    if not path.exists():
        return None
    with open(path, newline="", encoding="utf-8") as handle:
        return sum(ROW_S[rule](row) for row in csv.DictReader(handle))


def _ace_run_count(profile: dict, job: Job) -> float:
    ace = profile["ace"]
    points = ace_plan.device_points(config.load("experiments/ace.yaml"), ace, job.wildcards["device"])
    return sum(p.get("repetitions", ace["repetitions"]) for p in points)


def _cave_run_count(profile: dict, job: Job, baselines: bool = False) -> float:
    return len(cave_plan.device_points(config.load("experiments/cave.yaml"), profile["cave"],
                                       config.load("datasets.yaml"), job.wildcards["device"], baselines=baselines))


RUNS = {"run_ace_experiments": _ace_run_count, "run_cave_experiments": _cave_run_count,
        "run_cave_baselines": lambda profile, job: _cave_run_count(profile, job, baselines=True)}


# A measurement the quick run did not record: its time from the profile alone.
WITHOUT_RECORD = {"search_device_threads": _searches_s}

# The most a job can take, whatever the scaling says: its runs' time limits.
CAP_S = {"run_cave_baselines": _baselines_cap_s}


def _scale(rule: str, profile: dict, quick: dict, job: Job, quick_jobs: list[Job], measure=None) -> float:
    """measure(job) / measure(the quick jobs it is compared with: the same job, else the rule's
    mean); measure: the rule's work (WORK) unless given (RUNS)."""
    measure = measure or WORK.get(rule)
    if measure is None:
        return 1.0
    try:
        reference = sum(measure(quick, each) for each in quick_jobs) / len(quick_jobs)
        return measure(profile, job) / reference
    except (KeyError, ZeroDivisionError):  # the quick profile does not size it (e.g. no sensitivity study)
        return 1.0


# ---- the quick run's times

def _benchmark_seconds(path: Path) -> float | None:
    if not path.exists():
        return None
    lines = path.read_text().splitlines()
    return sum(float(line.split("\t")[0]) for line in lines[1:] if line.strip()) or None


def quick_seconds(quick_jobs: dict[int, Job], root: Path) -> tuple[dict[str, float], str]:
    """Seconds of each quick job by name, and where they come from: this machine's benchmarks when
    it ran the quick profile (results/benchmarks/ also holds other profiles' jobs of the same
    names), else, and for a job it lacks, the guide's committed record of a quick run, labelled."""
    numbers = json.loads((REPO_ROOT / "docs/numbers.json").read_text())["numbers"]
    per_rule: dict[str, list[Job]] = defaultdict(list)
    for job in quick_jobs.values():
        per_rule[job.rule].append(job)
    committed = {}
    for rule, jobs in per_rule.items():
        total = numbers.get(f"quick.job_min.{rule}", {}).get("value")
        total = float(total) * 60 if total else float(numbers.get(f"quick.job_s.{rule}", {}).get("value", 0)) or None
        for job in jobs:
            named = f"{rule}.{'.'.join(job.wildcards.values())}"
            minutes = numbers.get(f"quick.job_min.{named}", {}).get("value")
            seconds = numbers.get(f"quick.job_s.{named}", {}).get("value")
            if seconds or minutes:
                committed[job.name] = float(seconds) if seconds else float(minutes) * 60
            elif total:
                committed[job.name] = total / len(jobs)
    date = numbers.get("quick.run_date", {}).get("value", "an unknown date")
    label = (f"COMMITTED ESTIMATES from the guide's record of the quick run of {date} (docs/numbers.json, "
             "quick.job_*; a rule's total split evenly where it records no job)")
    if not (root / "results/runs/quick.json").exists():
        return committed, (f"NO quick run on this machine (results/runs/quick.json is absent): {label}; "
                           "`make reproduce PROFILE=quick` measures this machine's own")
    measured = {job.name: s for job in quick_jobs.values() if job.benchmark
                and (s := _benchmark_seconds(root / job.benchmark)) is not None}
    return {**committed, **measured}, (f"this machine's quick run (results/benchmarks/: {len(measured)} of "
                                       f"{len(quick_jobs)} jobs; the others {label})")


def quick_run_seconds(quick_jobs: dict[int, Job], root: Path) -> dict[str, float]:
    """The run seconds (RUN_S) of each quick measurement of ACE or CAVE by name: from this machine's
    quick run's tidy CSVs, else, for a job it lacks, from the guide's record (quick.run_s.*)."""
    numbers = json.loads((REPO_ROOT / "docs/numbers.json").read_text())["numbers"]
    local = (root / "results/runs/quick.json").exists()
    seconds = {}
    for job in quick_jobs.values():
        if job.rule not in ROW_S:
            continue
        device = job.wildcards["device"]
        measured = run_seconds(job.rule, device, root) if local else None
        recorded = numbers.get(f"quick.run_s.{job.rule}.{device}", {}).get("value")
        if measured is not None or recorded:
            seconds[job.name] = measured if measured is not None else float(recorded)
    return seconds


def estimate(profile_name: str, root: Path = REPO_ROOT) -> tuple[dict[int, Job], str]:
    profile, quick = config.load_profile(profile_name), config.load_profile("quick")
    jobs, quick_jobs = dag(profile_name), dag("quick")
    seconds, source = quick_seconds(quick_jobs, root)
    run_s = quick_run_seconds(quick_jobs, root)
    by_name = {job.name: job for job in quick_jobs.values()}
    by_rule: dict[str, list[float]] = defaultdict(list)
    for name, s in seconds.items():
        by_rule[by_name[name].rule].append(s)
    for job in jobs.values():
        if job.name in seconds:
            base, job.source, compared = seconds[job.name], "same job", [by_name[job.name]]
        elif by_rule.get(job.rule):
            base, job.source = sum(by_rule[job.rule]) / len(by_rule[job.rule]), "rule's mean"
            compared = [by_name[name] for name in seconds if by_name[name].rule == job.rule]
        elif job.rule in WITHOUT_RECORD:
            base, job.source, compared = WITHOUT_RECORD[job.rule](profile, job), "fio points x their length", []
        else:
            base, job.source, compared = 0.0, "no record", []
        job.factor = _scale(job.rule, profile, quick, job, compared)
        job.hours = base * job.factor / 3600
        if job.rule in RUNS and compared and all(each.name in run_s for each in compared):
            runs = sum(run_s[each.name] for each in compared) / len(compared)
            count = _scale(job.rule, profile, quick, job, compared, RUNS[job.rule])
            job.hours = (runs * job.factor + max(base - runs, 0.0) * count) / 3600
            job.source += f"'s runs (of {base:.0f} s, {runs:.0f}) x {job.factor:,.0f}, the rest x {count:,.0f}"
            job.factor = None
        if job.rule in CAP_S and CAP_S[job.rule](profile, job) / 3600 < job.hours:
            job.hours = CAP_S[job.rule](profile, job) / 3600
            job.source += ", which is more than its runs' time limits: their sum"
    return jobs, source


def critical_path(jobs: dict[int, Job]) -> tuple[float, list[Job]]:
    """The longest chain of dependent jobs (hours), and the chain."""
    longest: dict[int, tuple[float, list[int]]] = {}

    def visit(jobid: int) -> tuple[float, list[int]]:
        if jobid not in longest:
            before = max((visit(n) for n in jobs[jobid].needs), default=(0.0, []), key=lambda t: t[0])
            longest[jobid] = (before[0] + jobs[jobid].hours, before[1] + [jobid])
        return longest[jobid]

    hours, chain = max((visit(j) for j in jobs), key=lambda t: t[0])
    return hours, [jobs[j] for j in chain]


def where(device: str) -> str:
    """The node (or feature, or partition) a device's declaration names; 'any node' without one."""
    placed = devices.declaration(device).get("cluster", {})
    return ", ".join(f"{key} {value}" for key, value in placed.items()) or "any node"


def report(profile_name: str, nodes: int, root: Path = REPO_ROOT) -> str:
    jobs, source = estimate(profile_name, root)
    per_device: dict[str, list[Job]] = defaultdict(list)
    anywhere = []
    for job in jobs.values():
        device = job.wildcards.get("device") or (
            config.load("experiments/emussd.yaml")["saturation"]["device"] if job.rule == "emussd_saturation_sweep"
            else None)
        (per_device[device] if job.rule in MEASUREMENTS and device else anywhere).append(job)
    lines = [f"Plan of the {profile_name} profile: {len(jobs)} jobs, "
             f"{sum(len(v) for v in per_device.values())} measurements on {len(per_device)} devices.",
             f"Times from {source}, scaled by the {profile_name} profile's sizes (workflow/steps/plan.py: the model;",
             "linear in the work, so a large factor is a far extrapolation: read it as an order of magnitude).",
             "", "Per device (one measurement at a time on each; hours):"]
    lane = {device: sum(j.hours for j in js) for device, js in per_device.items()}
    for device in sorted(per_device, key=lambda d: -lane[d]):
        lines.append(f"  {device:<16} {where(device):<24} {lane[device]:9.1f} h")
        for job in sorted(per_device[device], key=lambda j: -j.hours):
            scaled = f" x {job.factor:,.0f}" if job.factor is not None else ""
            lines.append(f"      {job.name:<48} {job.hours:9.1f} h  (quick's {job.source}{scaled})")
    lines += ["", "Per node (a device's declaration names it: configs/devices.yaml, key cluster):"]
    per_node: dict[str, list[str]] = defaultdict(list)
    for device in per_device:
        per_node[where(device)].append(device)
    for node, held in sorted(per_node.items()):
        lines.append(f"  {node:<24} {sum(lane[d] for d in held):9.1f} h  ({', '.join(sorted(held))})")
    other = sum(j.hours for j in anywhere)
    lines.append(f"  {'anywhere':<24} {other:9.1f} h  ({len(anywhere)} builds, simulations, figures and tables)")
    hours, chain = critical_path(jobs)
    lines += ["", f"Critical path: {hours:.1f} h",
              *(f"  {job.name:<52} {job.hours:9.2f} h" for job in chain if job.hours >= 0.005 or job is chain[-1])]
    total = sum(lane.values()) + other
    bound = max(hours, max(lane.values(), default=0.0), total / nodes)
    lines += ["", f"All jobs: {total:.1f} h of work. On {nodes} node(s): at least {bound:.1f} h "
              f"(the longest of the critical path, the busiest device and the work spread over the nodes); "
              "`make plan NODES=N` for another N."]
    return "\n".join(lines)
