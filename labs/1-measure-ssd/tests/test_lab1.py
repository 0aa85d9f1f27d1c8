"""Lab 1's grader: the reference solution gets full marks and the starter the baseline on a hidden
device; a submission that answers wrong, loops, writes outside its folder or crashes loses exactly
those tests' points, each with its message; and no submission can read its device's parameters."""

from __future__ import annotations

import csv
import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml
from labkit import grade as labkit_grade
from labkit import seeds

LAB = labkit_grade.lab_dir(1)
grader = labkit_grade.load_grader(LAB)
KEY = b"a practice key for lab 1's tests"


@pytest.fixture
def small(tmp_path):
    """lab.yaml with small devices (k 4-8, 2 ms reads) and short limits: a grading in under a minute."""
    override = {"hidden": {"read_latency_us": {"choices": [2000]}, "alpha": [1.5, 3.0], "k_r": [4, 8], "k_w": [4, 8]},
                "max_threads": 32, "writeback": {"read_fraction": 0.5, "pages": 1024, "duration_s": 1.0, "repeats": 3},
                "limits": {"sweep": {"wall_s": 300, "cpu_s": 300, "memory_mb": 4096},
                           "other": {"wall_s": 8, "cpu_s": 8, "memory_mb": 2048}}}
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(override))
    (tmp_path / "key").write_bytes(KEY)
    return tmp_path


def test_each_student_gets_their_own_device_and_always_the_same_one():
    config = grader.load_config()
    devices = [grader.hidden_device(KEY, f"s{n}", config) for n in range(100)]
    assert grader.hidden_device(KEY, "s1", config) == devices[1]
    assert len({tuple(d.values()) for d in devices}) == 100
    for device in devices:
        assert device["read_latency_us"] in (2000, 3000, 4000) and 1.0 <= device["alpha"] <= 5.0
        assert 4 <= device["k_r"] <= 64 and 4 <= device["k_w"] <= 64


def test_estimates_are_judged_within_the_tolerance_or_one_thread():
    assert grader._within(5, 4, 0.10, whole=True) and not grader._within(6, 4, 0.10, whole=True)
    assert grader._within(55, 50, 0.10, whole=True) and not grader._within(56, 50, 0.10, whole=True)
    assert grader._within(2.2, 2.0, 0.10, whole=False) and not grader._within(2.21, 2.0, 0.10, whole=False)


@pytest.mark.parametrize("k_w, batch", [(1, 2), (2, 2), (3, 2), (4, 3), (20, 18), (10_000, 256)])
def test_the_prediction_is_run_at_a_batch_of_at_least_two(k_w, batch):
    # A batch of one write has a speedup of 1 on any device: a constant would predict it.
    from labkit import report, sandbox

    config = grader.load_config()
    ran, asked = {}, {}

    class WritebackApp:
        @staticmethod
        def sweep(io_dir, batches, **options):
            ran["batches"] = batches
            return [{"speedup": 1.0}, {"speedup": 2.0}]

    def call(entry, arguments, limits):
        asked.update(arguments)
        return sandbox.Outcome(value=1.0)

    class Mount:
        backing, model = Path("/nonexistent"), None

    test = report.tests_of(config)["prediction"]
    grader._grade_prediction(test, {"alpha": 2.0, "k_w": k_w}, config, call, Path("/nonexistent"), Mount,
                             WritebackApp)
    assert asked["batch"] == batch and ran["batches"] == sorted({1, batch})
    assert test.score == 0 and "measured 2.00 with batches of" in test.output  # a constant 1.0 fails


@pytest.mark.parametrize("value, message", [
    (None, "must return a dict"), ({"read": []}, "must return a dict"),
    ({"read": [], "write": [{}]}, "non-empty list"),
    ({"read": [{"threads": 1}], "write": [{"threads": 1}]}, "needs the numbers"),
    ({"read": [{"threads": 1, "iops": float("nan"), "bandwidth_bytes_s": 1, "lat_mean_us": 1}], "write": []},
     "needs the numbers"),
])
def test_a_malformed_sweep_result_says_what_is_wrong(value, message):
    with pytest.raises(ValueError, match=message):
        grader._curves(value)


def test_measure_is_the_graders_and_a_sweep_may_return_only_what_it_gave(tmp_path):
    measurements = grader.Measurements(tmp_path, tmp_path / "fio", 300, 100, 1.0, {"max_threads": 8, "max_points": 2})
    for op, threads, message in (("trim", 1, "op must be 'read' or 'write'"), ("read", 0, "from 1 to 8"),
                                 ("read", 9, "from 1 to 8"), ("read", 2.0, "whole number"), ("read", True, "whole")):
        with pytest.raises(ValueError, match=message):
            measurements.measure(op, threads)
    given = {"threads": 2, "iops": 1000.0, "bandwidth_bytes_s": 4.096e6, "lat_mean_us": 2000.0}
    measurements.points = [{"op": "read", **given}, {"op": "write", **given}]
    with pytest.raises(RuntimeError, match="more than 2 times"):
        measurements.measure("read", 1)
    assert grader._curves({"read": [given], "write": [given]}, measurements)["read"] == [given]
    for forged in ({**given, "iops": 1001.0}, {**given, "threads": 3}):
        with pytest.raises(ValueError, match="a point measure\\(\\) did not give"):
            grader._curves({"read": [forged], "write": [given]}, measurements)


def scores(result: dict) -> dict:
    return {test["name"].split()[0]: (test["score"], test["output"]) for test in result["tests"]}


def submission_from(small: Path, name: str, body: str) -> Path:
    folder = small / name
    folder.mkdir()
    shutil.copy(LAB / "solution" / "measure.py", folder / "solution_part.py")
    (folder / "measure.py").write_text(textwrap.dedent(body))
    return folder





@pytest.mark.e2e
@pytest.mark.wall_clock  # the reference finds k and alpha on an emulated SSD
@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="/dev/fuse is absent: the lab's device is emussd")
def test_the_solution_gets_full_marks_under_load_and_the_starter_the_baseline(small, grade_lab, cpu_hogs):
    solution = grade_lab(1, LAB / "solution", "alice", small)
    assert solution["score"] == 100, json.dumps(solution, indent=1)
    starter = grade_lab(1, LAB / "starter", "bob", small)
    assert starter["score"] == 10 and scores(starter)["sweep()"][0] == 10, json.dumps(starter, indent=1)
    assert "NotImplementedError" in scores(starter)["plot()"][1]


@pytest.mark.e2e
@pytest.mark.wall_clock
@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="/dev/fuse is absent: the lab's device is emussd")
def test_bad_code_loses_exactly_its_tests_points_and_cannot_see_the_device(small, grade_lab):
    bad = submission_from(small, "bad", f"""
        import glob, os, time
        from solution_part import sweep as solution_sweep, estimate as solution_estimate, plot as solution_plot

        def snoop():
            found = []
            for path in glob.glob("/proc/[0-9]*/cmdline") + glob.glob("/proc/[0-9]*/environ"):
                try:
                    text = open(path, "rb").read().decode(errors="replace")
                except OSError:
                    continue
                if "--k-r" in text or "--alpha" in text:
                    found.append(path)
            for line in open("/proc/mounts"):
                if "fuse" in line:
                    try:
                        found.append(open(line.split()[1] + "/.emussd_stats").read()[:40])
                    except OSError:
                        pass
            try:
                import pio.characterize  # the artifact's own answer to the lab
                found.append("pio.characterize")
            except (ImportError, OSError):  # unreadable in the sandbox
                pass
            for secret in ({str(small / "key")!r}, {str(LAB / "lab.yaml")!r}):
                try:
                    found.append(open(secret).read()[:40])
                except OSError:
                    pass
            return found

        def sweep(measure, max_threads):
            leaked = snoop()
            if leaked:
                raise RuntimeError(f"leaked: {{leaked}}")
            return solution_sweep(measure, max_threads)

        def estimate(curves):
            found = solution_estimate(curves)
            return {{**found, "k_r": 2 * found["k_r"] + 2}}   # a wrong answer

        def predict_speedup(read_fraction, alpha, k_w, batch):
            while True:                                       # an endless loop
                time.sleep(0.1)

        def plot(curves, folder):
            open({str(small / "outside.svg")!r}, "w").write("<svg/>")   # outside its folder
    """)
    result = scores(grade_lab(1, bad, "carol", small))
    assert result["sweep()"][0] == 10, result["sweep()"]
    assert result["k_r"][0] == 0 and "not within 10%" in result["k_r"][1]
    assert result["k_w"][0] == 20 and result["alpha"][0] == 20, result
    assert result["the"][0] == 0 and "time limit" in result["the"][1]  # the prediction
    assert result["plot()"][0] == 0 and "PermissionError" in result["plot()"][1]
    assert not (small / "outside.svg").exists()


@pytest.mark.e2e
@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="/dev/fuse is absent: the lab's device is emussd")
def test_a_crash_or_a_missing_file_costs_every_test_with_its_message(small, grade_lab):
    crash = submission_from(small, "crash", """
        import ctypes
        def sweep(measure, max_threads):
            return ctypes.string_at(0)
    """)
    result = grade_lab(1, crash, "dave", small)
    assert result["score"] == 0 and "crashed (segmentation fault)" in result["tests"][0]["output"]
    empty = small / "empty"
    empty.mkdir()
    result = grade_lab(1, empty, "erin", small)
    assert result["score"] == 0 and all("measure.py is not in the submission" in t["output"] for t in result["tests"])


@pytest.mark.e2e
@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="/dev/fuse is absent: the lab's device is emussd")
def test_a_folder_of_submissions_is_graded_into_one_table(small):
    folder = small / "submissions"
    for student in ("u1", "u2"):
        shutil.copytree(LAB / "starter", folder / student)
    table = small / "grades.csv"
    code = labkit_grade.main(["--lab", "1", "--all", str(folder), "--csv", str(table), "--key", str(small / "key"),
                              "--config", str(small / "small.yaml")])
    assert code == 0
    lines = table.read_text().splitlines()
    assert lines[0] == "student,score,sweep,k_r,k_w,alpha,prediction,plot,note"
    assert lines[1:] == ["u1,10,10,0,0,0,0,0,", "u2,10,10,0,0,0,0,0,"]
    assert json.loads((labkit_grade.LABS_DIR / "build/grades/lab-1/u2/results.json").read_text())["score"] == 10


# ----------------------------------------------------------------------------- the red team
# Lab 1 attacked as a student who read the grader would. The measurements are the grader's (fio
# run by the grader on the device, each point kept): a sweep that makes points up, or pre-writes its
# plot, or reaches outside its sandbox (the grader's process, its key in the environment, sockets,
# processes) gets exactly what its work earns, and a class is graded whatever one submission does.


STARTER = (LAB / "starter" / "measure.py").read_text()
needs_fuse = pytest.mark.skipif(not Path("/dev/fuse").exists(),
                                reason="/dev/fuse is absent: the lab's device is emussd")

ESCAPES = """
import glob, os, signal, socket, subprocess
from pathlib import Path

def escape():
    '''Everything a sweep might try against the grader: what succeeded (nothing, when the sandbox holds).'''
    managed = []
    for attempt, what in ((lambda: os.kill(os.getppid(), signal.SIGKILL), "killed the grader"),
                          (lambda: os.killpg(os.getpgid(os.getppid()), signal.SIGKILL), "killed the grader's group"),
                          (lambda: os.kill(-1, signal.SIGKILL), "killed every process"),
                          (lambda: socket.socket(socket.AF_UNIX).connect("/run/docker.sock"), "reached Docker"),
                          (lambda: socket.create_connection(("127.0.0.1", 22), timeout=1), "opened TCP"),
                          (lambda: subprocess.Popen(["sleep", "600"], start_new_session=True), "left a daemon"),
                          (lambda: os.fork(), "forked")):
        try:
            attempt()
            managed.append(what)
        except (OSError, ValueError):
            pass
    for path in glob.glob("/proc/[0-9]*/environ"):
        try:
            if b"LAB_SECRET_KEY" in open(path, "rb").read():
                managed.append("read the key from " + path)
        except OSError:
            pass
    Path("plot.svg").write_text("<svg>" + "x" * 400 + "</svg>")  # in the sweep's folder, not the plot's
    return managed
"""


def submission(small, name: str, body: str):
    folder = small / name
    folder.mkdir()
    (folder / "measure.py").write_text(textwrap.dedent(body))
    return folder


@pytest.mark.e2e
@needs_fuse
def test_a_class_with_an_attacker_is_graded_whole_and_the_attacker_gets_the_starters_score(small, monkeypatch):
    monkeypatch.setenv(seeds.KEY_ENV, (small / "key").read_text())
    folder = small / "class"
    folder.mkdir()
    submission(folder, "mallory", ESCAPES + STARTER.replace(
        'return {"read": [measure("read", 1)], "write": [measure("write", 1)]}',
        'leaks = escape()\n    if leaks:\n        raise RuntimeError(f"escaped: {leaks}")\n'
        '    return {"read": [measure("read", 1)], "write": [measure("write", 1)]}'))
    submission(folder, "zoe", STARTER)
    table = small / "grades.csv"
    assert labkit_grade.main(["--lab", "1", "--all", str(folder), "--csv", str(table),
                              "--config", str(small / "small.yaml")]) == 0
    rows = {row["student"]: row for row in csv.DictReader(table.open())}
    assert rows["mallory"]["score"] == "10" and rows["zoe"]["score"] == "10", rows  # the starter's, each
    result = json.loads((labkit_grade.LABS_DIR / "build/grades/lab-1/mallory/results.json").read_text())
    assert "NotImplementedError" in result["tests"][-1]["output"]  # the plot the sweep left does not count


@pytest.mark.e2e
@needs_fuse
def test_a_sweep_that_makes_points_up_is_refused(small, grade_lab):
    made_up = submission(small, "made-up", STARTER.replace(
        'return {"read": [measure("read", 1)], "write": [measure("write", 1)]}',
        'real = measure("read", 1)\n'
        '    fake = [{"threads": t, "iops": 1000.0 * min(t, 8), "bandwidth_bytes_s": 4096000.0 * min(t, 8),\n'
        '             "lat_mean_us": 1000.0 * max(1, t / 8)} for t in (1, 2, 4, 8, 16)]\n'
        '    return {"read": [real] + fake, "write": fake}'))
    result = grade_lab(1, made_up, "mallory", small)
    assert result["score"] == 0 and "a point measure() did not give" in result["tests"][0]["output"], result
