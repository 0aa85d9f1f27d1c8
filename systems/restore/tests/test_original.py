"""Our simulator's tLFU and TEMP against the authors' own (BU-DiSC/ReStore at 8144333f, `Run_tLFU.cpp`,
`Run_TEMP.cpp`) on the same trace, tiers and initial placement: the pages each tier serves and the
promotions agree.

The authors' code is the pinned source `restore_original` (configs/sources.yaml): it is built and
run here, from the local sources folder, whenever it is there (CI has it), and never copied into the
project (no license is stated). Their emulator sleeps through each request in thread pools and
serves the trace open-loop; which tier serves each request and which pages move depend only on the
policy, so those counts can be compared. They differ a little: among pages of equal frequency the
original's heap (with lazy deletion) and our ordered set pick different victims."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess

import pytest

from restore.engine import run
from ssdartifact import sources

CAPACITY_PAGES = (100, 400, 20000)  # the original's defaults: tiers of 100 and 400 pages, the rest below
REQUESTS = 20000


@pytest.fixture(scope="module")
def original_tree(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ is missing: run `make setup`")
    folder = tmp_path_factory.mktemp("original")
    try:
        tarball = sources.fetch("restore_original", folder / "downloads", say=lambda _: None)
    except sources.SourceError as missing:
        pytest.skip(f"the authors' ReStore code is not here: {missing}")
    return sources.unpack("restore_original", tarball, folder / "src")


def build_original(tree, name):
    program = tree.parent / name
    # the flags of their MakeFile, with the machine's g++ (theirs names g++-12)
    subprocess.run(["g++", "-O3", "-std=c++20", "-pthread", "-o", str(program), str(tree / f"cpp/{name}.cpp")],
                   check=True, capture_output=True)
    return program


@pytest.fixture(scope="module")
def original_tlfu(original_tree):
    return build_original(original_tree, "Run_tLFU")


@pytest.fixture(scope="module")
def original_temp(original_tree):
    return build_original(original_tree, "Run_TEMP")


def their_counts(program, trace, work, log_name="LFU", options=()) -> dict:
    """Their program on `trace` (our page,op CSV, written as their `R <page>` lines) in `work`."""
    work.mkdir()
    with open(trace) as src, open(work / "workload_x.txt", "w") as dst:
        for row in csv.DictReader(src):
            dst.write(f"{row['op']} {row['page']}\n")
    # they create only the last folder of their results path
    (work / "Results_x/capacity_tests_30-200-500").mkdir(parents=True)
    t1, t2, t3 = CAPACITY_PAGES
    subprocess.run([program, "-workload=x", f"-total_num_reqs={REQUESTS}", f"-max_capacity_tier1={t1}",
                    f"-max_capacity_tier2={t2}", f"-max_capacity_tier3={t3}", *options], cwd=work, check=True,
                   capture_output=True, timeout=300)
    log = (work / f"Results_x/capacity_tests_30-200-500/{t1}-{t2}/output_x_{log_name}.log").read_text()
    number = {name: int(re.search(rf"{pattern}: (\d+)", log).group(1)) for name, pattern in (
        ("t1", "page hits in Tier1"), ("t2", "page hits in Tier2"), ("t3", "page hits in Tier3"),
        ("up1", "(?:migrated|upgraded) from Tier2 to Tier1"), ("up2", "(?:migrated|upgraded) from Tier3 to Tier2"))}
    return number


def our_counts(binary, trace, policy, **options) -> dict:
    row = run(binary, policy=policy, trace=trace, initial="fill", cpu_timing="off",
              capacity_pages=":".join(map(str, CAPACITY_PAGES)), **options)[0]
    ours = dict(zip(("t1", "t2", "t3"), map(int, row["accesses"].split(":"))))
    ours.update(zip(("up1", "up2"), map(int, row["promotions"].split(":"))))
    return ours


def dump_trace(binary, tmp_path, workload, seed):
    trace = tmp_path / "trace.csv"
    subprocess.run([binary, "--workload", workload, "--pages", "10000", "--requests", str(REQUESTS), "--seed",
                    str(seed), "--dump-trace", trace], check=True, capture_output=True)
    return trace


@pytest.mark.parametrize("workload, seed", [("5hf90", 1), ("10hf80", 2), ("A", 3)])
def test_our_tlfu_serves_and_promotes_as_the_authors_does(original_tlfu, binary, tmp_path, workload, seed):
    trace = dump_trace(binary, tmp_path, workload, seed)
    theirs = their_counts(original_tlfu, trace, tmp_path / "theirs")
    ours = our_counts(binary, trace, "tlfu")
    assert sum(theirs[t] for t in ("t1", "t2", "t3")) == REQUESTS
    for tier in ("t1", "t2", "t3"):  # the pages each tier serves: within 1 % of the requests
        assert abs(ours[tier] - theirs[tier]) <= 0.01 * REQUESTS, (tier, ours, theirs)
    # the promotions: within 5 % of theirs. Ties between pages of equal frequency, which the two
    # break differently, are many where a phase brings a new hot set (workload A: 603 against 627
    # promotions into Tier 1 on 2026-11-27; 1 % on 5hf90 at 100,000 requests)
    for moves in ("up1", "up2"):
        assert abs(ours[moves] - theirs[moves]) <= max(0.05 * theirs[moves], 5), (moves, ours, theirs)


# TEMP as the original runs it: its admission thresholds (3 requests for Tier 1, 1 for Tier 2), every
# page at 0.5 before its first request, the victim chosen after the promoted page enters (issue 22).
ORIGINAL_TEMP = {"temp_initial": 0.5, "temp_admit": "3:1", "demote_victim": "after"}
# The two temperature models, made the same where they can be: the thesis's increase (theirs 0.05)
# and no decrease (theirs drops at every 5,000th request by 0.02 per 1,000 requests since the page's
# last *drop*, ours 0.05 per 5 idle timesteps since its last request: not comparable).
SAME_TEMPERATURE_THEIRS = ["-temp_incr_alpha=0.2", "-temp_drop_scale=0"]
SAME_TEMPERATURE_OURS = {"temp_drop": 0}


@pytest.mark.parametrize("workload, seed", [("5hf90", 1), ("10hf80", 2), ("A", 3)])
def test_our_temp_with_the_original_choices_serves_and_promotes_as_the_authors_does(original_temp, binary, tmp_path,
                                                                                     workload, seed):
    trace = dump_trace(binary, tmp_path, workload, seed)
    theirs = their_counts(original_temp, trace, tmp_path / "theirs", "TEMP", SAME_TEMPERATURE_THEIRS)
    ours = our_counts(binary, trace, "temp", **SAME_TEMPERATURE_OURS, **ORIGINAL_TEMP)
    ours_by_default = our_counts(binary, trace, "temp", **SAME_TEMPERATURE_OURS)
    for tier in ("t1", "t2", "t3"):  # within 0.3 % of the requests on 2026-11-27 (5hf90: 3,432 against 3,429)
        assert abs(ours[tier] - theirs[tier]) <= 0.01 * REQUESTS, (tier, ours, theirs)
    # within 8 % (5hf90: 302 against 329 promotions into Tier 1; the others within 3 %): temperatures
    # take few values without a decrease, and the two heaps break their many ties differently
    for moves in ("up1", "up2"):
        assert abs(ours[moves] - theirs[moves]) <= max(0.1 * theirs[moves], 5), (moves, ours, theirs)
    # and the original's choices are what makes them agree: with ours the counts are 6-20 times as far
    # (5hf90: 49 against 807 in all, summed over the three tiers and two promotions)
    def distance(counts):
        return sum(abs(counts[k] - theirs[k]) for k in theirs)
    assert 3 * distance(ours) < distance(ours_by_default), (ours, ours_by_default, theirs)
