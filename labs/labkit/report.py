"""Gradescope's autograder results (results.json): one entry per test with its name, score,
max_score and output, and the total; printed as readable feedback too."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class TestResult:
    name: str
    max_score: float
    score: float = 0.0
    output: str = ""

    def passed(self, output: str) -> "TestResult":
        self.score, self.output = self.max_score, output
        return self

    def failed(self, output: str) -> "TestResult":
        self.score, self.output = 0.0, output
        return self

    def partly(self, share: float, output: str) -> "TestResult":
        """`share` (0 to 1) of the points: a test made of several cases, some of them passed."""
        self.score, self.output = self.max_score * min(max(share, 0.0), 1.0), output
        return self


@dataclass
class Graded:
    """A grader's answer when it also ranks the submission on Gradescope's leaderboard: entries
    {"name", "value", "order": "asc" | "desc"}."""
    tests: list[TestResult]
    leaderboard: list[dict]


def tests_of(config: dict) -> dict[str, TestResult]:
    """lab.yaml's tests, in its order, none passed yet."""
    return {name: TestResult(spec["what"], spec["points"]) for name, spec in config["tests"].items()}


def missing(tests: dict[str, TestResult], submission: Path, name: str) -> list[TestResult] | None:
    """Every test failed when the submission lacks the file the lab grades (a regular file, not a
    link), else None."""
    path = Path(submission) / name
    if path.is_file() and not path.is_symlink():
        return None
    if path.is_symlink():
        return all_failed(tests, f"{name} in the submission is a link: submit the file itself")
    return all_failed(tests, f"{name} is not in the submission ({submission})")


def all_failed(tests: dict[str, TestResult], why: str) -> list[TestResult]:
    """Every test failed for one reason (no file to grade, nothing compiled)."""
    return [test.failed(why) for test in tests.values()]


def results(tests: list[TestResult], summary: str, leaderboard: list[dict] | None = None) -> dict:
    total = sum(test.score for test in tests)
    result = {"score": round(total, 2), "output": summary, "visibility": "visible", "stdout_visibility": "hidden",
              "tests": [{**asdict(test), "score": round(test.score, 2)} for test in tests]}
    if leaderboard:
        result["leaderboard"] = leaderboard
    return result


def write(result: dict, path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    temporary.replace(path)


def feedback(result: dict) -> str:
    lines = [result["output"], ""]
    for test in result["tests"]:
        lines.append(f"[{test['score']:g}/{test['max_score']:g}] {test['name']}")
        lines += [f"    {line}" for line in test["output"].splitlines()]
    maximum = sum(test["max_score"] for test in result["tests"])
    lines.append(f"\nTotal: {result['score']:g}/{maximum:g}")
    for entry in result.get("leaderboard", []):
        lines.append(f"Leaderboard: {entry['name']}: {entry['value']:g} "
                     f"({'lower' if entry['order'] == 'asc' else 'higher'} is better)")
    return "\n".join(lines)
