"""Lab 2's grader: the reference solution gets full marks and the starter the baseline; a policy
that crashes, loops, answers wrong, writes outside its folder or does not compile loses exactly
those tests' points, each with its message; each student gets their own workloads and device."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
import yaml
from labkit import grade as labkit_grade
from labkit import testing

LAB = labkit_grade.lab_dir(2)
grader = labkit_grade.load_grader(LAB)
KEY = b"a practice key for lab 2's tests"
SOLUTION = (LAB / "solution" / "policy.cc").read_text()
needs_fuse = pytest.mark.skipif(not os.path.exists("/dev/fuse"),
                                reason="/dev/fuse is absent: the lab's device is emussd")


@pytest.fixture
def small(tmp_path):
    """lab.yaml with fewer, shorter workloads, a small device and short limits."""
    override = {"hidden": {**grader.load_config()["hidden"], "workloads": 2, "ops": 5000, "pool_pages": [16, 400],
                           "read_latency_us": {"choices": [2000]}, "alpha": [2.0, 3.0], "k_w": [4, 8]},
                "speedup": {"ops": 250, "pages": 2048, "pool_pages": 64},
                "limits": {"build": {"wall_s": 120, "cpu_s": 120, "memory_mb": 2048},
                           "run": {"wall_s": 4, "cpu_s": 60, "memory_mb": 1024}}}
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(override))
    (tmp_path / "key").write_bytes(KEY)
    return tmp_path


def scores(result: dict) -> dict:
    return testing.scores(grader, result)


def solution_with(small, name: str, old: str, new: str):
    """The reference solution with one change: a deliberately bad submission."""
    return testing.solution_with(LAB, "policy.cc", small / name, old, new)


def test_each_student_gets_their_own_workloads_and_device_and_always_the_same_ones():
    config = grader.load_config()
    drawn = [grader.hidden(KEY, f"s{n}", config) for n in range(50)]
    assert grader.hidden(KEY, "s1", config) == drawn[1]
    assert len({json.dumps(d, sort_keys=True) for d in drawn}) == 50
    for secret in drawn:
        assert 2 <= secret["n_w"] <= 32 and 4 <= secret["device"]["k_w"] <= 16
        for workload in secret["workloads"]:
            assert 16 <= workload["pool_pages"] <= 2000 and workload["pages"] >= 2 * workload["pool_pages"]


@pytest.mark.e2e
@pytest.mark.wall_clock  # the speedup is measured on an emulated SSD
@needs_fuse
def test_the_solution_gets_full_marks_under_load_and_the_starter_the_baseline(small, grade_lab, cpu_hogs):
    solution = grade_lab(2, LAB / "solution", "alice", small)
    assert solution["score"] == 100, json.dumps(solution, indent=1)
    speedup = scores(solution)["speedup"][1]
    measured, ideal = map(float, re.search(r"([\d.]+) measured .* ideal ([\d.]+)", speedup).groups())
    assert ideal > 1.5 and measured > 1.5
    starter = grade_lab(2, LAB / "starter", "bob", small)
    result = scores(starter)
    assert starter["score"] == 30, json.dumps(starter, indent=1)
    assert result["lru_wsr"][0] == 0 and "yours differ from the reference in" in result["lru_wsr"][1]
    assert "less than 80% of the ideal" in result["speedup"][1]


@pytest.mark.e2e
@pytest.mark.wall_clock
@needs_fuse
def test_a_wrong_answer_loses_the_comparisons_it_fails_and_keeps_the_speedup(small, grade_lab):
    # a hit leaves the page cold (a classic slip): evictions differ wherever a cold page is used again
    slip = solution_with(small, "slip", "  void on_hit(Frame f, uint64_t) override {\n    cold_[f] = false;\n",
                         "  void on_hit(Frame f, uint64_t) override {\n")
    result = scores(grade_lab(2, slip, "carol", small))
    assert [result[name][0] for name in ("builds", "valid", "deterministic", "speedup")] == [10, 15, 5, 15], result
    for name, points in (("lru_wsr", 30), ("ace_writeback", 25)):
        matched = int(re.match(r"(\d) of 2 hidden workloads", result[name][1]).group(1))
        assert matched < 2 and result[name][0] == points * matched / 2, result[name]
        assert "yours differ from the reference in" in result[name][1]


@pytest.mark.e2e
def test_a_crash_an_endless_loop_or_a_write_outside_costs_every_run(small, grade_lab, writes_outside):
    crash = solution_with(small, "crash", "Frame first_unpinned = kNoFrame;",
                          "Frame first_unpinned = kNoFrame; *(volatile int*)nullptr = 1;")
    loop = solution_with(small, "loop", "Frame first_unpinned = kNoFrame;",
                         "Frame first_unpinned = kNoFrame; for (volatile int i = 0;; i = i + 1) {}")
    outside = small / "outside.log"
    escape = solution_with(small, "escape", "#include <vector>\n", writes_outside(outside))

    for folder, student, message in ((crash, "dave", "your code crashed (segmentation fault)"),
                                     (loop, "erin", "stopped after 4 s (the time limit)"),
                                     (escape, "fay", "Permission denied")):
        result = scores(grade_lab(2, folder, student, small))
        assert sum(score for score, _ in result.values()) == 10 and result["builds"][0] == 10, result
        for name in ("valid", "deterministic", "lru_wsr", "ace_writeback", "speedup"):
            assert message in result[name][1], (name, result[name])
    assert not outside.exists()


@pytest.mark.e2e
def test_a_compile_error_or_a_missing_file_scores_nothing_with_the_compilers_message(small, grade_lab):
    broken = solution_with(small, "broken", "return first_unpinned;", "return first_unpinned")
    result = grade_lab(2, broken, "gus", small)
    assert result["score"] == 0 and "error: expected" in result["tests"][0]["output"], result["tests"][0]
    empty = small / "empty"
    empty.mkdir()
    result = grade_lab(2, empty, "hal", small)
    assert result["score"] == 0 and all("policy.cc is not in the submission" in t["output"] for t in result["tests"])


@pytest.mark.e2e
def test_a_submission_cannot_use_the_artifacts_own_lru_wsr(small, grade_lab):
    delegate = small / "delegate"
    delegate.mkdir()
    (delegate / "policy.cc").write_text(SOLUTION.replace("ACESIM_REGISTER_POLICY(\"student\", LruWsr);", """
namespace {
struct Delegate : LruWsr {  // asks the registry for the built-in one
  explicit Delegate(const std::vector<FrameState>& frames) : LruWsr(frames), \
inner(acesim::make_policy("lru_wsr", frames)) {}
  std::unique_ptr<acesim::Policy> inner;
};
}
ACESIM_REGISTER_POLICY("student", Delegate);"""))
    result = scores(grade_lab(2, delegate, "ida", small))
    assert sum(score for score, _ in result.values()) == 10, result
    assert "no policy named 'lru_wsr' (known: student)" in result["lru_wsr"][1]
    include = small / "include"
    include.mkdir()
    (include / "policy.cc").write_text('#include <policy.cc>  // the simulator\'s own source\n' + SOLUTION)
    result = grade_lab(2, include, "jon", small)
    assert result["score"] == 0 and "Permission denied" in result["tests"][0]["output"], result["tests"][0]


def test_the_students_file_is_the_starters_file_and_registers_the_graded_name():
    for folder in ("starter", "solution"):
        text = (LAB / folder / grader.SUBMISSION_FILE).read_text()
        assert f'ACESIM_REGISTER_POLICY("{grader.POLICY}",' in text
    assert "TODO" in (LAB / "starter" / "policy.cc").read_text() and "TODO" not in SOLUTION
    assert shutil.which("g++"), "the grader compiles with g++"


# ----------------------------------------------------------------------------- the red team
# Lab 2 attacked as a student who read the grader would: the numbers a policy is judged by are the
# engine's (ace-sim outside the sandbox), so forging them, reading the answers or reaching outside
# gets exactly what the policy's work earns, and the grader's and other students' files stay as
# they were.


@pytest.mark.e2e
@needs_fuse
def test_a_policy_that_forges_its_results_gets_what_its_work_earns(small, grade_lab):
    other = labkit_grade.LABS_DIR / "build" / "grades" / "lab-2" / "someone-else" / "results.json"
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text('{"score": 7}')
    forger = small / "forger"
    forger.mkdir()
    starter = (LAB / "starter" / "policy.cc").read_text()
    (forger / "policy.cc").write_text(testing.forger_prelude([other, small / "key", LAB / "grader.py"], "FORGED:")
                                      + starter)
    result = grade_lab(2, forger, "mallory", small)
    assert result["score"] == 30, json.dumps(result, indent=1)  # the starter's: builds, valid, deterministic
    assert other.read_text() == '{"score": 7}' and "forged" not in (LAB / "grader.py").read_text()
    lru_wsr = testing.scores(grader, result)["lru_wsr"][1]
    assert "yours differ from the reference in" in lru_wsr and "(the reference" not in lru_wsr


@pytest.mark.e2e
def test_the_artifacts_own_policy_source_cannot_be_read(small, grade_lab):
    reader = small / "reader"
    reader.mkdir()
    source = LAB.parents[1] / "systems" / "ace" / "sim" / "src" / "policy.cc"
    (reader / "policy.cc").write_text(f'#include "{source}"\n' + (LAB / "starter" / "policy.cc").read_text())
    result = grade_lab(2, reader, "oscar", small)
    assert result["score"] == 0 and "Permission denied" in result["tests"][0]["output"], result["tests"][0]
