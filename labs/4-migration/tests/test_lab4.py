"""Lab 4's grader: the reference solution gets full marks and the starter the baseline; a policy
that crashes, loops, migrates without counting, migrates too much, writes outside its folder,
delegates to the artifact's own policies or does not compile loses exactly those tests' points,
each with its message; each student gets their own workloads, and a class gets a leaderboard."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml
from labkit import grade as labkit_grade
from labkit import testing

LAB = labkit_grade.lab_dir(4)
grader = labkit_grade.load_grader(LAB)
KEY = b"a practice key for lab 4's tests"
SOLUTION = (LAB / "solution" / "policy.cc").read_text()


@pytest.fixture
def small(tmp_path):
    """lab.yaml with two smaller workloads per student and short limits."""
    override = {"hidden": {**grader.load_config()["hidden"], "workloads": 2, "pages": [1000, 2000]},
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


def test_each_student_gets_their_own_drifting_workloads_and_always_the_same_ones():
    config = grader.load_config()
    drawn = [grader.hidden(KEY, f"s{n}", config) for n in range(50)]
    assert grader.hidden(KEY, "s1", config) == drawn[1]
    assert len({json.dumps(d, sort_keys=True) for d in drawn}) == 50
    for secret in drawn:
        for workload in secret["workloads"]:
            hot, _, phases = map(int, re.fullmatch(r"(\d+)hf\d+@\d+\*(\d+)", workload["workload"]).group(1, 1, 2))
            t1, t2, _ = map(int, workload["capacity_pct"].split(":"))
            assert phases * hot >= 2 * (t1 + t2) and 4 <= phases  # hot sets that outgrow the fast tiers


@pytest.mark.e2e
@pytest.mark.wall_clock  # under two CPU hogs per core: alone, not beside the other lanes
def test_the_solution_gets_full_marks_under_load_the_starter_the_baseline_and_a_class_a_leaderboard(small, cpu_hogs):
    config = yaml.safe_load((small / "small.yaml").read_text())
    config["limits"]["run"]["wall_s"] = 60  # a loaded machine stretches the wall clock, not the CPU time
    (small / "small.yaml").write_text(yaml.safe_dump(config))
    folder = small / "class"
    shutil.copytree(LAB / "solution", folder / "alice")
    shutil.copytree(LAB / "starter", folder / "bob")
    table = small / "grades.csv"
    assert labkit_grade.main(["--lab", "4", "--all", str(folder), "--csv", str(table), "--key", str(small / "key"),
                              "--config", str(small / "small.yaml")]) == 0
    alice = json.loads((labkit_grade.LABS_DIR / "build/grades/lab-4/alice/results.json").read_text())
    bob = json.loads((labkit_grade.LABS_DIR / "build/grades/lab-4/bob/results.json").read_text())
    assert alice["score"] == 100, json.dumps(alice, indent=1)
    assert bob["score"] == 35, json.dumps(bob, indent=1)
    assert alice["leaderboard"][0]["order"] == "asc" and alice["leaderboard"][0]["value"] < 1
    assert bob["leaderboard"][0]["value"] > 1  # never migrating: slower than the oracle's placement
    lines = table.read_text().splitlines()
    assert lines[0] == "student,score,builds,valid,deterministic,static,tlfu,migrations," \
                       "latency / Static (mean over your workloads),note"
    assert lines[1].startswith("alice,100,") and lines[2].startswith("bob,35,")


@pytest.mark.e2e
def test_migrating_on_every_request_loses_the_migration_points(small, grade_lab):
    eager = solution_with(small, "eager", "margin_(std::log2(4.0))", "margin_(-1e300)")
    result = scores(grade_lab(4, eager, "carol", small))
    assert [result[name][0] for name in ("builds", "valid", "deterministic", "migrations")] == [10, 20, 5, 0], result
    assert result["migrations"][1].count("not met: ") == 2


@pytest.mark.e2e
def test_a_crash_a_loop_an_uncounted_move_or_a_write_outside_costs_every_run(small, grade_lab, writes_outside):
    crash = solution_with(small, "crash", "const int from = tier_of(page);",
                          "const int from = tier_of(page); if (now == 500) *(volatile int*)nullptr = 1;")
    loop = solution_with(small, "loop", "const int from = tier_of(page);",
                         "const int from = tier_of(page); for (volatile int i = 0; now == 500; i = i + 1) {}")
    uncounted = solution_with(small, "uncounted", "promote(page, moves);",  # moves the page, tells no one
                              "tier_[page] = static_cast<uint8_t>(from - 1);")
    outside = small / "outside.log"
    escape = solution_with(small, "escape", "#include <vector>\n", writes_outside(outside))

    for folder, student, message in ((crash, "dave", "your code crashed (segmentation fault)"),
                                     (loop, "erin", "stopped after 4 s (the time limit)"),
                                     (uncounted, "fay", "by the policy's account, but its moves left it in tier"),
                                     (escape, "gus", "Permission denied")):
        result = scores(grade_lab(4, folder, student, small))
        assert sum(score for score, _ in result.values()) == 10 and result["builds"][0] == 10, (student, result)
        for name in ("valid", "deterministic", "static", "tlfu", "migrations"):
            assert message in result[name][1], (student, name, result[name])
    assert not outside.exists()


@pytest.mark.e2e
def test_a_compile_error_a_missing_file_or_a_built_in_policy_scores_what_it_should(small, grade_lab):
    broken = solution_with(small, "broken", "promote(page, moves);", "promote(page moves);")
    result = grade_lab(4, broken, "hal", small)
    assert result["score"] == 0 and "error: expected" in result["tests"][0]["output"], result["tests"][0]
    empty = small / "empty"
    empty.mkdir()
    result = grade_lab(4, empty, "ida", small)
    assert result["score"] == 0 and all("policy.cc is not in the submission" in t["output"] for t in result["tests"])
    delegate = solution_with(small, "delegate", "RESTORE_REGISTER_POLICY(\"student\", DecayedPopularity);", """
namespace {
struct Delegate : DecayedPopularity {  // asks the registry for the built-in TEMP
  Delegate(const std::vector<restore::TierSpec>& t, uint32_t p, const restore::PolicyParams& o)
      : DecayedPopularity(t, p, o), inner(restore::make_policy("temp", t, p, o)) {}
  std::unique_ptr<restore::Policy> inner;
};
}
RESTORE_REGISTER_POLICY("student", Delegate);""")
    result = scores(grade_lab(4, delegate, "jon", small))
    assert sum(score for score, _ in result.values()) == 10 and "no policy named 'temp'" in result["valid"][1], result


def test_the_students_file_registers_the_graded_name():
    for folder in ("starter", "solution"):
        assert f'RESTORE_REGISTER_POLICY("{grader.POLICY}",' in (LAB / folder / grader.SUBMISSION_FILE).read_text()
    assert "TODO" in (LAB / "starter" / "policy.cc").read_text() and "TODO" not in SOLUTION


# ----------------------------------------------------------------------------- the red team
# Lab 4 attacked as a student who read the grader would: the latencies and migrations a policy is
# judged by are the engine's (restore-sim outside the sandbox), so forging them (the attack that
# once scored 100 by rewriting the simulator's CSV from an atexit hook), reading the answers or
# reaching outside gets exactly what the policy's work earns, and the grader's and other students'
# files stay as they were.


@pytest.mark.e2e
def test_a_policy_that_forges_its_results_gets_what_its_work_earns(small):
    other = labkit_grade.LABS_DIR / "build" / "grades" / "lab-4" / "someone-else" / "results.json"
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text('{"score": 7}')
    folder = small / "class"
    forger = folder / "mallory"
    forger.mkdir(parents=True)
    starter = (LAB / "starter" / "policy.cc").read_text()
    (forger / "policy.cc").write_text(testing.forger_prelude([other, small / "key", LAB / "grader.py"], "FORGED:")
                                      + starter)
    table = small / "grades.csv"
    assert labkit_grade.main(["--lab", "4", "--all", str(folder), "--csv", str(table), "--key", str(small / "key"),
                              "--config", str(small / "small.yaml")]) == 0
    result = json.loads((labkit_grade.LABS_DIR / "build/grades/lab-4/mallory/results.json").read_text())
    assert result["score"] == 35, json.dumps(result, indent=1)  # the starter's: it never migrates
    assert result["leaderboard"][0]["value"] > 1  # slower than Static's placement, as the starter is
    assert other.read_text() == '{"score": 7}' and "forged" not in (LAB / "grader.py").read_text()


@pytest.mark.e2e
def test_a_policy_that_reads_the_engines_answers_gets_nothing_from_them(small, grade_lab):
    reader = small / "reader"
    reader.mkdir()
    source = LAB.parents[1] / "systems" / "restore" / "src" / "builtin_policies.cc"
    (reader / "policy.cc").write_text(f'#include "{source}"\n' + (LAB / "starter" / "policy.cc").read_text())
    result = grade_lab(4, reader, "oscar", small)
    assert result["score"] == 0 and "Permission denied" in result["tests"][0]["output"], result["tests"][0]


CLAIRVOYANT_PROBE = r"""
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
// What a policy could learn of its hidden workload: every engine's command line, and its own seed.
namespace {
std::string engines() {
  std::string found;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::stringstream text;
    text << f.rdbuf();
    std::string line = text.str();
    for (char& c : line) c = c ? c : ' ';
    if (line.find("restore-sim") != std::string::npos) found += "[" + line + "]";
  }
  return found;
}
class Probe : public restore::HeapPolicy {
 public:
  Probe(const std::vector<restore::TierSpec>& tiers, uint32_t pages, const restore::PolicyParams& params)
      : HeapPolicy(tiers, pages), seed_(params.seed) {}
  void access(uint32_t, restore::Op, uint64_t, restore::QueueProbe&, std::vector<restore::Move>&) override {
    throw std::runtime_error("PROBE seed " + std::to_string(seed_) + " engines " + engines());
  }
 private:
  uint64_t seed_;
};
}  // namespace
RESTORE_REGISTER_POLICY("student", Probe);
"""


@pytest.mark.e2e
def test_a_policy_learns_neither_its_workloads_options_nor_their_seed(small, grade_lab):
    prober = small / "prober"
    prober.mkdir()
    (prober / "policy.cc").write_text('#include "policy.h"\n' + CLAIRVOYANT_PROBE)
    result = grade_lab(4, prober, "trudy", small)
    said = "\n".join(test["output"] for test in result["tests"])
    assert "PROBE seed 1 engines [" in said and "--args-file" in said, said  # it saw the engine
    hidden = grader.hidden(KEY, "trudy", grader.load_config(small / "small.yaml"))["workloads"]
    for workload in hidden:
        assert workload["workload"] not in said and f"seed {workload['seed']}" not in said
        assert f"={workload['seed']}" not in said, said


@pytest.mark.e2e
def test_a_class_is_graded_whatever_its_folders_hold(small):
    """Odd folder names, a file, a link, and a grading that outlives its limit: every folder gets a
    row (graded, or not graded with the reason), the honest students are graded, the CSV is written."""
    import os
    import yaml

    folder = small / "class"
    folder.mkdir()
    for name in ("alice", "bad name", "tab\tand\nnewline", "..x", "=cmd()", "-x"):
        (folder / name).mkdir()
        (folder / name / "policy.cc").write_text((LAB / "starter" / "policy.cc").read_text())
    (folder / "a-file").write_text("not a folder")
    os.symlink(LAB / "solution", folder / "linked")
    slow = folder / "zed"
    slow.mkdir()
    (slow / "policy.cc").write_text((LAB / "starter" / "policy.cc").read_text())
    config = yaml.safe_load((small / "small.yaml").read_text())
    (small / "short.yaml").write_text(yaml.safe_dump({**config, "grading_limit_s": 60}))
    table = small / "grades.csv"
    assert labkit_grade.main(["--lab", "4", "--all", str(folder), "--csv", str(table), "--key", str(small / "key"),
                              "--config", str(small / "short.yaml")]) == 0
    import csv

    rows = {row["student"]: row for row in csv.DictReader(table.open())}
    assert rows["alice"]["score"] == "35" and rows["zed"]["score"] == "35" and rows["..x"]["score"] == "35"
    assert rows["-x"]["score"] == "35", rows["-x"]  # a leading dash is an id, not an option
    assert rows["=cmd()"]["score"] == "" and "use letters, digits" in rows["=cmd()"]["note"]
    assert "use letters, digits" in rows["bad name"]["note"]
    assert "use letters, digits" in rows["tab\\tand\\nnewline"]["note"]
    assert "not a folder" in rows["a-file"]["note"] and "not a folder" in rows["linked"]["note"]
    assert not list((labkit_grade.LABS_DIR / "build" / "work").glob("lab4-*"))  # no workspace left behind


@pytest.mark.e2e
def test_a_grading_stopped_at_its_limit_is_recorded_and_leaves_nothing_behind(small):
    import csv

    import yaml

    folder = small / "class"
    folder.mkdir()
    # a policy that spins from its 500th request until the run's own limit (4 s): the grading's
    # 3 s end first, however fast the machine (the solution itself was graded within 3 s on an idle one)
    solution_with(small, "class/slow", "const int from = tier_of(page);",
                  "const int from = tier_of(page); for (volatile int i = 0; now == 500; i = i + 1) {}")
    config = yaml.safe_load((small / "small.yaml").read_text())
    (small / "short.yaml").write_text(yaml.safe_dump({**config, "grading_limit_s": 3}))
    table = small / "grades.csv"
    assert labkit_grade.main(["--lab", "4", "--all", str(folder), "--csv", str(table), "--key", str(small / "key"),
                              "--config", str(small / "short.yaml")]) == 0
    row = next(csv.DictReader(table.open()))
    assert row["score"] == "" and "stopped after 3 s (the lab's grading_limit_s)" in row["note"], row
    assert not list((labkit_grade.LABS_DIR / "build" / "work").glob("lab4-*"))
