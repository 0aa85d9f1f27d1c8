"""What the labs' tests share: grading a submission as `make grade` does, with a test's key and
overrides of lab.yaml (both in the test's folder, as `key` and `small.yaml`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


@pytest.fixture
def writes_outside():
    """C++ lines for a plug-in submission that, before main(), opens `path` (outside its folder) for
    appending and throws with the error when it cannot: under the sandbox, every run aborts."""
    def prelude(path: Path) -> str:
        return f"""#include <vector>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
namespace {{
struct Log {{
  Log() {{
    std::ofstream log("{path}", std::ios::app);
    if (!log) throw std::runtime_error(std::string("cannot open {path}: ") + std::strerror(errno));
  }}
}};
const Log log_at_start;  // before main(): every run
}}
"""

    return prelude


@pytest.fixture
def cpu_hogs():
    """Two busy processes per core, at the default priority, while the test runs: the load under which
    a reference solution must still get full marks (labs/README.md, "Fair under load")."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * os.cpu_count())]
    try:
        yield len(hogs)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
