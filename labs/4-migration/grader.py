"""Lab 4's grader: the student's policy.cc (a migration policy, a plug-in of ReStore's tier
simulator) compiled into restore-sim in the sandbox, run on edge cases that the engine checks move
by move, and on each student's hidden drifting workloads against Static and tLFU (the artifact's,
run outside the sandbox) for latency and migrations (lab.yaml). A class leaderboard ranks the mean
latency normalized to Static.

The student's policy runs in a sandboxed process of its own (the simulator's policy_host.cc);
the artifact's restore-sim, outside the sandbox, runs the workload and the tiers and asks it for
each request's moves over a pipe (labkit.plugin.Remote): every number the policy is judged by is
the engine's, and the engine's own placement record (restore's PlacementCheck) refuses any move
or placement that cannot be."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

LAB_DIR = Path(__file__).resolve().parent
SUBMISSION_FILE = "policy.cc"
POLICY = "student"  # the name policy.cc registers (RESTORE_REGISTER_POLICY)
# The seed a policy gets for its own random numbers (restore-sim's --policy-seed), the same for
# every run: the workload's seed is hidden, and with it a policy could regenerate every request.
POLICY_SEED = 1


def load_config(override: Path | None = None) -> dict:
    from labkit import config  # noqa: PLC0415

    return config.load(LAB_DIR, override)


def hidden(key: bytes, student: str, config: dict) -> dict:
    """The student's drifting workloads: XhfY phases (a hot set of X % of the pages gets Y % of the
    requests), N phases with a new hot set each, and the tiers' capacities. N is at least enough
    for the phases' hot sets together to fill the two fast tiers twice: with fewer, Static's
    placement (by the whole run's counts) holds every phase's hot set and no policy that migrates
    can beat it (measured: docs/instructors.md)."""
    from labkit import seeds  # noqa: PLC0415

    rng = seeds.student_rng(key, f"lab{config['lab']}", student)
    spec = config["hidden"]
    workloads = []
    for _ in range(spec["workloads"]):
        pages = seeds.draw(rng, spec["pages"])
        t1, t2 = seeds.draw(rng, spec["tier1_pct"]), seeds.draw(rng, spec["tier2_pct"])
        hot, share = seeds.draw(rng, spec["hot_pct"]), seeds.draw(rng, spec["hot_requests_pct"])
        fewest = max(spec["phases"][0], math.ceil(2 * (t1 + t2) / hot))
        phases = rng.randint(fewest, max(fewest, spec["phases"][1]))
        workloads.append({"workload": f"{hot}hf{share}@{rng.randrange(1000)}*{phases}", "pages": pages,
                          "requests": pages * spec["requests_per_page"], "read_pct": seeds.draw(rng, spec["read_pct"]),
                          "capacity_pct": f"{t1}:{t2}:100", "seed": rng.randrange(1, 1 << 31)})
    return {"workloads": workloads}


def _run(runner, options: dict) -> tuple[dict | None, str]:
    """One run of the engine with the submission's policy (labkit.plugin.Remote) with these options."""
    row, error, _ = runner.run(["--cpu-timing", "off", f"--policy-seed={POLICY_SEED}",
                                *(f"--{name.replace('_', '-')}={value}" for name, value in options.items())])
    return row, error


def edge_cases() -> list[tuple[str, dict]]:
    """The validity checks' runs, the same for everyone: the smallest tiers, two and four tiers,
    every page starting in the slowest tier, all reads or all writes, a skewed and a uniform
    workload; each checked by the engine move by move."""
    small = {"pages": 200, "requests": 20000, "seed": 3}
    return [
        ("a fastest tier of one page", {**small, "workload": "5hf90*4", "capacity_pages": "1:10:200"}),
        ("two tiers", {**small, "workload": "10hf90*4", "capacity_pct": "5:100", "read_latency_us": "30:500",
                       "alpha": "1.5:4", "k_r": "8:2", "k_w": "8:2"}),
        ("four tiers", {**small, "workload": "10hf90*4", "capacity_pct": "2:5:10:100",
                        "read_latency_us": "30:100:200:500", "alpha": "1.5:2:3:4", "k_r": "8:4:4:2", "k_w": "8:4:4:2"}),
        ("every page starting in the slowest tier", {**small, "workload": "5hf90*4", "initial": "slowest"}),
        ("all reads", {**small, "workload": "zipf0.99", "read_pct": 100}),
        ("all writes, uniform", {**small, "workload": "uniform", "read_pct": 0}),
        ("ten pages", {"pages": 10, "requests": 2000, "seed": 5, "workload": "20hf90*4", "capacity_pages": "1:2:10"}),
    ]


def prepare(say=print) -> Path:
    """What grading needs built (once per machine; Gradescope's setup.sh calls it): the tier
    simulator and its plug-in library. Returns restore-sim."""
    from restore import engine  # noqa: PLC0415

    say("building ReStore's tier simulator and its plug-in library")
    return engine.build()


def grade(submission: Path, student: str, key: bytes, config: dict, work_root: Path, say=print):
    """Grade one submission; returns labkit.report.Graded (the tests in lab.yaml's order, and the
    leaderboard's entries)."""
    from labkit import config as lab_config  # noqa: PLC0415
    from labkit import plugin, report  # noqa: PLC0415
    from restore import engine  # noqa: PLC0415

    tests = report.tests_of(config)
    if (failed := report.missing(tests, submission, SUBMISSION_FILE)) is not None:
        return failed
    secret = hidden(key, student, config)
    limits = lab_config.limits(config)
    reference = prepare(say)
    with lab_config.workspace(work_root, 4) as (root, work):
        source = lab_config.copy_submission(submission, root) / SUBMISSION_FILE
        say(f"grading {student}: compiling {SUBMISSION_FILE}")
        host, compiled = plugin.build(source, engine.RESTORE_DIR / "src",
                                      engine.BUILD_DIR / "librestore_plugins_only.a", work, limits["build"],
                                      main=engine.RESTORE_DIR / "src" / "policy_host.cc", link=("-lpthread",),
                                      name="policy-host")
        if host is None:
            report.all_failed(tests, "needs policy.cc to compile")
            tests["builds"].failed(compiled)
            return list(tests.values())
        tests["builds"].passed("compiled" + (f", with warnings:\n{compiled}" if compiled else ""))
        runner = plugin.Remote(reference, host, work, root / "engine", limits["run"], POLICY)
        say(f"grading {student}: edge cases, hidden workloads")
        _grade_valid(tests["valid"], runner)
        rows = _grade_deterministic(tests["deterministic"], runner, secret)
        baselines = [{row["policy"]: row for row in engine.run(reference, policy="static:tlfu", cpu_timing="off",
                                                                **workload)} for workload in secret["workloads"]]
        normalized = _grade_against(tests, runner, secret, baselines, rows, config)
    board = [{"name": "latency / Static (mean over your workloads)", "value": round(statistics.mean(normalized), 4),
              "order": "asc"}] if normalized else []
    return report.Graded(list(tests.values()), board)


def _grade_valid(test, runner) -> None:
    cases = edge_cases()
    for what, options in cases:
        row, error = _run(runner, options)
        if row is None:
            test.failed(f"{what}:\n{error}")
            return
    test.passed(f"{len(cases)} edge cases ran, every move and placement one the tiers could take")


def _grade_deterministic(test, runner, secret: dict) -> dict:
    """Two runs of the first hidden workload; returns the first run's row by workload index."""
    first, error = _run(runner, secret["workloads"][0])
    second, error = _run(runner, secret["workloads"][0]) if first is not None else (None, error)
    if first is None or second is None:
        test.failed(f"a hidden workload did not run: {error}")
        return {}
    if first != second:
        test.failed("two runs of the same workload gave different results (does the policy depend on addresses, "
                    "time or an unseeded random number?)")
    else:
        test.passed("two runs of a hidden workload gave the same latency and migrations")
    return {0: first}


def _grade_against(tests: dict, runner, secret: dict, baselines: list, rows: dict, config: dict) -> list:
    """Per hidden workload: latency against Static's and a share of tLFU's, and migrations within a
    multiple of tLFU's where the latency beats tLFU's. Returns the latencies normalized to Static."""
    spec = config["tests"]
    shares = {"static": 0, "tlfu": 0, "migrations": 0}
    notes = {name: [] for name in shares}
    normalized = []
    for number, (workload, base) in enumerate(zip(secret["workloads"], baselines, strict=True), 1):
        # what the policy is told anyway (pages, tiers), never the workload's shape or seed
        what = f"workload {number} ({workload['pages']} pages, tiers {workload['capacity_pct']} %)"
        row, error = (rows[0], "") if number == 1 and 0 in rows else _run(runner, workload)
        if row is None:
            for name in shares:
                notes[name].append(f"{what}: {error}")
            break  # a crash or a hang would repeat on every workload: not worth their time
        latency, migrations = float(row["mean_latency_us"]), int(row["migrations_total"])
        static, tlfu = base["static"]["mean_latency_us"], base["tlfu"]["mean_latency_us"]
        tlfu_moves = base["tlfu"]["migrations_total"]
        normalized.append(latency / static)
        line = (f"{what}: latency {latency:.0f} us = {latency / static:.2f} x Static's, {latency / tlfu:.2f} x tLFU's; "
                f"{migrations} migrations = {migrations / max(tlfu_moves, 1):.1f} x tLFU's")
        verdicts = {"static": latency <= static,
                    "tlfu": latency <= spec["tlfu"]["share"] * tlfu,
                    "migrations": latency <= tlfu and migrations <= spec["migrations"]["times"] * tlfu_moves}
        for name, ok in verdicts.items():
            shares[name] += ok
            notes[name].append(("" if ok else "not met: ") + line)
    total = len(secret["workloads"])
    for name in shares:
        tests[name].partly(shares[name] / total,
                           f"{shares[name]} of {total} hidden workloads\n" + "\n".join(notes[name]))
    return normalized
