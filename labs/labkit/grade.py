"""Grade one submission of one lab, or a folder of them:

    python -m labkit.grade --lab 1 --submission DIR --student ID [--key FILE] [--config FILE] [--results FILE]
    python -m labkit.grade --lab 1 --all DIR [--csv FILE] [--key FILE] [--config FILE]

prints feedback per test and writes Gradescope's results.json (default
labs/build/grades/lab-<n>/<student>/results.json); with --all, one results.json per student and
a CSV of every student's scores (default labs/build/grades/lab-<n>.csv). Exit 0 when the submission was graded (whatever
its score), 2 when it could not be (no key, no such lab, a machine that cannot emulate the device)."""

from __future__ import annotations

import argparse
import csv
import importlib.util
import re
import sys
from pathlib import Path

from . import report, sandbox, seeds

LABS_DIR = Path(__file__).resolve().parents[1]


class CannotGrade(ValueError):
    pass


def lab_dir(number: int) -> Path:
    found = sorted(LABS_DIR.glob(f"{number}-*/grader.py"))
    if not found:
        known = ", ".join(sorted(p.parent.name for p in LABS_DIR.glob("*/grader.py"))) or "none"
        raise CannotGrade(f"no lab {number} (labs with a grader: {known})")
    return found[0].parent


def load_grader(directory: Path):
    spec = importlib.util.spec_from_file_location(f"lab_grader_{directory.name.split('-')[0]}", directory / "grader.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STUDENT_ID = re.compile(r"[\w.@+-]+")


def check_student(student: str) -> str:
    student = student.strip()
    if not STUDENT_ID.fullmatch(student) or student in (".", ".."):
        raise CannotGrade(f"student id {student!r}: use letters, digits and . _ @ + - only (it names a folder)")
    return student


def grade_one(grader, lab: int, submission: Path, student: str, key: bytes, config: dict, results: Path) -> dict:
    """Grade one submission, write its results.json and return it."""
    if not submission.is_dir():
        raise CannotGrade(f"the submission {submission} is not a folder")
    graded = grader.grade(submission.resolve(), student, key, config, LABS_DIR / "build" / "work",
                          say=lambda message: print(message, file=sys.stderr, flush=True))
    if not isinstance(graded, report.Graded):
        graded = report.Graded(graded, [])
    summary = f"Lab {lab} ({config['title']}) for {student}"
    if sandbox.landlock_abi() < 1:
        summary += (". Note: this machine's kernel has no Landlock, so the submission's reads and writes "
                    "outside its folder were not confined")
    result = report.results(graded.tests, summary, graded.leaderboard)
    report.write(result, results)
    return result


def grade_all(grader, lab: int, folder: Path, key: bytes, config: dict, table: Path) -> None:
    """Every subfolder of `folder` is one student's submission, named by their id: each gets its
    results.json beside the others', and one CSV row (the total and each test's score)."""
    students = sorted(p for p in Path(folder).iterdir() if p.is_dir())
    if not students:
        raise CannotGrade(f"{folder} has no submission folders (one per student, named by the student's id)")
    rows = []
    for position, submission in enumerate(students, 1):
        student = check_student(submission.name)
        print(f"[{position}/{len(students)}] {student}", file=sys.stderr, flush=True)
        result = grade_one(grader, lab, submission, student, key, config,
                           LABS_DIR / "build" / "grades" / f"lab-{lab}" / student / "results.json")
        board = {entry["name"]: entry["value"] for entry in result.get("leaderboard", [])}
        rows.append(([student, *(f"{score:g}" for score in [result["score"], *(t["score"] for t in result["tests"])])],
                     board))
    ranked = sorted({name for _, board in rows for name in board})  # leaderboard columns, when the lab has some
    table.parent.mkdir(parents=True, exist_ok=True)
    with open(table, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "score", *config["tests"], *ranked])
        writer.writerows([*cells, *(f"{board[name]:g}" if name in board else "" for name in ranked)]
                         for cells, board in rows)
    print(f"grades: {table} ({len(rows)} students)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.grade", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lab", type=int, required=True)
    parser.add_argument("--submission", type=Path, help="one student's folder (with --student)")
    parser.add_argument("--student")
    parser.add_argument("--all", type=Path, help="a folder of submissions, one subfolder per student id")
    parser.add_argument("--csv", type=Path, help="with --all: the grades table (default labs/build/grades/lab-<n>.csv)")
    parser.add_argument("--key", type=Path, help=f"the instructor's secret key file (else ${seeds.KEY_ENV})")
    parser.add_argument("--config", type=Path, help="overrides of the lab's lab.yaml (hidden ranges, points, limits)")
    parser.add_argument("--results", type=Path, help="where to write results.json")
    args = parser.parse_args(argv)
    if (args.all is None) == (args.submission is None or args.student is None):
        parser.error("give either --submission and --student, or --all")
    try:
        grader = load_grader(lab_dir(args.lab))
        key = seeds.load_key(args.key)
        config = grader.load_config(args.config)
        if args.all is not None:
            grade_all(grader, args.lab, args.all, key, config,
                      args.csv or LABS_DIR / "build" / "grades" / f"lab-{args.lab}.csv")
            return 0
        student = check_student(args.student)
        target = args.results or LABS_DIR / "build" / "grades" / f"lab-{args.lab}" / student / "results.json"
        result = grade_one(grader, args.lab, args.submission, student, key, config, target)
    except (CannotGrade, seeds.SecretKeyError, ValueError, RuntimeError) as error:  # the grader's, not the submission's
        print(f"grade: {error}", file=sys.stderr)
        return 2
    print(report.feedback(result))
    print(f"\nresults.json: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
