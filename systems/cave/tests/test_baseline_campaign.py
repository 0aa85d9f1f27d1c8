"""The baselines' campaign (cave.baselines.campaign), with the systems replaced by fakes: every point
becomes one row, a case a system cannot run, one over its memory limit and one past its time
limit are rows with their status and no time, a wrong answer stops the campaign, and an
interrupted campaign resumes without running the kept points again."""

from __future__ import annotations

from pathlib import Path

import pytest

from cave import experiment, plan
from cave.baselines import answers, build, campaign, case, runner
from ssdartifact import config

EXPERIMENT = config.load("experiments/cave.yaml")
SETTINGS = {"allowance_mib": 32, "timeout_s": 60}


def points() -> list[dict]:
    cave = {"graph_size": "tiny", "repetitions": 1,
            "figures": {"fig_5_9a": {"devices": ["emu-pcie"]}, "table_5_2": {"devices": ["emu-pcie"]}}}
    return plan.device_points(EXPERIMENT, cave, config.load("datasets.yaml"), "emu-pcie", baselines=True)


@pytest.fixture
def fakes(tmp_path, monkeypatch, folder_device):
    calls = {"cases": [], "conversions": 0, "raise": {}}

    def prepare_graph(binary, spec, graph_dir):
        path = tmp_path / "graphs" / f"{spec['name']}.cave"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"x" * 100_000)
        return path, {}

    def run(system, graph, work, **options):
        calls["cases"].append((system, graph.name, options["algorithm"]))
        assert options["memory_limit"] == options["budget_bytes"] + (32 << 20)
        assert options["threads"] == 8 and options["timeout_s"] == 60
        error = calls["raise"].get((system, graph.name.removesuffix(".cave")))
        if error:
            raise error
        return {"seconds": 2.0, "reported_s": 1.5, "preprocess_s": 0.3, "disk_bytes": 1234, "memory_limit": "cgroup",
                "peak_bytes": 99, "vertices": 10, "edges": 20, "threads": options["threads"],
                "answer": {"reached": 10, "levels": 3}}

    def cave_preprocessing(binary, graph, folder):
        calls["conversions"] += 1
        return {"experiment": "preprocess", "system": "CAVE", "status": "ran", "reason": "", "preprocess_s": 0.1,
                "disk_bytes": 100, "vertices": 10, "edges": 20}

    monkeypatch.setattr(experiment, "prepare_graph", prepare_graph)
    monkeypatch.setattr(case, "run", run)
    monkeypatch.setattr(campaign, "_cave_preprocessing", cave_preprocessing)
    monkeypatch.setattr(build, "build", lambda system: tmp_path / system)
    monkeypatch.setattr(build, "build_key", lambda system: f"key-{system}")

    open_device, opened = folder_device
    return calls, open_device, opened


def run_campaign(tmp_path, open_device, raw="raw"):
    return campaign.run(device="emu-pcie", points=points(), device_labels={"device_k_r": 8}, k_r=8,
                        binary=Path(__file__), settings=SETTINGS, raw_dir=tmp_path / raw, open_device=open_device,
                        say=lambda message: None)


def test_every_point_is_a_row_and_a_case_that_did_not_run_says_why(tmp_path, fakes):
    calls, open_device, opened = fakes
    calls["raise"] = {("graphchi", "road-tiny"): runner.CannotRun("no edge between two vertices"),
                      ("gridgraph", "road-tiny"): runner.BudgetExceeded("needed more than 32 MiB\nend of its log"),
                      ("graphchi", "social-tiny"): runner.TimedOut("graphchi ran past its 60 s limit")}
    rows, kept = run_campaign(tmp_path, open_device)
    assert len(rows) == len(points()) == len(kept)
    by = {(r["system"], r["dataset"]): r for r in rows if r["experiment"] == "baseline"}
    assert (by[("GraphChi", "road-tiny")]["status"], by[("GraphChi", "road-tiny")]["reason"]) == \
        ("cannot_run", "no edge between two vertices")
    assert (by[("GridGraph", "road-tiny")]["status"], by[("GridGraph", "road-tiny")]["reason"]) == \
        ("over_budget", "needed more than 32 MiB")
    assert by[("GraphChi", "social-tiny")]["status"] == "timed_out"
    assert all("runtime_s" not in r for r in by.values() if r["status"] != "ran")
    ran = by[("GridGraph", "social-tiny")]
    assert (ran["status"], ran["runtime_s"], ran["budget_bytes"], ran["time_limit_s"], ran["reached"]) == \
        ("ran", 2.0, 3000, 60, 10)
    assert [r["system"] for r in rows if r["experiment"] == "preprocess"] == ["CAVE"]
    assert set(rows[0]) <= set(__import__("cave.results", fromlist=["RUN_COLUMNS"]).RUN_COLUMNS)


def test_a_wrong_answer_stops_the_campaign(tmp_path, fakes):
    calls, open_device, opened = fakes
    calls["raise"] = {("gridgraph", "social-tiny"): answers.WrongAnswer("gridgraph: 3 of 10 levels differ")}
    with pytest.raises(answers.WrongAnswer, match="levels differ"):
        run_campaign(tmp_path, open_device)


def test_an_interrupted_campaign_resumes_and_a_finished_one_opens_no_device(tmp_path, fakes):
    calls, open_device, opened = fakes
    whole, _ = run_campaign(tmp_path, open_device, raw="whole")
    every = len(calls["cases"])
    calls["cases"].clear()
    calls["raise"] = {("gridgraph", "social-tiny"): KeyboardInterrupt()}
    with pytest.raises(KeyboardInterrupt):
        run_campaign(tmp_path, open_device)
    before = len(calls["cases"])
    calls["raise"] = {}
    rows, _ = run_campaign(tmp_path, open_device)
    assert rows == whole
    assert len(calls["cases"]) - before == every - before + 1  # only the interrupted case again, and the rest
    count, cases = opened["count"], len(calls["cases"])
    assert run_campaign(tmp_path, open_device)[0] == rows
    assert (opened["count"], len(calls["cases"])) == (count, cases)
