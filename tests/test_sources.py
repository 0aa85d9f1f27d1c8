"""Pinned external sources (ssdartifact.sources): a tarball is used only with its pinned sha256,
from GitHub when reachable, else from the local folder; anything else is refused and not kept.
Without them (and without the network) a profile runs all but the baselines' figures, which the
claims report and the document mark "not run" with the command that runs them."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.error
from pathlib import Path

import pytest

from ssdartifact import REPO_ROOT, claims, config, paper, sources
from ssdartifact.files import sha256_file

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def tarball(path: Path, top: str, text: str = "int main() {}\n") -> Path:
    data = text.encode()
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo(f"{top}/main.cc")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def pinned(tmp_path, monkeypatch):
    """A pin of a small tarball in a local folder, and no network."""
    folder = tmp_path / "sources"
    folder.mkdir()
    good = tarball(folder / f"tool-{COMMIT}.tar.gz", f"tool-{COMMIT}")
    pin = sources.Pin(name="tool", repository="someone/tool", commit=COMMIT, sha256=sha256_file(good),
                      license="MIT")
    monkeypatch.setattr(sources, "pin", lambda name: pin)
    monkeypatch.setenv(sources.SOURCES_ENV, str(folder))

    def unreachable(url, timeout):
        raise urllib.error.URLError("Could not resolve host")
    monkeypatch.setattr(sources.urllib.request, "urlopen", unreachable)
    return pin, folder


def test_the_local_folder_serves_a_pinned_tarball_when_github_is_unreachable(pinned, tmp_path):
    pin, folder = pinned
    fetched = sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)
    assert fetched.name == pin.archive and sha256_file(fetched) == pin.sha256
    tree = sources.unpack("tool", fetched, tmp_path / "tree")
    assert (tree / "main.cc").read_text() == "int main() {}\n"


def test_a_tarball_with_another_sha256_is_refused_and_not_kept(pinned, tmp_path):
    pin, folder = pinned
    tarball(folder / pin.archive, pin.top_directory, "int main() { return 1; }\n")  # same name, other bytes
    with pytest.raises(sources.SourceError, match="not the pinned one: refused") as refused:
        sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)
    assert "Could not resolve host" in str(refused.value) and sources.SOURCES_ENV in str(refused.value)
    assert not any(path.is_file() for path in (tmp_path / "downloads").rglob("*"))


def test_a_missing_tarball_names_where_it_was_looked_for(pinned, tmp_path):
    pin, folder = pinned
    (folder / pin.archive).unlink()
    with pytest.raises(sources.SourceError, match=f"{folder / pin.archive}: no such file"):
        sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)


def test_github_is_used_first_and_checked_like_any_other(pinned, tmp_path, monkeypatch):
    pin, folder = pinned
    served = (folder / pin.archive).read_bytes()
    (folder / pin.archive).unlink()
    asked = []

    def github(url, timeout):
        asked.append(url)
        return io.BytesIO(served)
    monkeypatch.setattr(sources.urllib.request, "urlopen", github)
    fetched = sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)
    assert asked == [f"https://codeload.github.com/someone/tool/tar.gz/{COMMIT}"]
    assert sha256_file(fetched) == pin.sha256
    monkeypatch.setattr(sources.urllib.request, "urlopen", lambda url, timeout: io.BytesIO(b"not the archive"))
    fetched.unlink()
    (folder / pin.archive).write_bytes(served)  # GitHub's other bytes are refused; the local copy is taken
    assert sha256_file(sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)) == pin.sha256


def test_a_tarball_without_its_top_folder_is_refused(pinned, tmp_path):
    pin, folder = pinned
    odd = tarball(tmp_path / "odd.tar.gz", "elsewhere")
    with pytest.raises(sources.SourceError, match=f"no top folder {pin.top_directory}/"):
        sources.unpack("tool", odd, tmp_path / "tree")


def test_the_shared_sources_match_their_pins():
    """The pins of repositories' commits in configs/sources.yaml are the tarballs of the shared
    sources folder (CI has it; GitHub is not reachable from it). A release's (Spark's, from PyPI,
    which is) need not be there."""
    folder = sources.local_folder()
    if not folder.is_dir() and not os.environ.get(sources.SOURCES_ENV):
        pytest.skip(f"no local sources folder at {folder}")
    for name in config.load("sources.yaml")["systems"]:
        pin = sources.pin(name)
        if pin.commit or (folder / pin.archive).exists():
            assert sha256_file(folder / pin.archive) == pin.sha256, name


def test_an_unknown_system_is_named():
    with pytest.raises(sources.SourceError, match="pins no source named 'nothing'.*graphchi"):
        sources.pin("nothing")


def test_where_a_source_would_come_from_is_found_without_fetching_it(pinned, tmp_path):
    pin, folder = pinned
    downloads = tmp_path / "downloads"
    assert sources.where_from("tool", downloads) == (str(folder / pin.archive), "")
    (folder / pin.archive).write_bytes(b"other bytes")
    found, why = sources.where_from("tool", downloads)
    assert found is None and "another sha256" in why and "Could not resolve host" in why and not downloads.exists()


def test_a_profile_whose_baselines_have_no_source_runs_without_their_figures(tmp_path, monkeypatch):
    """A figure runs with all its baselines or not at all; the CSVs it would have made are marked
    with why and the command that makes them."""
    from steps import cave

    monkeypatch.setattr(cave.baseline_build, "build_dir", lambda system: tmp_path / "build" / system)
    monkeypatch.setattr(cave.sources, "where_from", lambda system, downloads: (None, f"no source of {system}"))
    profile_cave = config.load_profile("quick")["cave"]
    unreachable = cave.unreachable_baselines(profile_cave)
    assert unreachable == {name: f"no source of {name}" for name in ("graphchi", "gridgraph", "mosaic", "graphx")}
    kept, not_run = cave.without_baselines(profile_cave, list(unreachable), "quick")
    assert sorted(kept["figures"]) == ["fig_5_13a", "fig_5_13b", "fig_5_5", "fig_5_8", "fig_5_9b"]
    assert sorted(not_run) == sorted(f"results/cave/{name}.csv" for name in (
        "fig_5_1b", "fig_5_6", "fig_5_7", "fig_5_9a", "fig_5_10", "fig_5_11", "fig_5_12", "table_5_2"))
    assert not_run["results/cave/fig_5_6.csv"] == {
        "why": "pinned sources unreachable (GraphChi, GridGraph, Mosaic, GraphX)",
        "fix": "SSD_SOURCES=<folder with the tarballs> make reproduce"}
    kept, not_run = cave.without_baselines(profile_cave, ["graphx"], "full")  # Figure 5.11 alone runs GraphX
    assert list(not_run) == ["results/cave/fig_5_11.csv"] and "fig_5_6" in kept["figures"]
    assert not_run["results/cave/fig_5_11.csv"]["fix"].endswith("make reproduce PROFILE=full")
    assert cave.without_baselines(profile_cave, [], "quick") == (profile_cave, {})
    (tmp_path / "build" / "graphchi").mkdir(parents=True)
    (tmp_path / "build" / "graphchi" / "built.json").write_text("{}")  # built already: no source needed
    assert "graphchi" not in cave.unreachable_baselines(profile_cave)
    assert cave.unreachable_baselines({"graph_size": "tiny", "repetitions": 1, "figures": {}}) == {}
    # found once, by the workflow's main process, and handed to each job's process, which asks nothing
    monkeypatch.setenv(cave.UNREACHABLE_ENV, "{}")
    found = cave.unreachable_baselines_of_this_run(profile_cave, main_process=True)
    assert list(found) == ["gridgraph", "mosaic", "graphx"]
    monkeypatch.setattr(cave.sources, "where_from", lambda system, downloads: pytest.fail("a job asked again"))
    assert cave.unreachable_baselines_of_this_run(profile_cave, main_process=False) == found


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No pinned tarball here (SSD_SOURCES an empty folder, nothing downloaded or built) and no
    network: every address refused at once."""
    from steps import cave

    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(sources.SOURCES_ENV, str(tmp_path / "empty"))
    monkeypatch.setattr(cave.baseline_build, "DOWNLOADS", tmp_path / "downloads")
    monkeypatch.setattr(cave.baseline_build, "build_dir", lambda system: tmp_path / "build" / system)

    def refused(request, timeout):
        raise urllib.error.URLError("Connection refused")
    monkeypatch.setattr(sources.urllib.request, "urlopen", refused)
    return tmp_path


def test_check_config_lets_a_profile_run_without_its_baselines_and_says_how_to_run_them(offline, monkeypatch,
                                                                                      capsys):
    from steps import __main__ as cli

    monkeypatch.setattr(cli.emulated, "check_emulation", lambda profile, progress: ([], []))  # not this test's
    assert cli.main(["check-config", "--profile", "quick"]) == 0
    said = capsys.readouterr().out
    assert "Not run: pinned sources unreachable (GraphChi, GridGraph, Mosaic, GraphX): fig_5_6," in said
    assert "Connection refused" in said
    assert said.splitlines()[-1] == "To run them: SSD_SOURCES=<folder with the tarballs> make reproduce"


# The workflow as Snakemake loads it, in this tree with nothing built (the offline fixture's, in
# another process): which CSVs it marks "not run", what it hands the claims and the document, and
# whether any job builds or runs a baseline.
LOAD_THE_WORKFLOW = """
import json, sys
from pathlib import Path
from cave.baselines import build
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

build.DOWNLOADS = Path(sys.argv[1]) / "downloads"
build.build_dir = lambda system: Path(sys.argv[1]) / "build" / system
with SnakemakeApi(OutputSettings()) as api:
    workflow = api.workflow(resource_settings=ResourceSettings(cores=1),
                            config_settings=ConfigSettings(config={"profile": sys.argv[2]}),
                            snakefile=Path("Snakefile"))._workflow
    print(json.dumps({"not_run": workflow.globals.get("NOT_RUN"),
                      "claims": getattr(workflow.get_rule("check_claims").params, "not_run", None),
                      "document": getattr(workflow.get_rule("write_document_sources").params, "not_run", None),
                      "builds": workflow.globals["CAVE_BASELINE_BUILDS"],
                      "drawn": sorted(workflow.globals["REPRODUCED"])}))
"""


def loaded_workflow(profile, folder, environment):
    """The workflow of `profile` as loaded in this tree, with `environment` and nothing built."""
    result = subprocess.run([sys.executable, "-c", LOAD_THE_WORKFLOW, str(folder), profile], cwd=REPO_ROOT,
                            env={**os.environ, **environment}, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_without_the_sources_or_the_network_the_workflow_runs_all_but_the_baselines(tmp_path):
    """SSD_SOURCES an empty folder and every address refused at once (a proxy that is not there):
    the quick profile plans no baseline, and hands the claims and the document what is not run."""
    (tmp_path / "empty").mkdir()
    dead = "http://127.0.0.1:9"  # the discard port: refused at once
    loaded = loaded_workflow("quick", tmp_path, {sources.SOURCES_ENV: str(tmp_path / "empty"), "https_proxy": dead,
                                                 "HTTPS_PROXY": dead, "no_proxy": "", "NO_PROXY": ""})
    assert loaded["builds"] == []
    assert "results/cave/fig_5_11.csv" in loaded["not_run"] and loaded["claims"] == loaded["document"] == \
        loaded["not_run"]
    assert "figures/generated/fig_5_6.pdf" not in loaded["drawn"] and "figures/generated/fig_5_8.pdf" in loaded["drawn"]
    shared = os.environ.get(sources.SOURCES_ENV)
    if shared and all((Path(shared) / sources.pin(s).archive).is_file() for s in ("graphchi", "gridgraph", "mosaic")):
        # with the tarballs (CI's folder), nothing changes: but GraphX's comes from PyPI, refused here
        loaded = loaded_workflow("quick", tmp_path, {"https_proxy": dead, "HTTPS_PROXY": dead})
        assert list(loaded["not_run"]) == ["results/cave/fig_5_11.csv"]


def test_the_claims_report_and_the_document_mark_what_is_not_run_and_how_to_run_it(offline, tmp_path):
    """The marks of a run without the baselines' sources, in the claims report (whose lines `make
    reproduce` prints last) and in the PDF: the coverage page, each figure's page, each claim."""
    from steps import cave

    profile_cave = config.load_profile("quick")["cave"]
    _, not_run = cave.without_baselines(profile_cave, list(cave.unreachable_baselines(profile_cave)), "quick")
    fix = "SSD_SOURCES=<folder with the tarballs> make reproduce"
    rows = claims.evaluate_all(config.load("claims")["claims"], available=set(), profile="quick", not_run=not_run)
    report = tmp_path / "report"
    report.mkdir()
    claims.write_report(rows, report / "claims.csv", report / "report.md", report / "report.html", not_run=not_run)
    marked = [r for r in rows if r["detail"].startswith("not run: pinned sources unreachable")]
    assert {r["id"] for r in marked} >= {"cave-5.1b-bfs-faster-than-graphchi", "cave-table-5.2-less-space-than-mosaic",
                                         "cave-5.6-blocked-flat-in-cache-size"}
    assert all(r["status"] == "not run" and r["detail"].endswith(f"to run it: {fix}") for r in marked)
    lines = (report / "report.md").read_text().splitlines()
    assert lines[4] == (f"Not run: pinned sources unreachable (GraphChi, GridGraph, Mosaic, GraphX): {len(marked)} "
                        "claims and the figures drawn from the same results.")
    assert lines[5] == f"To run them: `{fix}`"
    assert f"To run them: <code>{fix.replace('<', '&lt;').replace('>', '&gt;')}</code>" in \
        (report / "report.html").read_text()

    # the document of a build that made nothing else, typeset with the artifact's own preamble
    (tmp_path / "paper").mkdir()
    shutil.copy(REPO_ROOT / "paper/artifact.tex", tmp_path / "paper/artifact.tex")
    paper.write_document(config.load("inventory"), report / "claims.csv", tmp_path / "paper/generated", set(),
                         not_run)
    chapter = (tmp_path / "paper/generated/chapter_5.tex").read_text()
    assert r"\notrun{Figure 5.6}" in chapter and r"\notrun{Table 5.2}" in chapter
    assert r"\notrun{Figure 5.8}" not in chapter
    if shutil.which("latexmk") is None:
        pytest.skip("latexmk is not installed (make setup installs it)")
    subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "-outdir=paper/build",
                    "paper/artifact.tex"], cwd=tmp_path, capture_output=True, check=True)
    text = " ".join(subprocess.run(["pdftotext", str(tmp_path / "paper/build/artifact.pdf"), "-"], capture_output=True,
                                   text=True, check=True).stdout.split())
    title = text[:text.index("Coverage Item")]
    assert "Not run: pinned sources unreachable (GraphChi, GridGraph, Mosaic, GraphX): Figure 5.1," in title
    assert f"To run them: {fix} Beside each figure" in title
    assert "Figure 5.6 — not run: pinned sources unreachable (GraphChi, GridGraph, Mosaic, GraphX)" in text
    assert f"To run it: {fix}" in text


def test_a_release_tarball_is_pinned_by_its_address_and_top_folder(tmp_path, monkeypatch):
    """Spark's release for Python (GraphX) comes from PyPI's address, not from a GitHub commit."""
    folder = tmp_path / "sources"
    folder.mkdir()
    good = tarball(folder / "tool-1.0.tar.gz", "tool-1.0")
    pin = sources.Pin(name="tool", release_url="https://example.org/files/tool-1.0.tar.gz", top_folder="tool-1.0",
                      sha256=sha256_file(good), license="MIT")
    assert (pin.archive, pin.url, pin.what) == ("tool-1.0.tar.gz", "https://example.org/files/tool-1.0.tar.gz",
                                                "tool-1.0.tar.gz")
    monkeypatch.setattr(sources, "pin", lambda name: pin)
    monkeypatch.setenv(sources.SOURCES_ENV, str(folder))
    tree = sources.unpack("tool", sources.fetch("tool", tmp_path / "downloads", say=lambda _: None), tmp_path / "t")
    assert tree.name == "tool-1.0" and (tree / "main.cc").is_file()


@pytest.mark.parametrize("entry", [
    {"repository": "a/b", "commit": COMMIT, "release_url": "https://x.org/a.tar.gz", "top_folder": "a"},  # both
    {"repository": "a/b"},                                     # a repository without its commit
    {"release_url": "https://x.org/a.tar.gz"},                 # a release without its top folder
])
def test_a_pin_is_a_commit_or_a_release_whole(entry):
    document = {"local_folder": "sources",
                "systems": {"tool": {**entry, "sha256": "0" * 64, "license": "MIT"}}}
    with pytest.raises(config.ConfigError):
        config.validate(document, config.schema_name_for("sources.yaml"), "configs/sources.yaml")


def test_a_part_of_a_commits_tree_comes_from_the_local_folder_only(tmp_path, monkeypatch):
    """The authors' ReStore code is a tarball of part of its commit's tree: no server offers it."""
    folder = tmp_path / "sources"
    folder.mkdir()
    good = tarball(folder / f"tool-{COMMIT}-cpp.tar.gz", f"tool-{COMMIT}")
    pin = sources.Pin(name="tool", repository="someone/tool", commit=COMMIT, archive_name=good.name,
                      sha256=sha256_file(good), license="none stated")
    assert (pin.archive, pin.url) == (good.name, None)
    monkeypatch.setattr(sources, "pin", lambda name: pin)
    monkeypatch.setenv(sources.SOURCES_ENV, str(folder))

    def no_download(*args, **kwargs):
        raise AssertionError("a part of a tree is never downloaded")
    monkeypatch.setattr(sources.urllib.request, "urlopen", no_download)
    assert sources.where_from("tool", tmp_path / "downloads") == (str(good), "")
    assert sources.fetch("tool", tmp_path / "downloads", say=lambda _: None).name == good.name
    good.unlink()
    found, why = sources.where_from("tool", tmp_path / "downloads2")
    assert found is None and "no such file" in why
