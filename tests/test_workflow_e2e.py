"""End to end, as a new user would: the README's commands in a fresh copy of the
repository (slow: run by `make test-e2e`, which `make test` and CI include, but for the quick
profile's check, which `make test-quick` runs)."""

import csv
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from ssdartifact import REPO_ROOT, config

pytestmark = pytest.mark.e2e


def claim_outcomes(clone) -> dict[str, str]:
    with open(clone / "results/claims/claims.csv", newline="") as handle:
        return {row["id"]: row["status"] for row in csv.DictReader(handle)}


def assert_only_known_failures(clone, profile):
    """Every failing claim is one configs/claims/ says may fail in this profile (may_fail, with the
    reason the report prints); every other claim the profile runs must pass."""
    may_fail = {c["id"] for c in config.load("claims")["claims"]
                if profile in c.get("may_fail", {}).get("profiles", [])}
    with open(clone / "results/claims/claims.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    failed = {r["id"] for r in rows if r["status"] == "fail"}
    # what each unexpected failure measured: CI's log is often all a reader of a failed run has
    measured = "\n".join(f"{r['id']}: {r['measured']}" for r in rows if r["id"] in failed - may_fail)
    assert failed <= may_fail, f"claims failed unexpectedly: {sorted(failed - may_fail)}\n{measured}"
    assert all(r["known_reason"] for r in rows if r["status"] == "fail")
    report = (clone / "results/claims/report.md").read_text()
    assert "0 unexpected" in report.splitlines()[2], report.splitlines()[2]


def make(clone, *targets, profile="ci", **environment):
    """The ci profile measures nothing, so all its outputs, the PDF included, have committed checksums."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")} | environment
    result = subprocess.run(["make", *targets, f"PROFILE={profile}"], cwd=clone, env=env, capture_output=True,
                            text=True)
    return result.returncode, result.stdout + result.stderr


def pages_with_an_empty_top(pdf: Path, fraction: float = 1 / 3) -> list[tuple[int, float]]:
    """Pages (the title page excepted) whose first ink lies below `fraction` of the page: a float
    set alone on a page and centred, say. Rendered at 20 dpi in grey (PGM), read row by row."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["pdftoppm", "-gray", "-r", "20", str(pdf), f"{tmp}/page"], check=True)
        empty = []
        for image in sorted(Path(tmp).glob("page-*.pgm")):
            data = image.read_bytes()
            _, width, height, _, _ = data.split(maxsplit=4)  # P5 width height maxval pixels
            width, height = int(width), int(height)
            pixels = data[len(data) - width * height:]
            # ink: any row darker than 200; at 20 dpi the provenance's grey text is about 170 at its darkest
            first_ink = next((row for row in range(height) if min(pixels[row * width:(row + 1) * width]) < 200), height)
            page = int(image.stem.split("-")[1])
            if page > 1 and first_ink > fraction * height:
                empty.append((page, round(first_ink / height, 2)))
        return empty


def test_reproduce_from_a_clean_tree(clone):
    code, out = make(clone, "reproduce")
    assert code == 0, out[-3000:]
    assert "document:      paper/build/artifact.pdf" in out
    assert re.search(r"claims: +\d+ passed, \d+ failed \(\d+ known at this scale, 0 unexpected\), \d+ not run", out)
    assert_only_known_failures(clone, "ci")
    text = subprocess.run(["pdftotext", "-l", "1", str(clone / "paper/build/artifact.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert "30 of 56 figures" in text and "7 of 14 tables" in text
    assert pages_with_an_empty_top(clone / "paper/build/artifact.pdf") == []
    for sidecar in ("results/pio_model/fig_3_2.csv.json", "figures/generated/fig_3_2.pdf.json"):
        assert (clone / sidecar).exists()
    assert (clone / "results/benchmarks/draw_figure/fig_3_2.tsv").exists()


def test_a_second_run_redoes_nothing(clone):
    code, out = make(clone, "reproduce")
    assert code == 0 and "Nothing to be done" in out, out[-2000:]


def test_the_html_report_opens_in_a_browser_and_shows_every_figure(clone):
    """Snakemake's report (make report) in a real headless Chromium, offline: it loads without a
    console error, holds one picture per figure the profile draws, each a real image with its
    caption, and clicking through the menu shows one."""
    from browser import Browser, chromium
    if chromium() is None:
        pytest.skip("chromium is not installed (Debian: chromium)")
    code, out = make(clone, "report")
    assert code == 0, out[-3000:]
    figures = sorted(p.stem for p in (clone / "figures/generated").glob("*.pdf"))
    browser = Browser()
    try:
        browser.open(clone / "results/report/report.html")
        shown = browser.evaluate("""(async () => {
            const entries = Object.entries(results).filter(([path]) => path.endsWith(".png"));
            const sizes = await Promise.all(entries.map(([path, entry]) => new Promise(done => {
                const picture = new Image();
                picture.onload = () => done([path, picture.naturalWidth, entry.caption || ""]);
                picture.onerror = () => done([path, 0, ""]);
                picture.src = entry.data_uri;
            })));
            return sizes;
        })()""")
        claims = browser.evaluate("Object.keys(results)")
        clicked = browser.evaluate("""(async () => {
            const pause = () => new Promise(done => setTimeout(done, 300));
            const link = text => [...document.querySelectorAll("a")].find(a => a.textContent.trim() === text);
            link("Figures").click(); await pause();
            const view = document.querySelector("td div[role=group] a");
            view.click(); await pause();
            const picture = document.querySelector("img[src^='data:image/png']");
            return picture ? picture.naturalWidth : 0;
        })()""")
    finally:
        browser.close()
    assert browser.errors == [], browser.errors
    assert sorted(Path(path).stem for path, *_ in shown) == figures
    assert all(width > 100 and "Provenance" in caption for _, width, caption in shown), shown
    assert "results/claims/report.html" in claims
    assert clicked > 100

def test_outputs_match_the_committed_manifest(clone):
    code, out = make(clone, "verify")
    assert code == 0 and "verify: OK" in out, out[-3000:]


def test_verify_names_an_altered_file_and_rebuilds_it_once_deleted(clone):
    """A rebuild from a clean tree is byte-identical: the reproduce above matched the committed
    manifest, which another run on another machine wrote, and so do the docker and SLURM lanes'
    runs from `make clean`. Here: what verify rebuilds, a chain of steps (a figure's table, the
    figure, the document), matches too, and leaves the run's record alone."""
    figure = clone / "figures/generated/fig_3_1.pdf"
    table, document = clone / "results/pio_model/fig_3_1.csv", clone / "paper/build/artifact.pdf"
    record = (clone / "results/runs/ci.json").read_text()  # the last `make reproduce`'s
    original = figure.read_bytes()
    figure.write_bytes(original + b"\n")
    try:
        code, out = make(clone, "verify")
        assert code != 0
        assert "changed: figures/generated/fig_3_1.pdf" in out
        assert "delete it" in out
        for made in (figure, table, document):  # as verify's message says: the next verify regenerates it
            made.unlink()
        code, out = make(clone, "verify")
        assert code == 0 and "verify: OK" in out, out[-3000:]
        assert figure.read_bytes() == original and table.exists() and document.exists()
        # a rebuild of some targets is not a run of the profile: the guide's times stay the reproduce's
        assert (clone / "results/runs/ci.json").read_text() == record
    finally:
        figure.write_bytes(original)


def test_verify_names_a_csv_edited_by_hand_and_draws_nothing_from_it(clone):
    """A CSV edited after the run, its header damaged, is newer than the figure drawn from it: verify
    names it, and what to do, before it builds anything; the figure is not drawn from it."""
    table, figure = clone / "results/pio_model/fig_3_1.csv", clone / "figures/generated/fig_3_1.pdf"
    original, made = table.read_bytes(), table.stat()
    drawn = figure.stat().st_mtime_ns
    table.write_bytes(b"damaged" + original)
    try:
        code, out = make(clone, "verify")
        assert code != 0
        assert "changed: results/pio_model/fig_3_1.csv differs from checksums/ci.sha256" in out
        assert "changed after the run that made it" in out and "delete it and run `make verify` again" in out
        assert "WorkflowError" not in out and figure.stat().st_mtime_ns == drawn
    finally:
        table.write_bytes(original)
        os.utime(table, ns=(made.st_atime_ns, made.st_mtime_ns))  # as made: nothing to redraw later


def test_a_bad_config_stops_before_anything_runs(clone):
    grid = clone / "configs/experiments/pio_model.yaml"
    original = grid.read_text()
    grid.write_text(original.replace("alpha: 4\n", "alpha: 0.5\n"))
    shutil.rmtree(clone / "results/pio_model")
    try:
        code, out = make(clone, "reproduce")
        assert code != 0
        assert "configs/experiments/pio_model.yaml: key fig_3_4.alpha: 0.5 is out of range; it must be >= 1" in out
        assert not (clone / "results/pio_model").exists(), "nothing may run on a bad config"
        direct = subprocess.run([str(clone / ".venv/bin/snakemake"), "-n", "--cores", "1"], cwd=clone,
                                capture_output=True, text=True)
        assert direct.returncode != 0 and "key fig_3_4.alpha" in direct.stdout + direct.stderr
    finally:
        grid.write_text(original)


def test_without_the_baselines_sources_the_rest_runs_and_the_last_line_says_how_to_run_them(clone, tmp_path):
    """No pinned tarball (SSD_SOURCES an empty folder) and no network (every address refused at once,
    by a proxy that is not there): the ci profile with Figure 5.1B's comparison runs all but the
    figure, which the document and the claims report mark, and `make reproduce` ends with the line
    that runs it. (With the sources, the ci profile's outputs are the manifest's: the tests above.)"""
    profile = (clone / "configs/profiles/ci.yaml").read_text().replace("name: ci\n", "name: ci-offline\n")
    profile = profile.replace("\ndevices: []\n", "\ndevices: [emu-pcie]\n").replace(
        "  figures: {}\n", "  figures: {fig_5_1b: {devices: [emu-pcie]}}\n", 1)
    (clone / "configs/profiles/ci-offline.yaml").write_text(profile)
    dead = "http://127.0.0.1:9"
    code, out = make(clone, "reproduce", profile="ci-offline", SSD_SOURCES=str(tmp_path), https_proxy=dead,
                     HTTPS_PROXY=dead, no_proxy="", NO_PROXY="")
    assert code == 0, out[-3000:]
    fix = "SSD_SOURCES=<folder with the tarballs> make reproduce PROFILE=ci-offline"
    lines = out.splitlines()  # the last ones it prints (after Snakemake's, on stderr here)
    claims = next(number for number, line in enumerate(lines) if line.startswith("  claims:"))
    assert lines[claims + 1:claims + 3] == [
        "  not run:       pinned sources unreachable (GraphChi, GridGraph, Mosaic): 3 claims and the figures drawn "
        "from the same results.", f"  to run them:   {fix}"]
    assert not (clone / "results/cave/baselines").exists() and not (clone / "results/cave/fig_5_1b.csv").exists()
    with open(clone / "results/claims/claims.csv", newline="") as handle:
        marked = {r["id"]: r["detail"] for r in csv.DictReader(handle) if r["id"].startswith("cave-5.1b")}
    assert len(marked) == 3 and all(detail.startswith("not run: pinned sources unreachable (GraphChi, GridGraph, "
                                                      f"Mosaic); to run it: {fix}") for detail in marked.values())
    text = " ".join(subprocess.run(["pdftotext", str(clone / "paper/build/artifact.pdf"), "-"], capture_output=True,
                                   text=True, check=True).stdout.split())
    assert f"Not run: pinned sources unreachable (GraphChi, GridGraph, Mosaic): Figure 5.1. To run them: {fix}" in text
    assert "Figure 5.1 — not run: pinned sources unreachable (GraphChi, GridGraph, Mosaic)" in text


def keep_for_review(clone, name):
    """The run's document, claims report, each job's time and the run's record outlive the copy,
    whatever the checks below say (CI uploads results/e2e/: a failed run's report is what a reader
    wants, and `make guide` can take the guide's numbers from it: steps guide update --results)."""
    keep = REPO_ROOT / "results/e2e" / name
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir(parents=True)
    if (clone / "paper/build/artifact.pdf").exists():
        shutil.copy2(clone / "paper/build/artifact.pdf", keep / "artifact.pdf")
    if (clone / "results").is_dir():  # all but the raw measurements and the logs: about 3 MB
        shutil.copytree(clone / "results", keep / "results", ignore=shutil.ignore_patterns("raw", "logs"))


# The claims the lab profile measures (Chapters 2 and 5 on its emulated SSDs): each must run and pass.
# (Figure 5.8's flat part is not among them: the lab's 64 threads stay below emu-pcie's k_r.)
LAB_MEASURED_CLAIMS = ("pio-emussd-alpha-recovered", "pio-emussd-k-recovered", "pio-bandwidth-grows-until-saturation",
                       "pio-latency-flat-until-knee", "cave-5.8-bfs-faster-until-k-r")


@pytest.mark.wall_clock
@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="/dev/fuse is absent: the lab profile needs emussd")
def test_the_lab_profile_measures_its_emulated_ssds(clone):
    """The measured run that `make test` (and so CI) makes from a fresh copy: the lab profile
    characterizes an emulated SSD and runs CAVE's concurrency sweep on another, then checks the
    claims and the deterministic outputs' bytes (the quick profile's own check, `make test-quick`,
    takes some 40 minutes alone: docs/tests-and-ci.md)."""
    shutil.rmtree(clone / "results/claims", ignore_errors=True)
    (clone / "paper/build/artifact.pdf").unlink(missing_ok=True)
    code, out = make(clone, "reproduce", profile="lab")
    keep_for_review(clone, "lab")
    assert code == 0, out[-3000:]
    assert_only_known_failures(clone, "lab")
    outcomes = claim_outcomes(clone)
    assert {claim: outcomes.get(claim) for claim in LAB_MEASURED_CLAIMS} == dict.fromkeys(LAB_MEASURED_CLAIMS, "pass")
    assert list((clone / "results/raw/pio/emu-optane").glob("*.json")), "fio's raw JSON is kept"
    for device in ("emu-optane", "emu-pcie"):
        assert not os.path.ismount(clone / f"scratch/emussd/{device}/mnt"), "the emulated SSD must be unmounted"
    assert pages_with_an_empty_top(clone / "paper/build/artifact.pdf") == []
    code, out = make(clone, "verify", profile="lab")
    assert code == 0 and "verify: OK" in out, out[-2000:]


@pytest.mark.quick_profile
@pytest.mark.wall_clock
@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="/dev/fuse is absent: the quick profile needs emussd")
def test_the_quick_profile_measures_an_emulated_ssd(clone):
    # what an earlier test's profile left must not pass for this run's in the review copy
    shutil.rmtree(clone / "results/claims", ignore_errors=True)
    (clone / "paper/build/artifact.pdf").unlink(missing_ok=True)
    code, out = make(clone, "reproduce", profile="quick")
    keep_for_review(clone, "quick")
    assert code == 0, out[-3000:]
    # Not run: the two flash-only claims (the quick profile has no flash device), Figure 6.12's
    # largest group (10M pages: the full profile only) and GraphChi's WCC in Figure 5.11 (quick runs
    # GridGraph, Mosaic and GraphX).
    outcomes = claim_outcomes(clone)
    assert sorted(c for c, status in outcomes.items() if status == "not run") == [
        "cave-5.11a-wcc-faster-than-graphchi",
        "pio-alpha-at-least-1-on-flash", "pio-alpha-in-steady-state-on-flash",
        "restore-6.12-normalized-latency-at-10m-pages"]
    assert_only_known_failures(clone, "quick")
    # every number the guide gives about the quick profile is computed from this run
    guide = subprocess.run([".venv/bin/python", "-m", "steps", "guide", "update", "--profile", "quick"], cwd=clone,
                           capture_output=True, text=True)
    assert guide.returncode == 0, guide.stderr
    guide = subprocess.run([".venv/bin/python", "-m", "steps", "guide", "check", "--results", ".", "--only", "quick"],
                           cwd=clone,
                           capture_output=True, text=True)
    assert guide.returncode == 0, guide.stderr
    for figure in ("fig_4_2", "fig_4_8", "fig_4_9", "fig_4_10", "fig_4_11", "fig_4_12", "fig_4_13", "fig_4_14",
                   "fig_4_15", "fig_4_16", "fig_5_1", "fig_5_5", "fig_5_6", "fig_5_7", "fig_5_8", "fig_5_9", "fig_5_10",
                   "fig_5_11", "fig_5_12", "fig_5_13", "fig_6_4", "fig_6_5", "fig_6_7", "fig_6_8", "fig_6_9",
                   "fig_6_10", "fig_6_11", "fig_6_12", "fig_6_13"):
        assert (clone / f"figures/generated/{figure}.pdf").exists(), figure
    for table in ("table_4_3", "table_5_1", "table_5_2", "table_6_5", "table_6_6"):
        assert (clone / f"paper/generated/{table}.tex").exists(), table
    runs = list(csv.DictReader(open(clone / "results/ace/runs.csv")))
    assert {r["device"] for r in runs} == {"emu-pcie-db", "emu-sata-db", "emu-virtual-db", "emu-optane-db",
                                           "local-disk"}
    assert not os.path.ismount(clone / "scratch/emussd/emu-pcie-db/mnt"), "the emulated SSD must be unmounted"
    assert (clone / "figures/generated/supp_emussd_saturation.pdf").exists()
    assert not os.path.ismount(clone / "scratch/emussd/emu-saturation/mnt"), "the emulated SSD must be unmounted"
    assert (clone / "results/emussd/saturation_device_stats.json").exists()
    raw = list((clone / "results/raw/emussd/saturation").glob("*.json"))
    assert len(raw) == 22, "one raw fio JSON per point"
    for device in ("local-disk", "emu-virtual"):  # the characterization (Chapter 2)
        assert (clone / f"results/pio/devices/{device}/alpha_k.csv").exists()
        assert list((clone / f"results/raw/pio/{device}").glob("*.json")), "fio's raw JSON is kept"
        assert not os.path.ismount(clone / f"scratch/emussd/{device}/mnt")
    assert not list((clone / "scratch/local-disk").glob("*/*")), "the file device's test files are removed"
    for item in ("fig_2_4.pdf", "fig_2_7.pdf", "fig_2_8.pdf", "fig_3_5.pdf", "supp_interference.pdf"):
        assert (clone / "figures/generated" / item).exists()
    # Figure 2.7: the disk through a raw loop device and through ext4 on another, at 4 and 8 KiB
    paired = list(csv.DictReader(open(clone / "results/pio/raw_vs_fs.csv")))
    assert {(r["device"], r["access"], r["block_size"]) for r in paired} == {
        (device, access, size) for device, access in (("loop-raw", "without file system"),
                                                      ("loop-ext4", "with file system"))
        for size in ("4096", "8192")}
    attached = subprocess.run(["losetup", "--list", "--noheadings", "--output", "BACK-FILE"], capture_output=True,
                              text=True).stdout
    assert str(clone / "scratch/loop") not in attached, "the loop devices must be detached"
    assert (clone / "paper/generated/table_2_2.tex").exists()
    assert pages_with_an_empty_top(clone / "paper/build/artifact.pdf") == []
    code, out = make(clone, "verify", profile="quick")
    assert code == 0 and "verify: OK" in out, out[-2000:]


def _docker_engine() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True).returncode == 0
    except OSError:
        return False


def _inspect_a_running_step(clone, step, running) -> tuple[dict, list[list[str]], dict]:
    """docker inspect of a container of `step` of the workflow in `clone`, its processes (uid, host
    pid, command) and the step process's /proc status, caught while it runs (polled while `running()`)."""
    labels = ["--filter", f"label=ssd-artifact.step={step}", "--filter", f"label=ssd-artifact.repository={clone}"]
    while running():
        for container in subprocess.run(["docker", "ps", "-q", *labels], capture_output=True, text=True).stdout.split():
            try:
                top = subprocess.run(["docker", "top", container, "-eo", "uid,pid,args"], capture_output=True,
                                     text=True, check=True).stdout.splitlines()[1:]
                processes = [line.split(None, 2) for line in top]
                # the step (python -m steps run NAME): neither docker-init nor setpriv, which exec it
                pid = next(p[1] for p in processes if f"steps run {step}" in p[2] and p[2].startswith("python"))
                status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
                inspected = subprocess.run(["docker", "inspect", container], capture_output=True, text=True, check=True)
                return json.loads(inspected.stdout)[0], processes, {k: v.strip() for k, v in status.items()}
            except (subprocess.CalledProcessError, StopIteration, OSError):
                continue  # it ended, or has not yet become the step: the next one
        time.sleep(0.2)
    return {}, [], {}


@pytest.mark.docker
@pytest.mark.skipif(not _docker_engine(), reason="no Docker engine here: the docker runtime is not tested")
def test_the_docker_runtime_gives_the_same_bytes_hardened_and_verify_checks_them(clone):
    """Every step in its system's image, hardened (one step's container inspected while it runs),
    its outputs the host user's; then a plain `make verify` (the profile's native runtime) checks
    the docker outputs' bytes, rerunning none of them."""
    from ssdartifact.containers.hardened import step_user
    from steps import runtime

    assert make(clone, "clean")[0] == 0
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    reproduce = subprocess.Popen(["make", "reproduce", "RUNTIME=docker", "PROFILE=ci"], cwd=clone, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    inspected, processes, status = _inspect_a_running_step(clone, "pio_model_curve",
                                                           lambda: reproduce.poll() is None)
    out = reproduce.communicate()[0]
    assert reproduce.returncode == 0, out[-3000:]
    assert inspected, "no container of pio_model_curve was seen running"
    host = inspected["HostConfig"]
    uid = step_user()[0]
    assert status["Uid"].split()[:2] == [str(uid)] * 2 and uid != 0, processes  # the step: not root
    assert all(p[0] == str(uid) for p in processes if not p[2].startswith("/sbin/docker-init")), processes
    assert status["NoNewPrivs"] == "1"
    added = {capability.removeprefix("CAP_") for capability in host["CapAdd"] or []}  # Docker writes CAP_SETUID
    assert host["CapDrop"] == ["ALL"] and added <= {"SETUID", "SETGID", "DAC_OVERRIDE"}, added
    assert int(status["CapEff"], 16) & ~(1 << 1) == 0, "the step holds no capability but DAC_OVERRIDE (root host)"
    assert host["SecurityOpt"] == ["no-new-privileges"] and host["ReadonlyRootfs"] is True
    assert host["Tmpfs"] == {"/tmp": "rw,exec,nosuid,nodev"} and host["NetworkMode"] == "none"
    assert (host["NanoCpus"], host["Memory"]) == (10**9, runtime.DEFAULT_MEMORY_MB << 20)  # 1 thread, none declared
    writable = sorted(m["Destination"] for m in inspected["Mounts"] if m["RW"])
    assert writable == [str(clone / "results/logs/pio_model_curve"), str(clone / "results/pio_model")]
    assert [m["RW"] for m in inspected["Mounts"] if m["Destination"] == str(clone)] == [False]
    assert (clone / "paper/build/artifact.pdf").stat().st_uid == os.getuid()
    written = [p for top in ("results", "figures", "paper", "scratch", "systems") for p in (clone / top).rglob("*")]
    assert not [p for p in written if p.lstat().st_uid != os.getuid()], "every file the host user's"
    sidecar = json.loads((clone / "figures/generated/fig_3_2.pdf.json").read_text())
    assert sidecar["runtime"]["kind"] == "docker" and sidecar["runtime"]["image"].startswith("ssd-artifact/report:")
    assert sidecar["host"]["hostname"] == socket.gethostname()
    assert re.fullmatch("[0-9a-f]{64}", sidecar["runtime"]["container_id"])

    made = {p: p.stat().st_mtime_ns for p in written if p.is_file()}
    code, out = make(clone, "verify")
    assert code == 0 and "verify: OK" in out, out[-3000:]
    made_by = out[out.index("made by: "):].splitlines()[0]
    assert "docker ssd-artifact/" in made_by and "native" not in made_by, made_by
    checked = (clone / "results/checksums/ci.files").read_text().split()
    rerun = [path for path in checked if made.get(clone / path) != (clone / path).stat().st_mtime_ns]
    assert len(checked) > 30 and rerun == [], f"verify reran steps that the docker runtime had made: {rerun}"


@pytest.mark.docker
@pytest.mark.skipif(not _docker_engine() or not os.path.exists("/dev/fuse"),
                    reason="needs a Docker engine and /dev/fuse: the characterization is not tested in docker mode")
def test_the_characterization_runs_in_the_pio_image_with_an_emulated_ssd(clone):
    """Chapter 2 in docker mode: fio in the pio image, the emulated SSD mounted inside it (small, fast profile)."""
    (clone / "configs/profiles/docker-char.yaml").write_text(
        "name: docker-char\ndescription: one emulated SSD characterized in docker mode (test)\nruntime: docker\n"
        "devices: [emu-optane]\nfio_point: {runtime_ms: 200, ramp_ms: 50}\n"
        "characterize: {devices: [emu-optane], max_threads: 16, random_block_sizes: [4096]}\n")
    code, out = make(clone, "reproduce", profile="docker-char")
    assert code == 0, out[-3000:]
    sidecar = json.loads((clone / "results/pio/devices/emu-optane/alpha_k.csv.json").read_text())
    assert sidecar["runtime"]["kind"] == "docker" and sidecar["runtime"]["image"].startswith("ssd-artifact/pio:")
    assert (clone / "figures/generated/fig_2_4.pdf").exists()
    assert not os.path.ismount(clone / "scratch/emussd/emu-optane/mnt"), "the emulated SSD must be unmounted"


@pytest.mark.docker
@pytest.mark.skipif(not _docker_engine(), reason="no Docker engine here: the ace image is not tested")
def test_the_ace_server_builds_and_runs_in_its_image(clone):
    """Thesis Chapter 4's PostgreSQL built by the workflow in the ace image, then started there
    (as an unprivileged user) with LRU-WSR, ACE and prefetching under pgbench."""
    for record in ("server.json", "server.json.json"):  # a native build of an earlier test is not this one
        (clone / "results/ace" / record).unlink(missing_ok=True)
    code, out = make(clone, "ace-server", "RUNTIME=docker")
    assert code == 0, out[-3000:]
    record = json.loads((clone / "results/ace/server.json").read_text())
    sidecar = json.loads((clone / "results/ace/server.json.json").read_text())
    assert sidecar["runtime"]["image"].startswith("ssd-artifact/ace:")
    script = (
        "import json, tempfile; from pathlib import Path; from ace.server import Server\n"
        "root = Path(tempfile.mkdtemp(dir='/tmp')); root.chmod(0o755)\n"
        f"settings = {{'shared_buffers': '1MB', 'buffer_replacement_policy': 'lru_wsr', 'ace': True,"
        f" 'ace_prefetch': 'history'}}\n"
        f"with Server(Path('{record['install']}').resolve(), root / 'pg', settings) as server:\n"
        "    server.client(['pgbench', '-i', '-q', '-s', '2', 'postgres'])\n"
        "    server.client(['pgbench', '-c', '2', '-T', '3', 'postgres'])\n"
        "    print(json.dumps(server.counters()))\n")
    run = subprocess.run([str(clone / ".venv/bin/python"), "-m", "ssdartifact.containers", "run", "ace", "--",
                          "python", "-c", script], cwd=clone, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    counters = json.loads(run.stdout.strip().splitlines()[-1])
    assert counters["ace_batches"] > 0 and counters["misses"] > 0


@pytest.mark.docker
@pytest.mark.skipif(not _docker_engine() or not os.path.exists("/dev/fuse"),
                    reason="needs a Docker engine and /dev/fuse: Chapter 4's runs are not tested in docker mode")
def test_the_ace_experiments_run_in_the_ace_image_with_an_emulated_ssd(clone):
    """Chapter 4's driver and workloads in docker mode: the patched server in the ace image with its
    data on an emulated SSD mounted inside it (one small grid: Figure 4.13 on one device)."""
    (clone / "configs/profiles/docker-ace.yaml").write_text(
        "name: docker-ace\ndescription: Figure 4.13 on one emulated SSD in docker mode (test)\nruntime: docker\n"
        "devices: [emu-optane-db, local-disk]\nfio_point: {runtime_ms: 200, ramp_ms: 50}\n"
        "characterize: {devices: [], max_threads: 2}\nace_server: true\n"
        "ace: {scale: 1, clients: 1, transactions: 300, warmup_transactions: 150, repetitions: 1,\n"
        "      figures: {fig_4_13: {devices: [emu-optane-db], n_ws: [1, 5], policies: [lru]}}}\n")
    code, out = make(clone, "reproduce", profile="docker-ace")
    assert code == 0, out[-3000:]
    sidecar = json.loads((clone / "results/ace/devices/emu-optane-db/runs.csv.json").read_text())
    assert sidecar["runtime"]["kind"] == "docker" and sidecar["runtime"]["image"].startswith("ssd-artifact/ace:")
    rows = list(csv.DictReader(open(clone / "results/ace/fig_4_13.csv")))
    assert sorted((r["variant"], r["n_w"]) for r in rows) == [("ace", "1"), ("ace", "5"), ("baseline", "5")]
    assert all(float(r["runtime_s"]) > 0 for r in rows)
    assert (clone / "figures/generated/fig_4_13.pdf").exists()
    assert not os.path.ismount(clone / "scratch/emussd/emu-optane-db/mnt"), "the emulated SSD must be unmounted"


@pytest.mark.docker  # 4 concurrent reads beat 1 by far more than a busy machine slows either
@pytest.mark.skipif(not _docker_engine() or not os.path.exists("/dev/fuse"),
                    reason="needs a Docker engine and /dev/fuse: Chapter 5's runs are not tested in docker mode")
def test_the_cave_experiments_run_in_the_cave_image_with_an_emulated_ssd(clone):
    """CAVE in docker mode: the engine built in the cave image, a graph on an emulated SSD mounted
    inside it, O_DIRECT reads from 1 and 4 threads (Figure 5.8 on one device, a tiny graph)."""
    (clone / "configs/profiles/docker-cave.yaml").write_text(
        "name: docker-cave\ndescription: Figure 5.8 on one emulated SSD in docker mode (test)\nruntime: docker\n"
        "devices: [emu-optane]\nfio_point: {runtime_ms: 200, ramp_ms: 50}\n"
        "characterize: {devices: [], max_threads: 2}\n"
        "cave: {graph_size: tiny, repetitions: 1, figures: {fig_5_8: {devices: [emu-optane], io_threads: [1, 4]}}}\n")
    # The quick profile's native runs on this device are kept by `make clean` (measurements); the
    # changed parameters (Snakemake's record of them is kept too) make this profile redo them.
    code, out = make(clone, "reproduce", profile="docker-cave")
    assert code == 0, out[-3000:]
    sidecar = json.loads((clone / "results/cave/devices/emu-optane/runs.csv.json").read_text())
    assert sidecar["runtime"]["kind"] == "docker" and sidecar["runtime"]["image"].startswith("ssd-artifact/cave:")
    rows = {r["io_threads"]: r for r in csv.DictReader(open(clone / "results/cave/fig_5_8.csv"))}
    assert sorted(rows) == ["1", "4"] and all(int(float(r["block_reads"])) > 0 for r in rows.values())
    assert float(rows["4"]["runtime_s"]) < float(rows["1"]["runtime_s"]), "4 concurrent reads must beat 1 on k_r 6"
    assert (clone / "figures/generated/fig_5_8.pdf").exists()
    assert not os.path.ismount(clone / "scratch/emussd/emu-optane/mnt"), "the emulated SSD must be unmounted"



@pytest.mark.docker
@pytest.mark.skipif(not _docker_engine() or not os.path.exists("/dev/fuse"),
                    reason="no Docker engine or no /dev/fuse here: the baselines in the cave image are not tested")
def test_the_baselines_build_and_answer_right_in_the_cave_image(clone):
    """GridGraph (make, as GraphChi's build) and Mosaic (CMake) built in the cave image from sources
    fetched on the host, and GraphX on the image's Java, run WCC on an emulated SSD mounted inside
    it, each out-of-core one in a memory cgroup made inside the container; every answer is checked
    vertex by vertex inside the campaign, so a row that ran is a right answer."""
    (clone / "configs/profiles/docker-baselines.yaml").write_text(
        "name: docker-baselines\ndescription: Figure 5.11 on one emulated SSD in docker mode (test)\n"
        "runtime: docker\ndevices: [emu-optane]\nfio_point: {runtime_ms: 200, ramp_ms: 50}\n"
        "characterize: {devices: [], max_threads: 2}\n"
        "cave: {graph_size: tiny, repetitions: 1, baseline_timeout_s: 300,\n"
        "  figures: {fig_5_11: {devices: [emu-optane], graphs: [social],\n"
        "                       baselines: [gridgraph, mosaic, graphx]}}}\n")
    code, out = make(clone, "reproduce", profile="docker-baselines")
    assert code == 0, out[-3000:]
    sidecar = json.loads((clone / "results/cave/devices/emu-optane/baselines.csv.json").read_text())
    assert sidecar["runtime"]["kind"] == "docker" and sidecar["runtime"]["image"].startswith("ssd-artifact/cave:")
    rows = {r["system"]: r for r in csv.DictReader(open(clone / "results/cave/devices/emu-optane/baselines.csv"))}
    assert sorted(rows) == ["GraphX", "GridGraph", "Mosaic"]
    assert {system: row["status"] for system, row in rows.items()} == dict.fromkeys(rows, "ran")
    assert all(rows[s]["memory_limit"].startswith("cgroup v") for s in ("GridGraph", "Mosaic"))
    assert (clone / "figures/generated/fig_5_11.pdf").exists()
    assert not os.path.ismount(clone / "scratch/emussd/emu-optane/mnt"), "the emulated SSD must be unmounted"
