"""Gradescope's autograder for a lab (labkit.gradescope, `make lab-gradescope`): the zip's contents
(the key once, where run_autograder reads it; no solution, no graders' tests, no other key; two
scripts that are executable and pass shellcheck), the student's id from submission_metadata.json,
the results of a submission that cannot be graded; and, marked e2e, the zip run as Gradescope runs
it, in the lab image with no privilege, device, added capability or network: setup.sh offline, then
run_autograder on the reference solution, the starter, a starter that tries to read the key and
forge results, and a submission without metadata."""

import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
from labkit import dist, gradescope, sandbox, testing
from labkit import grade as labkit_grade

# A key made for this run: one written in a file of the repository would be found in the zip (and refused).
KEY = secrets.token_urlsafe(32).encode()
STARTER_SCORE = {1: 10, 2: 30, 3: 10, 4: 35}  # each lab's starter, graded (labs/*/tests)


@pytest.fixture
def key_file(tmp_path):
    path = tmp_path / "course.key"
    path.write_bytes(KEY + b"\n")
    return path


def members(archive: Path) -> dict[str, tuple[bytes, int]]:
    with zipfile.ZipFile(archive) as packed:
        return {info.filename: (packed.read(info), (info.external_attr >> 16) & 0o7777) for info in packed.infolist()}


@pytest.mark.parametrize("lab", [1, 2, 3, 4])
def test_the_zip_holds_the_students_copy_the_grader_and_the_key_once_where_run_autograder_reads_it(tmp_path,
                                                                                                   key_file, lab):
    archive = gradescope.build(lab, key_file, tmp_path / "autograder.zip")
    inside = members(archive)
    fio_source = {str(gradescope.fio_source_tarball().relative_to(dist.REPO_ROOT))} if lab in gradescope.DEVICE_LABS \
        else set()  # the library device's engine is built from it, offline
    assert {"setup.sh", "run_autograder"} <= set(inside)  # at the zip's top, as Gradescope wants them
    for script in ("setup.sh", "run_autograder"):
        assert inside[script][1] & 0o111 == 0o111, f"{script} is not executable"
        assert inside[script][0].startswith(b"#!/usr/bin/env bash\n")
    # the key: in one entry only, the one run_autograder reads, private
    holding = [name for name, (data, _) in inside.items() if KEY in data]
    assert holding == [gradescope.KEY_PATH] and inside[gradescope.KEY_PATH][1] == 0o600
    run = inside["run_autograder"][0].decode()
    assert f"KEY=$SOURCE/{gradescope.KEY_PATH}\n" in run and f"SOURCE={gradescope.SOURCE}\n" in run
    assert '--key "$KEY"' in run and "LAB_SECRET_KEY" not in run.replace("unset LAB_SECRET_KEY", "")
    assert [name for name in inside if name.endswith(".key")] == [gradescope.KEY_PATH]
    # the artifact: what the students' copy has, with this lab's grader and settings
    artifact = {name.removeprefix("artifact/") for name in inside if name.startswith("artifact/")}
    assert artifact == {path for path in {*dist.members(), *gradescope.runs_with(lab)}
                        if (dist.REPO_ROOT / path).is_file()} | fio_source
    folder = labkit_grade.lab_dir(lab).name
    assert {f"labs/{folder}/grader.py", f"labs/{folder}/lab.yaml", f"labs/{folder}/README.md"} <= artifact
    assert not [name for name in artifact if re.match(r"labs/[^/]+/(solution|tests)/", name)]  # no lab's
    assert not [name for name in artifact if name.startswith(".github/")]
    assert set(inside) - {f"artifact/{name}" for name in artifact} == {"setup.sh", "run_autograder",
                                                                       gradescope.KEY_PATH}
    assert gradescope.build(lab, key_file, tmp_path / "again.zip").read_bytes() == archive.read_bytes()
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600  # it holds the key


def test_the_scripts_pass_shellcheck(tmp_path, key_file):
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (workflow/debian-packages.txt)")
    overrides = tmp_path / "narrow.yaml"
    overrides.write_text("grading_limit_s: 300\n")
    archive = gradescope.build(4, key_file, tmp_path / "autograder.zip", overrides=overrides, field="sid",
                               timeout_min=20)
    gradescope.extract(archive, tmp_path / "source")
    scripts = [tmp_path / "source" / name for name in ("setup.sh", "run_autograder")]
    result = subprocess.run(["shellcheck", "--shell=bash", *map(str, scripts)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert all(os.access(script, os.X_OK) for script in scripts)  # modes survive the unpacking
    assert (tmp_path / "source" / gradescope.OVERRIDES).read_text() == "grading_limit_s: 300\n"
    run = scripts[1].read_text()
    assert "LIMIT_S=300\n" in run and "--field sid" in run


def test_a_key_in_a_packed_file_is_refused(tmp_path, key_file, monkeypatch):
    stray = labkit_grade.LABS_DIR / "build" / f"notes-{os.getpid()}.txt"  # labs/build: git ignores it
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"the course's key: " + KEY)
    tracked = dist.members()
    monkeypatch.setattr(dist, "members", lambda root=dist.REPO_ROOT: [*tracked, str(stray.relative_to(root))])
    try:
        with pytest.raises(labkit_grade.CannotGrade, match=f"labs/build/{stray.name} holds the instructor's key"):
            gradescope.build(4, key_file, tmp_path / "refused.zip")
    finally:
        stray.unlink()
    assert not (tmp_path / "refused.zip").exists()


def test_the_grading_fits_within_gradescopes_timeout():
    assert gradescope.grading_limit_s({}, 10) == 540  # Gradescope's default 10 minutes, less a margin
    assert gradescope.grading_limit_s({"grading_limit_s": 120}, 10) == 120  # the lab's own, when shorter
    assert gradescope.grading_limit_s({}, 40) == 1800  # the labs' default grading_limit_s


def test_the_student_is_named_by_their_email_and_a_group_by_its_smallest():
    one = {"users": [{"email": " Alice@Example.EDU ", "id": 7, "name": "Alice", "sid": "U123"}]}
    assert gradescope.student_of(one) == "alice@example.edu"
    assert gradescope.student_of(one, "sid") == "U123" and gradescope.student_of(one, "id") == "7"
    group = {"users": [{"email": "zed@example.edu"}, {"email": "ann@example.edu"}, {"email": "bob@example.edu"}]}
    assert gradescope.student_of(group) == "ann@example.edu"
    assert gradescope.student_of({"users": list(reversed(group["users"]))}) == "ann@example.edu"
    for metadata, message in (({}, "no user with a 'email'"), ({"users": [{"email": ""}]}, "no user"),
                              ({"users": [{"id": 1}]}, "no user"), ([], "no user"),
                              ({"users": [{"email": "a b@example.edu"}]}, "use letters, digits")):
        with pytest.raises(labkit_grade.CannotGrade, match=message):
            gradescope.student_of(metadata)


def test_the_folder_graded_is_the_uploads_top_or_the_labs_starter_folder_in_it_never_through_a_link(tmp_path):
    def upload(name: str, *files: str) -> Path:
        top = tmp_path / name
        for file in files:
            (top / file).parent.mkdir(parents=True, exist_ok=True)
            (top / file).write_text("// a policy\n")
        top.mkdir(exist_ok=True)
        return top

    starter = "labs/4-migration/starter"
    assert gradescope.submission_folder(upload("file", "policy.cc", "notes.txt"), 4) == tmp_path / "file"
    top = upload("github", f"{starter}/policy.cc", "Makefile", "labs/4-migration/solution/x.cc")  # from GitHub
    assert gradescope.submission_folder(top, 4) == top / starter
    top = upload("zip", "mine/policy.cc", "__MACOSX/mine/._policy.cc")  # a zip of a folder
    assert gradescope.submission_folder(top, 4) == top / "mine"
    top = upload("zip-of-copy", f"artifact-lab-4/{starter}/policy.cc")
    assert gradescope.submission_folder(top, 4) == top / "artifact-lab-4" / starter
    assert gradescope.submission_folder(upload("nothing", "README.md"), 4) == tmp_path / "nothing"
    # a link to a folder that holds the file (the key's folder, say) is not followed
    elsewhere = upload("elsewhere", "policy.cc")
    top = upload("linked")
    (top / "labs" / "4-migration").mkdir(parents=True)
    (top / starter).symlink_to(elsewhere)
    assert gradescope.submission_folder(top, 4) == top
    (top / "labs").rename(tmp_path / "moved")
    (top / "mine").symlink_to(elsewhere)  # the one folder it holds, as a link
    assert gradescope.submission_folder(top, 4) == top
    assert gradescope.submission_folder(upload("lab1", "measure.py"), 1) == tmp_path / "lab1"  # lab 1's module


def test_a_submission_that_cannot_be_graded_scores_0_with_the_reason_but_not_the_graders_words(tmp_path, capsys):
    log = tmp_path / "log"
    log.write_text("this machine cannot emulate the hidden device: a page read takes 12 s")  # hidden values
    results = tmp_path / "results.json"
    assert gradescope.main(["not-graded", "--lab", "4", "--results", str(results), "--why",
                            "the grading took longer than 540 s", "--log", str(log)]) == 0
    result = json.loads(results.read_text())
    assert result["score"] == 0 and result["stdout_visibility"] == "hidden"
    assert result["output"].startswith("Lab 4 (A migration policy): not graded: the grading took longer than 540 s.")
    assert [test["score"] for test in result["tests"]] == [0] * 6
    assert sum(test["max_score"] for test in result["tests"]) == 100
    assert "12 s" not in results.read_text()
    assert "a page read takes 12 s" in capsys.readouterr().out  # for the instructor, in the autograder's log
    # a lab that is not there: results.json all the same
    assert gradescope.main(["not-graded", "--lab", "9", "--results", str(results), "--why", "no such lab"]) == 0
    assert json.loads(results.read_text())["score"] == 0


def test_an_environment_is_the_locked_one_when_it_holds_every_locked_version(tmp_path):
    lock = dist.REPO_ROOT / "containers" / "python" / "python.lock"
    assert gradescope.locked_missing(lock) == []  # this environment, made from uv.lock
    other = tmp_path / "python.lock"
    other.write_text(lock.read_text().replace("pyyaml==", "pyyaml==0.0.", 1) + "no-such-package==1.0 \\\n")
    assert [name.split(" ")[0] for name in gradescope.locked_missing(other)] == [
        next(line.split(" ")[0] for line in other.read_text().splitlines() if line.startswith("pyyaml==")),
        "no-such-package==1.0"]


# ----------------------------------------------------------------------------- as Gradescope runs it

# The steps of Gradescope's builder and harness, in one container: the zip unpacked at /autograder/source
# (modes kept, as unzip does), setup.sh run there, run_autograder copied to /autograder and run from
# there once per case, each with its submission and submission_metadata.json put in place anew.
GRADESCOPE = r"""set -euo pipefail
python3 - <<'EOF'
import os, zipfile
with zipfile.ZipFile("/in/autograder.zip") as packed:
    for info in packed.infolist():
        path = packed.extract(info, "/autograder/source")
        if (info.external_attr >> 16) & 0o777:
            os.chmod(path, (info.external_attr >> 16) & 0o777)
EOF
started=$(date +%s%N)
(cd /autograder/source && ./setup.sh) >/out/setup.log 2>&1 || { echo "setup.sh failed" >>/out/setup.log; exit 1; }
echo "setup $(( ($(date +%s%N) - started) / 1000000 ))" >/out/times
cp /autograder/source/run_autograder /autograder/run_autograder
for case in /in/cases/*; do
  name=$(basename "$case")
  rm -rf /autograder/submission /autograder/results /autograder/submission_metadata.json
  mkdir /autograder/results
  cp -r "$case/submission" /autograder/submission
  if [ -f "$case/metadata.json" ]; then cp "$case/metadata.json" /autograder/submission_metadata.json; fi
  started=$(date +%s%N)
  (cd /autograder && ./run_autograder) >"/out/$name.log" 2>&1 || echo "exit status $?" >>"/out/$name.log"
  echo "$name $(( ($(date +%s%N) - started) / 1000000 ))" >>/out/times
  cp /autograder/results/results.json "/out/$name.json" || true
done
"""

# Inside the lab's code, before main(): read the key (root's, 0600: the sandbox's own user cannot) and
# submission_metadata.json (anyone's to read: only Landlock keeps it out), and say so when it could.
READS_OUTSIDE = f"""#include <cstdio>
#include <cstdlib>
#include <fstream>
namespace {{
struct ReadsOutside {{
  ReadsOutside() {{
    for (const char* path : {{"{gradescope.SOURCE}/{gradescope.KEY_PATH}", "{gradescope.METADATA}"}}) {{
      std::ifstream file(path);
      if (file.good() && file.peek() != EOF) {{
        std::printf("FORGED: read %s\\n", path);
        std::abort();
      }}
    }}
  }}
}} reads_outside;
}}  // namespace
"""

# Labs 1-3 with small hidden devices and graphs (the instructor's CONFIG=, as in each lab's own tests), so that
# grading two submissions in the container takes a minute or two.
SMALL = {1: {"hidden": {"read_latency_us": {"choices": [2000]}, "alpha": [1.5, 3.0], "k_r": [4, 8], "k_w": [4, 8]},
             "max_threads": 32, "writeback": {"read_fraction": 0.5, "pages": 1024, "duration_s": 1.0, "repeats": 3}},
         2: {"hidden": {"workloads": 2, "ops": 5000, "pool_pages": [16, 400], "pages_per_pool": [2, 16],
                        "read_pct": [10, 90], "hot_ops_pct": [50, 95], "hot_pages_pct": [5, 50], "n_w": [2, 32],
                        "read_latency_us": {"choices": [2000]}, "alpha": [2.0, 3.0], "k_r": [4, 64], "k_w": [4, 8]},
             "speedup": {"ops": 250, "pages": 2048, "pool_pages": 64}},
         3: {"hidden": {"shapes": ["hub", "path", "forest"], "vertices": [800, 2000],
                        "read_latency_us": {"choices": [1000]}, "alpha": {"choices": [1.0]}, "k_r": [4, 8],
                        "k_w": {"choices": [4]}},
             "speedup": {"vertices": 1000, "m": 8, "cache_blocks": 8, "repeats": 3}}}


def _device_lab(lab: int):
    """Labs 1-3: their hidden device (the library device: no /dev/fuse in the container) times the wall
    clock, so they run alone (wall_clock). Labs 1 and 3 only in `make test-gradescope` (every_lab):
    `make test` has no room for their 4 minutes (lab 3's setup builds CAVE twice)."""
    return pytest.param(lab, marks=[pytest.mark.wall_clock, *([pytest.mark.every_lab] if lab != 2 else [])])


def _docker_works() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True).returncode == 0


def _check_format(result: dict, lab: int) -> None:
    """Gradescope's results.json: a score that is the tests' total, each test's name, score, max_score
    and output, a visibility of Gradescope's, stdout for the instructor only; lab 4's leaderboard."""
    assert isinstance(result["score"], (int, float))
    assert result["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
    assert result["stdout_visibility"] == "hidden"
    assert result["tests"] and all(set(test) >= {"name", "score", "max_score", "output"} for test in result["tests"])
    assert all(0 <= test["score"] <= test["max_score"] for test in result["tests"])
    assert result["score"] == pytest.approx(sum(test["score"] for test in result["tests"]), abs=0.05)
    assert sum(test["max_score"] for test in result["tests"]) == 100
    if lab == 4 and result["score"] > 0:
        assert [set(entry) for entry in result["leaderboard"]] == [{"name", "value", "order"}]


@pytest.mark.e2e
@pytest.mark.docker
@pytest.mark.skipif(not _docker_works(), reason="`docker info` failed: no Docker engine to run the autograder in")
@pytest.mark.parametrize("lab", [4, _device_lab(1), _device_lab(2), _device_lab(3)])
def test_the_autograder_grades_in_a_container_as_gradescope_runs_it(tmp_path, key_file, lab):
    from ssdartifact.containers.build import ensure_image

    tag = ensure_image("lab")  # Debian 12 with all that setup.sh installs: it must install nothing
    folder = labkit_grade.lab_dir(lab)
    inputs, out = tmp_path / "in", tmp_path / "out"
    out.mkdir()
    out.chmod(0o777)
    overrides = None
    if lab in SMALL:
        overrides = tmp_path / "small.yaml"
        overrides.write_text(json.dumps(SMALL[lab]))  # JSON is YAML
    gradescope.build(lab, key_file, inputs / "autograder.zip", overrides=overrides)
    cases = {"solution": {"users": [{"email": "Alice@Example.edu", "id": 1, "name": "Alice"}]},
             "starter": {"users": [{"email": "bob@example.edu", "id": 2}, {"email": "ann@example.edu", "id": 3}]},
             "no-metadata": None}
    for name, metadata in cases.items():
        shutil.copytree(folder / ("solution" if name == "solution" else "starter"), inputs / "cases" / name /
                        "submission")
        if metadata is not None:
            (inputs / "cases" / name / "metadata.json").write_text(json.dumps({"id": 1, "users": metadata["users"]}))
    if lab == 4:  # the starter, reading the key and the metadata, writing them and the results, signalling
        probe = inputs / "cases" / "probe" / "submission"
        probe.mkdir(parents=True)
        (probe / "policy.cc").write_text(
            READS_OUTSIDE + testing.forger_prelude([Path(gradescope.SOURCE) / gradescope.KEY_PATH,
                                                    Path(gradescope.RESULTS)], "FORGED:")
            + (folder / "starter" / "policy.cc").read_text())
        (probe.parent / "metadata.json").write_text(json.dumps({"users": [{"email": "mallory@example.edu"}]}))
    (inputs / "gradescope.sh").write_text(GRADESCOPE)
    run = ["docker", "run", "--rm", "--network", "none", "-v", f"{inputs}:/in:ro", "-v", f"{out}:/out", tag,
           "bash", "/in/gradescope.sh"]
    started = time.monotonic()
    done = subprocess.run(run, capture_output=True, text=True, timeout=1200)
    took = time.monotonic() - started
    subprocess.run(["docker", "run", "--rm", "-v", f"{out}:/out", tag, "chmod", "-R", "a+rwX", "/out"],
                   capture_output=True)  # what root wrote in the container, removable by the test's user
    logs = {path.name: path.read_text(errors="replace") for path in out.glob("*.log")}
    setup = logs.get("setup.log", "")
    assert done.returncode == 0, done.stdout + done.stderr + setup
    print(f"\nlab {lab} as Gradescope runs it, {took:.0f} s in all (ms):\n{(out / 'times').read_text()}")
    # offline: setup.sh found everything installed, built what the lab needs and said what the sandbox is
    assert "every package grading needs is installed" in setup, setup
    assert "the locked Python environment is there: /opt/venv/bin/python" in setup, setup
    full, made_of = sandbox.strength()
    assert f"setup: sandbox: {made_of.replace('a user of its own, ', '')}" in setup.replace("a user of its own, ", "")

    results = {name: json.loads((out / f"{name}.json").read_text()) for name in [*cases, *(["probe"] * (lab == 4))]}
    for name in results:
        _check_format(results[name], lab)
        assert KEY.decode() not in json.dumps(results[name]) and KEY.decode() not in logs[f"{name}.log"]
    solution, starter = results["solution"], results["starter"]
    assert solution["score"] == 100, json.dumps(solution, indent=1) + logs["solution.log"]
    assert starter["score"] == STARTER_SCORE[lab], json.dumps(starter, indent=1) + logs["starter.log"]
    assert "for alice@example.edu. Sandbox: " in solution["output"] and "for ann@example.edu." in starter["output"]
    # the sandbox inside the container: a user of its own (root in the container), and what holds here
    summary = solution["output"].split("Sandbox: ", 1)[1]
    assert summary.startswith("a user of its own, ") and made_of.removeprefix("a user of its own, ") in summary
    if full:
        assert "not all confined" not in summary and "Landlock ABI" in summary and "seccomp" in summary
    if lab == 4:
        assert results["probe"]["score"] == STARTER_SCORE[4], json.dumps(results["probe"], indent=1)
        assert "FORGED" not in json.dumps(results["probe"])
    missing = results["no-metadata"]
    assert missing["score"] == 0 and "not graded: cannot read /autograder/submission_metadata.json" in \
        missing["output"], missing
