"""The authors' programs beside ours (restore.original): our page traces in their input format, their
logs read back, their command line from our tiers, the summary's ratios and gaps, and the runs left
out and marked 'not run' where their pinned source cannot be found. Fast: nothing of theirs runs
here (tests/test_restore_original_e2e.py runs the workflow's rule)."""

from __future__ import annotations

import pytest

from restore import original, plan
from ssdartifact import config, paper

TIERS = {"read_latency_us": [30, 200, 500], "alpha": [1.5, 2.0, 4.0], "k_r": [8, 4, 2], "k_w": [8, 4, 2]}


def test_a_page_trace_becomes_their_lines_and_gives_the_streams_size(tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("page,op,timestamp\n7,R,0\n0,W,5\n7,R,9\n")
    stream = tmp_path / "workload_x.txt"
    assert original.write_stream(trace, stream) == {"requests": 3, "pages": 8}
    assert stream.read_text() == "R 7\nW 0\nR 7\n"


@pytest.mark.parametrize("line", ["3,X", "-1,R", "x,R", "4"])
def test_a_line_that_is_not_a_page_request_is_refused_with_its_number(tmp_path, line):
    trace = tmp_path / "trace.csv"
    trace.write_text(f"page,op\n1,R\n{line}\n")
    with pytest.raises(original.OriginalError, match="line 3: not a page request"):
        original.write_stream(trace, tmp_path / "out.txt")


# The last lines of their logs, as Run_tLFU.cpp and Run_RL.cpp print them (the words differ:
# "migrated" in the baselines, "upgraded" in the agent's)
def their_log(policy_word: str, moved: str) -> str:
    return (f"For loop time: 239005 microseconds\nTotal {policy_word} runtime: 27614633 nanoseconds\n"
            "Total requests time: 9486398 microseconds\n\nThere are 50013 reads, and 49987 writes.\n\n"
            "Number of page hits in Tier1: 53713\nNumber of page hits in Tier2: 36503\n"
            f"Number of page hits in Tier3: 9784\n\nNumber of page {moved} from Tier2 to Tier1: 2613\n"
            f"Number of page {moved} from Tier3 to Tier2: 1900\n\nAverage runtime per call: 596 nanoseconds\n")


@pytest.mark.parametrize("policy_word, moved", [("LFU", "migrated"), ("RL", "upgraded")])
def test_their_log_is_read_into_numbers(policy_word, moved):
    assert original.parse_log(their_log(policy_word, moved)) == {
        "loop_us": 239005, "decision_ns": 27614633, "total_us": 9486398, "reads": 50013, "writes": 49987,
        "accesses_t1": 53713, "accesses_t2": 36503, "accesses_t3": 9784, "migrations_t2_t1": 2613,
        "migrations_t3_t2": 1900}


def test_a_log_cut_short_is_refused():
    cut = their_log("LFU", "migrated").split("Number of page hits in Tier3")[0]
    with pytest.raises(original.OriginalError, match="page hits in Tier3"):
        original.parse_log(cut)


def test_their_command_line_carries_our_tiers_and_capacities(tmp_path):
    args = original.arguments(requests=1000, pages=500, capacities=[15, 40, 500], tiers=TIERS)
    assert args[:3] == ["-workload=artifact", "-total_num_pages=500", "-total_num_reqs=1000"]
    assert {"-max_capacity_tier2=40", "-read_time_tier3=500", "-asym_tier1=1.5", "-num_threads_tier2=4"} <= set(args)
    # and their program writes its log where we read it (it creates only the last folder)
    assert original.log_path(tmp_path, [15, 40, 500], TIERS, "Run_RL") == (
        tmp_path / "Results_artifact/capacity_tests_30-200-500/15-40/output_artifact_RLs2.log")


@pytest.mark.parametrize("change, message", [({"k_w": [8, 4, 1]}, "one pool per tier"),
                                             ({"read_latency_us": [30, 200.5, 500]}, "whole microseconds")])
def test_tiers_their_emulator_cannot_model_are_refused(change, message):
    with pytest.raises(original.OriginalError, match=message):
        original.arguments(requests=10, pages=10, capacities=[1, 2, 10], tiers={**TIERS, **change})


def run(implementation, policy, repeat, total, t1=50, t2=30, t3=20, up=10):
    return {"implementation": implementation, "workload": "5hf90", "seed": 1, "repeat": repeat, "policy": policy,
            "requests": 100, "total_us": total, "accesses_t1": t1, "accesses_t2": t2, "accesses_t3": t3,
            "migrations_t2_t1": up, "migrations_t3_t2": 0, "promotion_rate": up / (t2 + t3)}


def test_the_summary_compares_each_repeat_with_that_repeats_tlfu_and_ours_with_theirs():
    rows = [run("authors", "tlfu", 1, 100.0), run("authors", "tlfu", 2, 200.0), run("authors", "tlfu", 3, 150.0),
            run("authors", "restore", 1, 300.0), run("authors", "restore", 2, 400.0),
            run("authors", "restore", 3, 600.0),
            run("artifact", "tlfu", 1, 90.0, t1=52, t2=29), run("artifact", "restore", 1, 180.0, t1=40, t2=40)]
    summary = {(s["implementation"], s["policy"]): s for s in original.summary(rows)}
    theirs = summary[("authors", "restore")]
    # each repeat against that repeat's tLFU: 3, 2, 4 (not the medians' 400 / 150)
    assert (theirs["runs"], theirs["total_us"], theirs["vs_tlfu"]) == (3, 400.0, 3.0)
    assert (theirs["vs_tlfu_min"], theirs["vs_tlfu_max"], theirs["spread"]) == (2.0, 4.0, 0.75)
    assert theirs["tier_gap"] is None and theirs["vs_temp"] is None  # no TEMP here
    assert summary[("artifact", "restore")]["vs_tlfu"] == 2.0
    assert summary[("artifact", "tlfu")]["tier_gap"] == pytest.approx(0.02)  # Tier 1: 52 against 50, of 100
    assert summary[("artifact", "restore")]["tier_gap"] == pytest.approx(0.10)
    assert list(original.summary(rows)[0]) == original.SUMMARY_COLUMNS


def test_without_their_source_their_runs_are_left_out_and_marked_not_run():
    profile = {"pages": 1000, "requests": 1000, "seeds": [1], "figures": {"fig_6_8": {}, "original": {}}}
    kept, not_run = plan.without_original(profile, "no source of restore_original: ...", "SSD_SOURCES=<f> make")
    assert "original" not in kept["figures"] and "fig_6_8" in kept["figures"]
    assert set(not_run) == set(plan.ORIGINAL_CSVS)
    assert not_run[plan.ORIGINAL_CSVS[0]] == {"why": "pinned sources unreachable (the authors' ReStore)",
                                              "fix": "SSD_SOURCES=<f> make"}
    assert plan.outputs(kept)["measured"] == []
    # found: nothing changes, and the runs are measured results
    assert plan.without_original(profile, "", "make") == (profile, {})
    assert plan.outputs(profile)["measured"] == plan.ORIGINAL_CSVS


def test_the_document_marks_their_figure_and_table_not_run_and_says_how_to_run_them():
    reason = {"why": "pinned sources unreachable (the authors' ReStore)",
              "fix": "SSD_SOURCES=<folder with the tarballs> make reproduce"}
    inventory = config.load("inventory")
    restricted = paper.restrict_to_built(inventory, built=set(), not_run=dict.fromkeys(plan.ORIGINAL_CSVS, reason))
    marked = [e for e in restricted["supplementary"] if "not_run" in e]
    assert [e["id"] for e in marked] == ["S6", "S7"]  # the other supplementary items: not built, left out
    assert len(restricted["supplementary"]) == 2
    tex = paper.item_tex("Figure", marked[0], [])
    assert "Figure S6} --- \\textcolor{red!60!black}{not run: pinned sources unreachable (the authors' ReStore)}" in tex
    assert "To run it: \\texttt{SSD\\_SOURCES=<folder with the tarballs> make reproduce}" in tex
