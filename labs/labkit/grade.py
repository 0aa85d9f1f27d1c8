"""Grade one submission of one lab, or a folder of them:

    python -m labkit.grade --lab 1 --submission DIR --student ID [--key FILE] [--config FILE] [--results FILE]
    python -m labkit.grade --lab 1 --all DIR [--csv FILE] [--key FILE] [--config FILE] [--weak-sandbox]

prints feedback per test and writes Gradescope's results.json (default
labs/build/grades/lab-<n>/<student>/results.json); with --all, one results.json per student and
a CSV of every student's scores (default labs/build/grades/lab-<n>.csv). Exit 0 when the
submission was graded (whatever its score), 2 when it could not be (no key, no such lab, a
machine that cannot emulate the device).

A class (--all) is graded one student at a time, each in a process of its own: whatever one
submission does, the others are graded, the one that could not be is recorded as such with the
reason, and the CSV is rewritten after each student (an interrupted grading leaves the table of
those done). It refuses a machine whose sandbox does not hold in full (labkit.sandbox.strength)
unless --weak-sandbox says to go on."""

from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
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
    full, made_of = sandbox.strength()
    summary = f"Lab {lab} ({config['title']}) for {student}. Sandbox: {made_of}"
    if not full:
        summary += " (the submission's reads, writes or system calls were not all confined)"
    result = report.results(graded.tests, summary, graded.leaderboard)
    report.write(result, results)
    return result


def printable(name: str) -> str:
    """A folder's name as it can be shown (undecodable bytes and control characters escaped)."""
    return os.fsencode(name).decode("utf-8", "backslashreplace").encode("unicode_escape").decode("ascii")


def grade_all(lab: int, folder: Path, key_file: Path | None, config: dict, config_file: Path | None,
              table: Path) -> None:
    """Every subfolder of `folder` is one student's submission, named by their id: each is graded
    by a grader process of its own (labkit.grade --submission), into its results.json beside the
    others', and one CSV row (the total, each test's score, the leaderboard's values, and a note
    when it could not be graded)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as error:
        raise CannotGrade(f"cannot list the submissions in {folder}: {error.strerror}") from error
    if not entries:
        raise CannotGrade(f"{folder} has no submission folders (one per student, named by the student's id)")
    limit = config.get("grading_limit_s", 1800)
    rows = []
    for position, entry in enumerate(entries, 1):
        name = printable(entry.name)
        print(f"[{position}/{len(entries)}] {name}", file=sys.stderr, flush=True)
        try:
            student = check_student(entry.name)
            if not entry.is_dir(follow_symlinks=False):
                raise CannotGrade(f"{name} is not a folder (one folder per student, not a file or a link)")
        except CannotGrade as error:
            rows.append({"student": name, "note": f"not graded: {error}"})
        else:
            rows.append(_grade_in_a_process(lab, Path(entry.path), student, key_file, config_file, limit))
        _write_table(table, config, rows)
    print(f"grades: {table} ({sum(1 for row in rows if 'score' in row)} of {len(rows)} graded)")


def _grade_in_a_process(lab: int, submission: Path, student: str, key_file: Path | None, config_file: Path | None,
                        limit: float) -> dict:
    """One student graded by a grader process of its own (its progress shown, its last words kept);
    whatever it left (a mount, a workspace, a process) removed after it."""
    results = LABS_DIR / "build" / "grades" / f"lab-{lab}" / student / "results.json"
    results.unlink(missing_ok=True)
    command = [sys.executable, "-m", "labkit.grade", "--lab", str(lab), "--submission", str(submission),
               f"--student={student}", "--results", str(results), *(["--key", str(key_file)] if key_file else []),
               *(["--config", str(config_file)] if config_file else [])]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    last: list[str] = []

    def relay() -> None:
        for raw in child.stderr:
            line = raw.decode(errors="replace").rstrip()
            print(f"    {line}", file=sys.stderr, flush=True)
            last[:] = [*last, line][-3:]

    reader = threading.Thread(target=relay, daemon=True)
    reader.start()
    try:
        status = f"exit status {child.wait(timeout=limit)}"
    except subprocess.TimeoutExpired:
        status = f"stopped after {limit:g} s (the lab's grading_limit_s)"
    _clean_after(child, lab)
    reader.join(timeout=5)
    try:
        result = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"student": student, "note": f"not graded: the grader's process ended ({status})"
                + (f": {' / '.join(last)}" if last else "")}
    return {"student": student, "score": result["score"], "tests": [test["score"] for test in result["tests"]],
            "board": {entry["name"]: entry["value"] for entry in result.get("leaderboard", [])}}


def _clean_after(child: subprocess.Popen, lab: int) -> None:
    """Everything a student's grader process left: its processes (its session), the emulated
    devices it mounted and its workspaces (config.workspace names them by its process)."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    child.wait()
    for workspace in (LABS_DIR / "build" / "work").glob(f"lab{lab}-{child.pid}-*"):
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
                  if line.split()[1].startswith(f"{workspace}/")]
        for mount in sorted(mounts, reverse=True):
            subprocess.run(["fusermount3", "-u", "-z", mount], capture_output=True, check=False)
        sandbox.remove_tree(workspace)


def _write_table(table: Path, config: dict, rows: list[dict]) -> None:
    ranked = sorted({name for row in rows for name in row.get("board", {})})  # leaderboard columns, when any
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["student", "score", *config["tests"], *ranked, "note"])
    for row in rows:
        if "score" in row:
            writer.writerow([row["student"], *(f"{score:g}" for score in [row["score"], *row["tests"]]),
                             *(f"{row['board'][name]:g}" if name in row["board"] else "" for name in ranked), ""])
        else:
            writer.writerow([row["student"], "", *([""] * (len(config["tests"]) + len(ranked))), row["note"]])
    table.parent.mkdir(parents=True, exist_ok=True)
    temporary = table.with_name(f".{table.name}.{os.getpid()}")
    temporary.write_text(buffer.getvalue(), encoding="utf-8")
    temporary.replace(table)


@contextmanager
def _key_file(given: Path | None, key: bytes):
    """The key as a file the students' grader processes read (`given`, or a private temporary one
    when the key came from the environment: it is passed by file, never in an environment)."""
    if given is not None:
        yield given
        return
    folder = Path(tempfile.mkdtemp(prefix="lab-key-"))
    try:
        path = folder / "key"
        path.write_bytes(key)
        os.chmod(path, 0o600)
        yield path
    finally:
        sandbox.remove_tree(folder)


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
    parser.add_argument("--weak-sandbox", action="store_true",
                        help="with --all: grade even where the sandbox does not hold in full (labkit.sandbox)")
    args = parser.parse_args(argv)
    if (args.all is None) == (args.submission is None or args.student is None):
        parser.error("give either --submission and --student, or --all")
    try:
        grader = load_grader(lab_dir(args.lab))
        key = seeds.load_key(args.key)
        config = grader.load_config(args.config)
        if args.all is not None:
            full, made_of = sandbox.strength()
            if not full and not args.weak_sandbox:
                raise CannotGrade(f"this machine's sandbox does not hold in full ({made_of}): a submission could "
                                  "reach outside it. Grade on Linux 5.13 or later on x86_64 (or in the lab image), "
                                  "or pass --weak-sandbox to go on anyway")
            with _key_file(args.key, key) as key_file:
                grade_all(args.lab, args.all, key_file, config, args.config,
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
