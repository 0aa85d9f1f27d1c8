"""Helpers of the labs' own tests (labs/*/tests): a grading's scores by test name, and a deliberately
bad submission made from the reference solution by one change."""

from __future__ import annotations

from pathlib import Path


def scores(grader, result: dict) -> dict[str, tuple[float, str]]:
    """{test name in lab.yaml: (score, output)} of a results.json."""
    names = list(grader.load_config()["tests"])
    return {name: (test["score"], test["output"]) for name, test in zip(names, result["tests"], strict=True)}


def solution_with(lab_dir: Path, file: str, folder: Path, old: str, new: str) -> Path:
    """`folder` holding the lab's reference `file` with `old` replaced by `new` (which must be there)."""
    solution = (Path(lab_dir) / "solution" / file).read_text()
    assert old in solution, f"{old!r} is not in the solution"
    folder.mkdir()
    (folder / file).write_text(solution.replace(old, new, 1))
    return folder
