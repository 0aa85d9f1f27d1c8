"""The guide's generated numbers (docs/, ssdartifact.guide, steps.guide): the pages agree with
docs/numbers.json, every number is computed from a run's results, and a page that is out of date
with its results fails."""

import json
import re
import shutil

import pytest
from ssdartifact import guide as markers
from ssdartifact.guide import GuideError
from steps import guide

CLAIMS = "id,chapter,item,thesis_line,status,measured,detail,known_reason,quote\n"


def results_tree(root, *, passed=3, known=1, unexpected=0, ace_seconds=120.0, profile="quick"):
    """A small results tree as a run leaves it: the run record, claims, benchmarks, ACE's runs,
    the characterization and a JUnit report."""
    (root / "results/runs").mkdir(parents=True)
    (root / f"results/runs/{profile}.json").write_text(json.dumps(
        {"profile": profile, "started": "2026-11-27T05:00:00+00:00", "finished": "2026-11-27T05:31:00+00:00",
         "minutes": 31.0}))
    claims = root / "results/claims"
    claims.mkdir(parents=True)
    rows = ([f"p{i},4,x,1,pass,1,,,q" for i in range(passed)]
            + [f"k{i},4,x,1,fail,1,,small scale,q" for i in range(known)]
            + [f"u{i},4,x,1,fail,1,,,q" for i in range(unexpected)] + ["n,4,x,1,not run,,,,q"])
    (claims / "claims.csv").write_text(CLAIMS + "\n".join(rows) + "\n")
    bench = root / "results/benchmarks/run_ace_experiments"
    bench.mkdir(parents=True)
    for device, seconds in (("emu-a", ace_seconds), ("emu-b", 60.0)):
        (bench / f"{device}.tsv").write_text(f"s\th:m:s\n{seconds}\t0:02:00\n")
    (root / "results/benchmarks/build_ace_server.tsv").write_text("s\th:m:s\n150.0\t0:02:30\n")
    (root / "results/ace").mkdir(parents=True)
    (root / "results/ace/runs.csv").write_text("device,runtime_s\n" + "emu-a,1\n" * 30 + "emu-b,1\n" * 10)
    (root / "results/pio/devices/emu-a").mkdir(parents=True)
    (root / "results/pio/devices/emu-a/alpha_k.csv").write_text(
        "device,block_size,alpha,k_r,k_w\nemu-a,4096,2.049,8,4\nemu-a,8192,2.2,8,4\n")
    (root / "results/tests").mkdir(parents=True)
    (root / "results/tests/unit.xml").write_text(
        '<testsuites><testsuite tests="10" failures="1" errors="0" skipped="2" time="270.5"/></testsuites>')
    for suite, seconds in (("e2e-wall-clock", 1800), ("e2e-native", 600), ("e2e-docker", 700), ("e2e-slurm", 650)):
        (root / f"results/tests/{suite}.xml").write_text(f'<testsuite tests="3" time="{seconds}"/>')
    return root


PAGE = """# Time
The quick profile took <!--n:quick.reproduce_min-->?<!--/n--> minutes; ACE's campaign on emu-a
<!--n:quick.job_min.run_ace_experiments.emu-a-->?<!--/n--> minutes (<!--n:quick.ace.runs.emu-a-->?<!--/n--> runs,
<!--n:quick.ace.s_per_run.emu-a-->?<!--/n--> s each), both devices
<!--n:quick.job_s.run_ace_experiments-->?<!--/n--> s, the server's build
<!--n:quick.job_s.build_ace_server-->?<!--/n--> s.
Claims: <!--n:quick.claims.passed-->?<!--/n--> passed, <!--n:quick.claims.known-->?<!--/n--> known failures,
<!--n:quick.claims.unexpected-->?<!--/n--> unexpected, <!--n:quick.claims.not_run-->?<!--/n--> not run;
chapter 4: <!--n:quick.claims.chapter4.passed-->?<!--/n--> passed.
emu-a: alpha <!--n:quick.device.emu-a.alpha-->?<!--/n-->, k_r <!--n:quick.device.emu-a.k_r-->?<!--/n-->.
Unit tests: <!--n:tests.unit.passed-->?<!--/n--> passed in <!--n:tests.unit.min-->?<!--/n--> minutes;
make test <!--n:tests.make_test_min-->?<!--/n--> minutes.
"""


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "time.md").write_text(PAGE)
    return folder


def shown(docs):
    return dict(markers.markers((docs / "time.md").read_text()))


def test_every_number_is_computed_from_the_results(tmp_path, docs):
    root = results_tree(tmp_path / "run")
    assert guide.update("quick", root, docs) == [docs / "time.md"]
    assert shown(docs) == {
        "quick.reproduce_min": "31", "quick.job_min.run_ace_experiments.emu-a": "2.0",
        "quick.ace.runs.emu-a": "30", "quick.ace.s_per_run.emu-a": "4.0", "quick.job_s.run_ace_experiments": "180",
        "quick.job_s.build_ace_server": "150", "quick.claims.passed": "3", "quick.claims.known": "1",
        "quick.claims.unexpected": "0", "quick.claims.not_run": "1", "quick.claims.chapter4.passed": "3",
        "quick.device.emu-a.alpha": "2.05", "quick.device.emu-a.k_r": "8", "tests.unit.passed": "7",
        "tests.unit.min": "5", "tests.make_test_min": "42"}
    # the text around the markers is untouched, and the recorded numbers say where each comes from
    assert markers.MARKER.sub("", (docs / "time.md").read_text()) == markers.MARKER.sub("", PAGE)
    recorded = json.loads((docs / "numbers.json").read_text())["numbers"]
    assert recorded["quick.claims.passed"]["sources"] == ["results/claims/claims.csv"]
    assert guide.problems(docs, root) == []
    # a second update from the same results changes nothing
    assert guide.update("quick", root, docs) == []


def test_a_page_out_of_date_with_its_results_fails(tmp_path, docs):
    root = results_tree(tmp_path / "run")
    guide.update("quick", root, docs)
    # another run's results: every number that comes from a changed file is reported, until updated
    shutil.rmtree(root)
    results_tree(root, passed=5, ace_seconds=90.0)
    stale = guide.problems(docs, root)
    assert any("quick.claims.passed (3)" in line for line in stale), stale
    assert any("quick.job_min.run_ace_experiments.emu-a" in line for line in stale), stale
    assert not any("quick.device.emu-a.alpha" in line for line in stale), stale  # its file did not change
    guide.update("quick", root, docs)
    assert shown(docs)["quick.claims.passed"] == "5"
    assert guide.problems(docs, root) == []


def test_a_page_edited_by_hand_fails(tmp_path, docs):
    guide.update("quick", results_tree(tmp_path / "run"), docs)
    page = docs / "time.md"
    page.write_text(page.read_text().replace("<!--n:quick.claims.passed-->3<", "<!--n:quick.claims.passed-->4<"))
    assert guide.problems(docs) == ["docs/time.md: quick.claims.passed shows '4' where docs/numbers.json has '3': "
                                    "run `make guide` (pages are not edited by hand)"]


def test_unknown_unused_and_never_computed_numbers_fail(tmp_path, docs):
    root = results_tree(tmp_path / "run")
    guide.update("quick", root, docs)
    page = docs / "time.md"
    page.write_text(page.read_text() + "<!--n:quick.nonsense-->1<!--/n-->\n")
    assert guide.problems(docs) == ["the guide names numbers that steps.guide cannot compute: quick.nonsense"]
    with pytest.raises(GuideError, match="quick.nonsense"):
        guide.update("quick", root, docs)
    # a number of a profile that never ran here: not computed, so the page cannot show it
    page.write_text(PAGE + "<!--n:full.claims.passed-->?<!--/n-->\n")
    guide.update("quick", root, docs)
    assert any("full.claims.passed' was never computed" in line for line in guide.problems(docs))
    # a recorded number no page uses any more
    page.write_text(PAGE.replace("<!--n:tests.unit.min-->?<!--/n-->", "some"))
    assert "docs/numbers.json: tests.unit.min is used by no page" in guide.problems(docs)


def test_numbers_come_only_from_a_run_of_their_profile(tmp_path, docs):
    root = results_tree(tmp_path / "run", profile="ci")
    with pytest.raises(GuideError, match="the last run in .* was profile 'ci', not 'quick'"):
        guide.update("quick", root, docs)


def test_a_broken_result_is_a_clear_error(tmp_path, docs):
    root = results_tree(tmp_path / "run")
    (root / "results/pio/devices/emu-a/alpha_k.csv").write_text("device,block_size\nemu-a,512\n")
    with pytest.raises(GuideError, match="quick.device.emu-a.alpha: cannot compute it from "
                                         "results/pio/devices/emu-a/alpha_k.csv"):
        guide.update("quick", root, docs)
    (docs / "numbers.json").write_text("{not json")
    with pytest.raises(GuideError, match="not valid JSON"):
        guide.update("quick", results_tree(tmp_path / "other"), docs)


def test_the_repositorys_guide_is_up_to_date_with_its_numbers():
    assert guide.problems() == []


def test_every_link_of_the_guide_resolves():
    from ssdartifact import REPO_ROOT

    broken = []
    for page in [*markers.pages(), REPO_ROOT / "ARTIFACT.md"]:
        for target in re.findall(r"\]\(([^)#\s]+)", page.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://")) and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO_ROOT)}: {target}")
    assert broken == []


def test_a_value_of_a_result_csv(tmp_path, docs, monkeypatch):
    values = tmp_path / "values.yaml"
    values.write_text("fastest:\n  data: results/cave/fig.csv\n  column: runtime_s\n  aggregate: min\n"
                      "  where: \"device == 'emu-a'\"\n  format: \".2f\"\n")
    monkeypatch.setattr(guide, "VALUES", values)
    root = results_tree(tmp_path / "run")
    (root / "results/cave").mkdir()
    (root / "results/cave/fig.csv").write_text("device,runtime_s\nemu-a,2.5\nemu-a,1.25\nemu-b,0.5\n")
    (docs / "time.md").write_text(PAGE + "Fastest on emu-a: <!--n:quick.value.fastest-->?<!--/n--> s.\n")
    guide.update("quick", root, docs)
    assert shown(docs)["quick.value.fastest"] == "1.25"
    assert guide.resolve("quick.value.not_declared") is None


def test_a_claims_status_and_summary_and_the_runs_day(tmp_path, docs):
    root = results_tree(tmp_path / "run")
    claims = root / "results/claims/claims.csv"
    claims.write_text(claims.read_text() + 'ace-4.8-x.y,4,x,1,fail,"3 of 4 rows | a; failing: z",,,q\n')
    (docs / "time.md").write_text("<!--n:quick.claim:ace-4.8-x.y:status-->?<!--/n-->, "
                                  "<!--n:quick.claim:ace-4.8-x.y:summary-->?<!--/n-->, "
                                  "<!--n:quick.run_date-->?<!--/n-->\n")
    guide.update("quick", root, docs)
    assert shown(docs) == {"quick.claim:ace-4.8-x.y:status": "fail",
                           "quick.claim:ace-4.8-x.y:summary": "3 of 4 rows \\| a", "quick.run_date": "2026-11-27"}
    (docs / "time.md").write_text("<!--n:quick.claim:no-such-claim:status-->?<!--/n-->\n")
    with pytest.raises(GuideError, match="claim 'no-such-claim' is not in the report"):
        guide.update("quick", root, docs)
