"""The labs' shared grading kit: hidden parameters per student, Gradescope's results.json, and a
sandbox that no submission can hang, crash, exhaust or write outside of."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest
from labkit import report, sandbox, seeds

KEY = b"an instructor's secret, 32 bytes"
FAST = sandbox.Limits(wall_s=20, cpu_s=20, memory_bytes=1 << 30)


def test_the_same_student_gets_the_same_parameters_and_two_students_different_ones():
    spec = {"alpha": [1.0, 5.0], "k_r": [4, 64], "latency": {"choices": [2000, 3000, 4000]}}

    def device(student, key=KEY):
        rng = seeds.student_rng(key, "lab1", student)
        return {name: seeds.draw(rng, value) for name, value in spec.items()}

    assert device("alice") == device("alice") == device(" alice ")
    drawn = [device(f"student{n}") for n in range(200)]
    assert len({tuple(d.values()) for d in drawn}) > 190
    assert all(1.0 <= d["alpha"] <= 5.0 and 4 <= d["k_r"] <= 64 and d["latency"] in (2000, 3000, 4000) for d in drawn)
    assert {d["k_r"] for d in drawn} >= {4, 64} or len({d["k_r"] for d in drawn}) > 40  # the whole range is used
    assert device("alice") != device("alice", key=b"another instructor's secret key")
    assert seeds.student_rng(KEY, "lab1", "alice").random() != seeds.student_rng(KEY, "lab2", "alice").random()


def test_a_missing_or_short_key_is_refused_with_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv(seeds.KEY_ENV, raising=False)
    with pytest.raises(seeds.SecretKeyError, match="KEY=<file>"):
        seeds.load_key(None)
    (tmp_path / "key").write_text("short\n")
    with pytest.raises(seeds.SecretKeyError, match="shorter than 16 bytes"):
        seeds.load_key(tmp_path / "key")
    with pytest.raises(seeds.SecretKeyError, match="cannot read"):
        seeds.load_key(tmp_path / "absent")
    monkeypatch.setenv(seeds.KEY_ENV, KEY.decode())
    assert seeds.load_key(None) == KEY
    with pytest.raises(ValueError, match="must not be empty"):
        seeds.student_rng(KEY, "lab1", "  ")


def test_results_json_has_gradescope_fields_and_the_total(tmp_path):
    tests = [report.TestResult("k_r", 20).passed("k_r 17, true 17"), report.TestResult("plot", 10).failed("no plot"),
             report.TestResult("partial", 5, score=2.5, output="half")]
    result = report.results(tests, "lab 1 for alice")
    report.write(result, tmp_path / "out" / "results.json")
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert written["score"] == 22.5 and written["output"] == "lab 1 for alice"
    assert [set(t) for t in written["tests"]] == [{"name", "score", "max_score", "output"}] * 3
    assert "[20/20] k_r" in report.feedback(written) and "Total: 22.5/35" in report.feedback(written)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["results.json"]  # no temporary file left


GRADER = """
SUBMISSION_MODULE = "answer.py"
CHILD = {"run": lambda student, arguments: student.run(**arguments)}
"""


def call(tmp_path, body: str, limits=FAST, **arguments):
    submission = tmp_path / "submission"
    submission.mkdir(exist_ok=True)
    (submission / "answer.py").write_text(textwrap.dedent(body))
    (tmp_path / "grader.py").write_text(GRADER)
    return sandbox.call(tmp_path / "grader.py", "run", submission, arguments, work=tmp_path / "work", limits=limits)


def test_a_call_returns_what_the_submission_returns_and_what_it_printed(tmp_path):
    outcome = call(tmp_path, """
        def run(x):
            print("working on", x)
            return {"twice": 2 * x}
    """, x=21)
    assert outcome.ok and outcome.value == {"twice": 42} and "working on 21" in outcome.output


def test_an_exception_names_itself_and_the_submission_line(tmp_path):
    outcome = call(tmp_path, """
        def run():
            return 1 / 0
    """)
    assert not outcome.ok and outcome.error.startswith("ZeroDivisionError: division by zero")
    assert "answer.py" in outcome.error and "return 1 / 0" in outcome.error


def test_an_endless_loop_is_stopped_at_the_time_limit(tmp_path):
    outcome = call(tmp_path, """
        import time
        def run():
            while True:
                time.sleep(0.01)
    """, limits=sandbox.Limits(wall_s=1.5, cpu_s=20, memory_bytes=1 << 30))
    assert "stopped after 1.5 s (the time limit)" in outcome.error


def test_a_process_left_behind_does_not_outlive_the_call(tmp_path):
    marker = tmp_path / "work" / "still-alive"
    outcome = call(tmp_path, f"""
        import subprocess
        def run():
            subprocess.Popen(["sh", "-c", "sleep 3; touch {marker}"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # holds nothing of the call's open
            return "done"
    """)
    assert outcome.value == "done"
    time.sleep(3.5)
    assert not marker.exists()


def test_endless_output_fills_no_memory_and_ends_at_the_file_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "FILE_LIMIT", 8 << 20)
    outcome = call(tmp_path, """
        import sys
        def run():
            while True:
                sys.stdout.write("x" * 65536)
    """)
    assert outcome.error.startswith("OSError: [Errno 27] File too large")  # Python ignores SIGXFSZ: EFBIG
    assert outcome.output.endswith("x" * 100) and len(outcome.output) <= sandbox.OUTPUT_KEPT + 3


def test_cpu_time_beyond_the_limit_ends_the_call(tmp_path):
    outcome = call(tmp_path, """
        def run():
            while True:
                pass
    """, limits=sandbox.Limits(wall_s=30, cpu_s=1, memory_bytes=1 << 30))
    assert outcome.error == "the submission used more than 1 s of CPU time"


def test_runaway_memory_fails_the_call_not_the_grader(tmp_path):
    outcome = call(tmp_path, """
        def run():
            return len(bytearray(2 << 30))
    """, limits=sandbox.Limits(wall_s=20, cpu_s=20, memory_bytes=512 << 20))
    assert outcome.error.startswith("MemoryError")


def test_a_crash_and_an_exit_without_an_answer_are_reported(tmp_path):
    crash = call(tmp_path, """
        import ctypes
        def run():
            return ctypes.string_at(0)
    """)
    assert crash.error == "the submission crashed (segmentation fault)"
    exited = call(tmp_path, """
        import os
        def run():
            os._exit(3)
    """)
    assert "exited with status 3 without an answer" in exited.error


@pytest.mark.skipif(sandbox.landlock_abi() < 1, reason="the kernel has no Landlock: writes outside are not prevented")
def test_a_write_outside_the_submission_folder_is_refused(tmp_path):
    outside = tmp_path / "outside.txt"
    outcome = call(tmp_path, f"""
        from pathlib import Path
        def run():
            Path("inside.txt").write_text("fine")
            Path({str(outside)!r}).write_text("not allowed")
    """)
    assert outcome.error.startswith("PermissionError") and str(outside) in outcome.error
    assert not outside.exists() and (tmp_path / "work" / "inside.txt").read_text() == "fine"


@pytest.mark.skipif(sandbox.landlock_abi() < 1, reason="the kernel has no Landlock: reads are not confined")
def test_files_outside_what_the_submission_may_read_are_unreadable(tmp_path):
    (tmp_path / "secret.key").write_text("the instructor's key")
    outcome = call(tmp_path, f"""
        import os, pathlib
        def run():
            names = os.listdir(".")
            return names, pathlib.Path({str(tmp_path / "secret.key")!r}).read_text()
    """)
    assert outcome.error.startswith("PermissionError") and "secret.key" in outcome.error


def test_the_secret_key_is_not_in_the_submission_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(seeds.KEY_ENV, KEY.decode())
    outcome = call(tmp_path, """
        import os
        def run():
            return sorted(os.environ)
    """)
    assert seeds.KEY_ENV not in outcome.value and "HOME" in outcome.value


def test_the_students_tarball_has_the_starter_and_grader_but_no_solution_test_or_key(tmp_path, monkeypatch):
    from labkit import dist

    tarball = dist.build(1, tmp_path / "lab-1.tar.gz")
    import tarfile
    with tarfile.open(tarball) as archive:
        names = archive.getnames()
        assert all(member.uid == 0 and member.mtime == 0 for member in archive.getmembers())
    inside = [name.split("/", 1)[1] for name in names]
    assert "labs/1-measure-ssd/starter/measure.py" in inside and "labs/labkit/grade.py" in inside
    assert "labs/1-measure-ssd/grader.py" in inside and "Makefile" in inside
    assert not [name for name in inside if "/solution/" in name or "/tests/" in name and name.startswith("labs/")]
    assert not [name for name in inside if name.endswith(".key")]
    # the artifact's own CI stays out; the lab's Classroom autograding goes in
    assert [name for name in inside if name.startswith(".github/")] == [".github/workflows/classroom.yml"]
    assert dist.build(1, tmp_path / "again.tar.gz").read_bytes() == tarball.read_bytes()  # the same bytes
    # a key kept in a packed file is found, and the tarball refused
    notes = dist.REPO_ROOT / "labs" / "README.md"
    before = notes.read_bytes()
    notes.write_bytes(before + b"\nnotes: " + KEY)
    try:
        with pytest.raises(dist.CannotGrade, match="labs/README.md holds the instructor's key"):
            dist.build(1, tmp_path / "refused.tar.gz", key=KEY)
    finally:
        notes.write_bytes(before)
    # a file git does not track (collected submissions, say) stays out
    stray = dist.REPO_ROOT / "labs" / "submissions-left-by-a-test.txt"
    stray.write_text("alice's answers")
    try:
        assert "labs/submissions-left-by-a-test.txt" not in dist.members()
        assert "labs/submissions-left-by-a-test.txt" in dist.untracked()
    finally:
        stray.unlink()


@pytest.mark.parametrize("path, kept", [
    ("labs/1-measure-ssd/solution/measure.py", False), ("labs/2-bufferpool/tests/test_lab2.py", False),
    ("labs/1-measure-ssd/starter/measure.py", True), ("labs/course.key", False), ("tests/test_labkit.py", True),
    ("systems/pio/pio/characterize.py", True), (".github/workflows/ci.yml", False),
])
def test_what_the_students_tarball_withholds(path, kept):
    from labkit import dist

    assert dist.withheld(path) is not kept


@pytest.mark.parametrize("lab", [1, 2, 3, 4])
def test_each_labs_classroom_workflow_reports_every_test_and_passes_actionlint(tmp_path, lab):
    import shutil
    import subprocess

    from labkit import classroom, grade

    text = classroom.workflow(lab)
    tests = grade.load_grader(grade.lab_dir(lab)).load_config()["tests"]
    for index, (name, spec) in enumerate(tests.items(), 1):
        assert f"test-name: {name}\n" in text and f"max-score: {spec['points']}\n" in text
        assert f"TEST-{index}_RESULTS: ${{{{ steps.test-{index}.outputs.result }}}}" in text
    assert "secrets.LAB_SECRET_KEY" in text and f"--lab {lab} --submission labs/" in text
    workflow = tmp_path / ".github" / "workflows" / "classroom.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(text)
    actionlint = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if actionlint is None:
        pytest.skip("actionlint is not installed (make setup installs it)")
    done = subprocess.run([actionlint, str(workflow)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_classroom_check_passes_only_a_test_with_full_marks(tmp_path):
    import json
    import subprocess

    from labkit import classroom

    (tmp_path / "results.json").write_text(json.dumps({"tests": [
        {"name": "a", "score": 10, "max_score": 10, "output": "all right"},
        {"name": "b", "score": 5, "max_score": 10, "output": "half"}]}))
    for index, status in ((0, 0), (1, 1)):
        done = subprocess.run(classroom.CHECK.format(index=index), shell=True, cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == status, done.stderr
