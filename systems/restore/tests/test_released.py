"""restore-sim's `--preset released` (the authors' released choices, README "The released
configuration") against the authors' own agent, `Run_RL` (BU-DiSC/ReStore at 8144333f), on the
same request stream and tiers.

Their agent runs in their real-time emulator: it submits the stream open-loop as fast as its loop
runs, and its decisions read the thread pools' queues, so two of its runs differ (on 5hf90 at
50,000 requests, 2026-12-02: Tier 2 -> 1 promotions 13,629 and 7,648). Ours runs in virtual time
with open Poisson arrivals at their loop's measured rate. What is compared is what their queues
leave comparable: the requests Tier 1 serves, the promotions into Tier 2, and that both promote on
most Tier 2 accesses. The chapter's own choices are compared too: the preset must be the closer.
Skipped when the authors' sources are absent (restore.original builds them from the pinned tarball).
"""

from __future__ import annotations

import subprocess

import pytest

from restore.engine import run

PAGES, REQUESTS = 10_000, 50_000
CAPACITIES = [300, 800, 10_000]  # Chapter 6's 3 % / 8 %
TIERS = {"read_latency_us": [30, 200, 500], "alpha": [1.5, 2, 4], "k_r": [8, 4, 2], "k_w": [8, 4, 2]}
REPEATS = 2  # their runs: the spread of their real-time queues
# The chapter's choices (configs/experiments/restore.yaml, options), without the preset
CHAPTER = {"rl_explore": "upgrade", "rl_init_rounds": 20, "rl_observe_every": 4, "rl_fit_every": 1,
           "rl_range_floor": "original", "rl_fit_start": "original", "temp_initial": 0.5, "temp_admit": "3:1",
           "demote_victim": "after"}


@pytest.fixture(scope="module")
def their_agent():
    original = pytest.importorskip("restore.original")
    try:
        return original, original.build(say=lambda _: None)["restore"]
    except original.OriginalError as missing:
        pytest.skip(f"the authors' ReStore code could not be built here: {missing}")


def ours(binary, trace, rate, options) -> dict:
    row = run(binary, policy="restore", trace=trace, cpu_timing="off", arrival="poisson", rate=rate,
              capacity_pages=CAPACITIES, **TIERS, **options)[0]
    return {"t1": row["accesses_t1"], "t2": row["accesses_t2"], "up1": row["migrations_t2_t1"],
            "up2": row["migrations_t3_t2"]}


# Their runs' counts move with how fast their loop runs: on a loaded machine (2026-12-02, load
# average 12) one of two runs served 14,247 requests from Tier 1, the other 20,046; on an idle one
# (the same day, their loop at 243,000 requests/s) both served about 14,900 from Tier 1 and promoted
# about 300 into Tier 2, where ours with the preset, at that rate, served 23,978 and promoted 4,482.
# So the agreement below depends on the machine's speed: `make test-released` runs it, alone, and
# not `make test` (docs/tests-and-ci.md; the numbers: docs/notes/restore.md).
@pytest.mark.e2e
@pytest.mark.wall_clock
@pytest.mark.authors_agent
def test_the_released_preset_promotes_as_the_authors_agent_does(their_agent, binary, tmp_path):
    original, program = their_agent
    trace, stream = tmp_path / "trace.csv", tmp_path / "stream.txt"
    subprocess.run([binary, "--workload", "5hf90", "--pages", str(PAGES), "--requests", str(REQUESTS), "--seed", "1",
                    "--dump-trace", trace], check=True, capture_output=True)
    original.write_stream(trace, stream)
    theirs = []
    for repeat in range(REPEATS):
        n = original.run_once(program, stream, tmp_path / f"theirs{repeat}", requests=REQUESTS, pages=PAGES,
                              capacities=CAPACITIES, tiers=TIERS)
        theirs.append({"t1": n["accesses_t1"], "t2": n["accesses_t2"], "up1": n["migrations_t2_t1"],
                       "up2": n["migrations_t3_t2"], "rate": REQUESTS / (n["loop_us"] * 1e-6)})
    rate = sorted(t["rate"] for t in theirs)[0]  # requests per second their loop submitted
    released = ours(binary, trace, rate, {"preset": "released"})
    chapter = ours(binary, trace, rate, CHAPTER)
    report = f"theirs {theirs}, ours released {released}, ours with the chapter's choices {chapter}"

    def within(key, low, high):
        return low * min(t[key] for t in theirs) <= released[key] <= high * max(t[key] for t in theirs)

    # Tier 1's requests within 25 % and the promotions into Tier 2 within 50 % of their runs' range
    # (2026-12-02: 25,312 against 21,313-23,108 and 4,838 against 3,796-4,259)
    assert within("t1", 0.75, 1.25), report
    assert within("up2", 0.5, 1.5), report
    # both promote on most Tier 2 accesses (theirs 77 % and 96 %, ours 100 %)
    assert all(t["up1"] >= 0.7 * t["t2"] for t in [*theirs, released]), report

    # and the preset is what brings ours there: with the chapter's choices ours promotes into Tier 2
    # about 10 times less (460 against 3,796-4,259)
    def distance(counts):
        return sum(abs(counts[k] - t[k]) for t in theirs for k in ("t1", "up2"))
    assert distance(released) < distance(chapter), report
    print(report)
