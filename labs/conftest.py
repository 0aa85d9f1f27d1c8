"""What the labs' tests share: grading a submission as `make grade` does, with a test's key and
overrides of lab.yaml (both in the test's folder, as `key` and `small.yaml`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from labkit import grade as labkit_grade


@pytest.fixture
def grade_lab():
    def grade(lab: int, submission: Path, student: str, folder: Path) -> dict:
        results = folder / f"{student}.json"
        code = labkit_grade.main(["--lab", str(lab), "--submission", str(submission), "--student", student,
                                  "--key", str(folder / "key"), "--config", str(folder / "small.yaml"),
                                  "--results", str(results)])
        assert code == 0
        return json.loads(results.read_text())

    return grade
