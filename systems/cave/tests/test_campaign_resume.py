"""Chapter 5's campaign resumes where an interrupted one stopped (cave.campaign): the points kept
are not measured again, the reference answers they computed are not computed again, and the rows
are those of an uninterrupted campaign, in the same order."""

from __future__ import annotations

from pathlib import Path

import pytest

from cave import campaign, engine, experiment, plan, reference
from ssdartifact import config


class Interrupted(Exception):
    pass


@pytest.fixture
def fakes(tmp_path, monkeypatch, folder_device):
    """The engine, the reference and the graph preparation replaced by counting fakes; the device
    is a folder."""
    calls = {"runs": [], "references": [], "fail_at": None}

    def prepare_graph(binary, spec, graph_dir):
        path = tmp_path / "graphs" / f"{spec['name']}.cave"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"graph")
        return path, {}

    def run(binary, **options):
        if len(calls["runs"]) == calls["fail_at"]:
            raise Interrupted()
        calls["runs"].append(options)
        return {"runtime_s": 0.5 + len(calls["runs"]), "block_reads": 10, "lock_wait_pct": 0.0}

    def run_reference(graph, algorithm, **options):
        calls["references"].append((graph.name, algorithm))
        return {"runtime_s": 0.1}

    monkeypatch.setattr(experiment, "prepare_graph", prepare_graph)
    monkeypatch.setattr(engine, "run", run)
    monkeypatch.setattr(reference, "run_reference", run_reference)

    open_device, opened = folder_device
    return calls, open_device, opened


def points():
    quick = config.load_profile("quick")["cave"]
    every = plan.device_points(config.load("experiments/cave.yaml"), quick, config.load("datasets.yaml"), "emu-pcie")
    return [point for point in every if point["kind"] == "run"]


def campaign_run(tmp_path, open_device, raw="raw", labels=None):
    return campaign.run(device="emu-pcie", points=points(), device_labels=labels or {"device_k_r": 8}, k_r=8,
                        binary=Path(__file__), fio_seconds=1.0, raw_dir=tmp_path / raw, open_device=open_device,
                        say=lambda message: None)


def test_an_interrupted_campaign_resumes_where_it_stopped(tmp_path, fakes):
    calls, open_device, opened = fakes
    assert len(points()) > 6
    whole, _, _ = campaign_run(tmp_path, open_device, raw="uninterrupted")
    measured, references = len(calls["runs"]), len(calls["references"])
    assert references >= 1
    calls.update(runs=[], references=[], fail_at=5)
    with pytest.raises(Interrupted):
        campaign_run(tmp_path, open_device)
    calls.update(fail_at=None)
    rows, samples, kept = campaign_run(tmp_path, open_device)
    # the five points measured before the interruption are kept, and only the rest is measured:
    # over both tries, every point once, as in the uninterrupted campaign
    assert len(calls["runs"]) == measured
    assert len(calls["references"]) == references
    assert [{k: v for k, v in row.items() if k != "runtime_s"} for row in rows] == \
        [{k: v for k, v in row.items() if k != "runtime_s"} for row in whole]
    assert all(path.exists() for path in kept) and len(kept) == len(points())
    # a finished campaign opens no device and measures nothing
    count, before = opened["count"], len(calls["runs"])
    assert campaign_run(tmp_path, open_device)[0] == rows
    assert (opened["count"], len(calls["runs"])) == (count, before)


def test_kept_points_are_not_reused_under_another_context(tmp_path, fakes):
    calls, open_device, opened = fakes
    campaign_run(tmp_path, open_device)
    first = len(calls["runs"])
    campaign_run(tmp_path, open_device, labels={"device_k_r": 16})  # the device's k_r was measured anew
    assert len(calls["runs"]) == 2 * first


def test_a_damaged_kept_point_is_measured_again(tmp_path, fakes):
    calls, open_device, opened = fakes
    _, _, kept = campaign_run(tmp_path, open_device)
    first = len(calls["runs"])
    kept[2].write_text('{"rows": [')
    campaign_run(tmp_path, open_device)
    assert len(calls["runs"]) == first + 1
