"""The numbers the guide (docs/) gives about a run, each computed from the run's results (the
markers and their check: ssdartifact.guide). A number is named by what it is, so a page can ask
for any job, device or test suite without new code:

  <profile>.reproduce_min                  minutes of the profile's last `make reproduce` with jobs
                                           (results/runs/<profile>.json); <profile>.run_date its day
  <profile>.job_min.<rule>[.<wildcard>]    minutes a rule's jobs took, summed (results/benchmarks/),
  <profile>.job_s.<rule>[.<wildcard>]      or seconds; e.g. quick.job_min.run_ace_experiments.emu-pcie-db
  <profile>.claims[.chapter<N>].<status>  claims passed, failed, known (failed where configs/claims/
                                           says they may at this scale), unexpected, not_run, total
  <profile>.ace.runs[.<device>]            ACE runs measured (results/ace/runs.csv)
  <profile>.ace.s_per_run[.<device>]       seconds of ACE's campaign per run (its benchmark / its runs)
  <profile>.run_s.<rule>.<device>          seconds of a measurement's runs themselves, from its tidy CSV
                                           (steps.plan.run_seconds: make plan's model)
  <profile>.device.<device>.<alpha|alpha_cost|k_r|k_w>  the characterization's alpha (of bandwidths, or of
                                           costs) and k, 4 KiB random
  <profile>.claim:<id>:<status|summary>    a claim's status, or its measured numbers up to the first ';'
                                           (recorded for every claim of the run's report, on a page or not:
                                           docs/numbers.json is the per-claim record, and `make guide-check`
                                           names a claim of configs/claims/ it lacks)
  <profile>.value.<key>                    a number of a result CSV: docs/values.yaml's entry <key> (data,
                                           column, aggregate, where: a pandas query, format)
  tests.<suite>.<passed|failed|skipped|min>  a test suite's JUnit report (results/tests/<suite>.xml)
  tests.make_test_min                      make test's suites: the unit tests or the longest lane, + wall-clock

The profile's numbers are taken only from a results tree whose last run was that profile's.
"""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pandas as pd
import yaml
from ssdartifact import claims, config, guide
from ssdartifact.guide import GuideError, Number

BENCHMARKS = "results/benchmarks"
CLAIM_COUNTS = ("passed", "failed", "known", "unexpected", "not_run", "total")


def _rows(path: Path, delimiter: str = ",") -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter=delimiter))


def _job_sources(rule: str, wildcard: str | None) -> tuple[str, ...]:
    """A rule without wildcards has one benchmark, <rule>.tsv; one with them, a folder of them."""
    if wildcard:
        return (f"{BENCHMARKS}/{rule}/{wildcard}.tsv",)
    return (f"{BENCHMARKS}/{rule}.tsv", f"{BENCHMARKS}/{rule}/**/*.tsv")


def _seconds(root: Path, sources: tuple[str, ...]) -> float:
    tables = sorted({path for pattern in sources for path in root.glob(pattern)})
    return sum(float(row["s"]) for table in tables for row in _rows(table, "\t"))


def _claims(status: str, chapter: str | None):
    def count(root: Path) -> str:
        def counted(row: dict) -> bool:
            if chapter is not None and row["chapter"] != chapter:
                return False
            failed = row["status"] == "fail"
            return {"passed": row["status"] == "pass", "failed": failed, "known": failed and bool(row["known_reason"]),
                    "unexpected": failed and not row["known_reason"], "not_run": row["status"] == "not run",
                    "total": True}[status]
        return str(sum(map(counted, _rows(root / "results/claims/claims.csv"))))
    return count


def _claim(claim: str, field: str):
    """A claim's status in the report, or its measured numbers' summary (up to the first ';',
    before the failing rows it lists)."""
    def value(root: Path) -> str:
        rows = [row for row in _rows(root / "results/claims/claims.csv") if row["id"] == claim]
        if len(rows) != 1:
            raise ValueError(f"claim {claim!r} is not in the report")
        # a page's table cell: a '|' in the text would end it
        return rows[0]["status"] if field == "status" else rows[0]["measured"].split(";")[0].replace("|", "\\|")
    return value


def _ace_runs(root: Path, device: str | None) -> int:
    runs = [row for row in _rows(root / "results/ace/runs.csv") if device is None or row["device"] == device]
    if not runs:
        raise ValueError(f"no ACE run on {device}")
    return len(runs)


def _junit_totals(root: Path, suite: str) -> dict[str, float]:
    report = ElementTree.parse(root / f"results/tests/{suite}.xml").getroot()
    suites = [report] if report.tag == "testsuite" else list(report.iter("testsuite"))
    return {key: sum(float(each.get(key, 0)) for each in suites) for key in ("tests", "failures", "errors", "skipped",
                                                                           "time")}


def _junit(suite: str, field: str):
    def value(root: Path) -> str:
        total = _junit_totals(root, suite)
        if field == "min":
            return f"{total['time'] / 60:.0f}"
        if field == "passed":
            return str(int(total["tests"] - total["failures"] - total["errors"] - total["skipped"]))
        return str(int(total["failures"] + total["errors"] if field == "failed" else total[field]))
    return value


def _alpha_k(device: str, field: str):
    def value(root: Path) -> str:
        rows = [row for row in _rows(root / f"results/pio/devices/{device}/alpha_k.csv")
                if int(row["block_size"]) == 4096 and row.get("pattern", "random") == "random"]
        if len(rows) != 1:
            raise ValueError(f"{len(rows)} rows at 4 KiB")
        return f"{float(rows[0][field]):.2f}" if field.startswith("alpha") else f"{float(rows[0][field]):.0f}"
    return value


def _reproduce_minutes(root: Path, profile: str) -> str:
    return f"{json.loads((root / f'results/runs/{profile}.json').read_text(encoding='utf-8'))['minutes']:.0f}"


def _make_test_minutes(root: Path) -> str:
    """The test suites of `make test`: the unit tests and the lanes side by side, then the
    end-to-end checks that time something (their setup and the builds the lanes wait for not counted)."""
    minutes = {suite: _junit_totals(root, suite)["time"] / 60 for suite in TEST_SUITES}
    total = max(minutes["unit"], *(minutes[lane] for lane in E2E_LANES)) + minutes["e2e-wall-clock"]
    return f"{total:.0f}"


E2E_LANES = ("e2e-native", "e2e-docker", "e2e-slurm")  # the Makefile's test-e2e: side by side
TEST_SUITES = ("unit", "e2e-wall-clock", *E2E_LANES)


VALUES = guide.DOCS / "values.yaml"


def _csv_value(entry: dict):
    def value(root: Path) -> str:
        frame = pd.read_csv(root / entry["data"])
        return format(claims.value_of(frame, entry["column"], entry.get("aggregate", "mean"), entry.get("where")),
                      entry.get("format", ".3g"))
    return value


def resolve(name: str) -> Number | None:
    """How the number `name` is computed, or None when no rule of this module's docstring describes it."""
    parts = name.split(".")
    if name == "tests.make_test_min":
        return Number(tuple(f"results/tests/{suite}.xml" for suite in TEST_SUITES),
                      "the unit tests or the longest lane, then wall-clock", _make_test_minutes)
    if parts[0] == "tests":
        if len(parts) == 3 and parts[2] in ("passed", "failed", "skipped", "min"):
            return Number((f"results/tests/{parts[1]}.xml",), f"JUnit report: {parts[2]}", _junit(parts[1], parts[2]))
        return None
    if len(parts) < 2 or parts[0] not in config.profile_names():
        return None
    if parts[1].startswith("claim:"):  # a claim's id holds dots: <profile>.claim:<id>:<status|summary>
        claim, _, field = name.split(".", 1)[1].removeprefix("claim:").rpartition(":")
        if field not in ("status", "summary") or not claim:
            return None
        return Number(("results/claims/claims.csv",), f"claim {claim}: {field}", _claim(claim, field))
    profile, kind, rest = parts[0], parts[1], parts[2:]
    if kind == "run_date" and not rest:
        return Number((f"results/runs/{profile}.json",), "the day it started",
                      lambda root: json.loads((root / f"results/runs/{profile}.json").read_text(encoding="utf-8"))
                      ["started"][:10])
    if kind == "reproduce_min" and not rest:
        return Number((f"results/runs/{profile}.json",), "finished - started",
                      lambda root: _reproduce_minutes(root, profile))
    if kind in ("job_min", "job_s") and 1 <= len(rest) <= 2:
        sources = _job_sources(rest[0], rest[1] if len(rest) == 2 else None)
        if kind == "job_min":
            return Number(sources, "benchmark seconds summed, in minutes",
                          lambda root: f"{_seconds(root, sources) / 60:.1f}")
        return Number(sources, "benchmark seconds summed", lambda root: f"{_seconds(root, sources):.0f}")
    if kind == "run_s" and len(rest) == 2:
        from . import plan  # noqa: PLC0415 (its module loads the systems' plans, which no other number needs)
        rule, device = rest
        if rule not in plan.RUN_CSV:
            return None
        return Number((plan.RUN_CSV[rule].format(device=device),), "the runs' own seconds (steps.plan.run_seconds)",
                      lambda root: f"{plan.run_seconds(rule, device, root):.1f}")
    if kind == "claims" and len(rest) in (1, 2) and rest[-1] in CLAIM_COUNTS:
        chapter = rest[0].removeprefix("chapter") if len(rest) == 2 else None
        if chapter is not None and not (rest[0].startswith("chapter") and chapter.isdigit()):
            return None
        how = f"claims: {rest[-1]}" + (f" of chapter {chapter}" if chapter else "")
        return Number(("results/claims/claims.csv",), how, _claims(rest[-1], chapter))
    if kind == "ace" and 1 <= len(rest) <= 2 and rest[0] in ("runs", "s_per_run"):
        device = rest[1] if len(rest) == 2 else None
        if rest[0] == "runs":
            return Number(("results/ace/runs.csv",), "rows", lambda root: str(_ace_runs(root, device)))
        sources = ("results/ace/runs.csv", *_job_sources("run_ace_experiments", device))
        return Number(sources, "campaign's benchmark seconds / runs",
                      lambda root: f"{_seconds(root, sources[1:]) / _ace_runs(root, device):.1f}")
    if kind == "value" and len(rest) == 1:
        entries = yaml.safe_load(VALUES.read_text(encoding="utf-8")) if VALUES.exists() else {}
        entry = entries.get(rest[0])
        if entry is None:
            return None
        return Number((entry["data"],), f"{entry.get('aggregate', 'mean')} of {entry['column']}"
                      + (f" where {entry['where']}" if entry.get("where") else ""), _csv_value(entry))
    if kind == "device" and len(rest) == 2 and rest[1] in ("alpha", "alpha_cost", "k_r", "k_w"):
        return Number((f"results/pio/devices/{rest[0]}/alpha_k.csv",), f"{rest[1]} at 4 KiB, random",
                      _alpha_k(rest[0], rest[1]))
    return None


def definitions(names) -> dict[str, Number]:
    """The numbers `names` (the pages' markers), each resolved; raises GuideError naming those no
    rule describes."""
    unknown = sorted(name for name in set(names) if resolve(name) is None)
    if unknown:
        raise GuideError("the guide names numbers that steps.guide cannot compute: " + ", ".join(unknown))
    return {name: resolve(name) for name in set(names)}


def used_names(docs: Path = guide.DOCS) -> set[str]:
    return {name for page in guide.pages(docs) for name, _ in guide.markers(page.read_text(encoding="utf-8"))}


def last_profile(root: Path) -> str | None:
    """The profile of the last workflow run with jobs in the results tree `root` (results/runs/)."""
    records = [json.loads(path.read_text(encoding="utf-8")) for path in (root / "results/runs").glob("*.json")]
    records = [record for record in records if record.get("started")]
    return max(records, key=lambda record: record["started"])["profile"] if records else None


CLAIM_FIELDS = ("status", "summary")


def claim_names(profile: str, ids) -> set[str]:
    """The per-claim numbers of `profile`: each claim's status and summary."""
    return {f"{profile}.claim:{claim}:{field}" for claim in ids for field in CLAIM_FIELDS}


def is_claim_number(name: str) -> bool:
    return name.split(".", 1)[-1].startswith("claim:")


def update(profile: str, root: Path, docs: Path = guide.DOCS) -> list[Path]:
    """Take `profile`'s numbers (and the test reports') from the results tree `root` into the
    pages, with the numbers of every claim its report lists; the other profiles' numbers stay as recorded."""
    last = last_profile(root)
    if last is not None and last != profile:
        raise GuideError(f"the last run in {root / 'results'} was profile {last!r}, not {profile!r}: its benchmarks "
                         f"and claims are {last}'s (run `make guide PROFILE={last}`, or reproduce {profile} first)")
    names = {name for name in used_names(docs) if name.split(".")[0] in (profile, "tests")}
    report = root / "results/claims/claims.csv"
    if not report.exists():
        return guide.update(definitions(names), root, docs)
    claims_now = claim_names(profile, [row["id"] for row in _rows(report)])
    # a claim the report no longer has (renamed or removed) leaves the record
    return guide.update(definitions(names | claims_now), root, docs,
                        stale=lambda name: name.startswith(f"{profile}.claim:") and name not in claims_now)


def missing_claims(recorded: dict, ids, only=lambda name: True) -> list[str]:
    """For each profile with claim numbers in docs/numbers.json, the claims of `ids` it has none of."""
    profiles = sorted({name.split(".")[0] for name in recorded if is_claim_number(name) and only(name)})
    found = []
    for profile in profiles:
        wanted = claim_names(profile, ids)
        found += [f"docs/numbers.json: {profile} has no {name.rpartition(':')[2]} of claim {name.split(':')[1]}: run "
                  f"`make guide PROFILE={profile}` after a {profile} run" for name in sorted(wanted - set(recorded))]
        found += [f"docs/numbers.json: {profile} records claim {name.split(':')[1]}, which configs/claims/ does "
                  f"not have: run `make guide PROFILE={profile}` after a {profile} run" for name in
                  sorted(n for n in recorded if n.startswith(f"{profile}.claim:") and n not in wanted)]
    return found


def problems(docs: Path = guide.DOCS, root: Path | None = None, profile: str | None = None,
             claim_ids=None) -> list[str]:
    """Where docs/ is out of date (ssdartifact.guide.problems), and each claim of `claim_ids` (the
    repository's guide: configs/claims/'s) docs/numbers.json has no numbers for; `profile`: only
    that profile's numbers."""
    try:
        known = definitions(used_names(docs))
    except GuideError as error:
        return [str(error)]
    only = (lambda name: name.split(".")[0] == profile) if profile else (lambda name: True)
    if claim_ids is None and docs == guide.DOCS:
        claim_ids = [claim["id"] for claim in config.load("claims")["claims"]]
    recorded = guide.load(docs / guide.NUMBERS.name)["numbers"]
    claims_problems = missing_claims(recorded, claim_ids, only) if claim_ids is not None else []
    return guide.problems(known, docs, root, only=only, unpaged=is_claim_number) + claims_problems
