"""emussd's calibration on a busy machine, and check-config's judgement of the devices it concerns.

The unit tests feed the calibration a fake machine (fio's numbers and how busy the CPUs were), so
they take no time and need neither FUSE nor fio; one test mounts a device (FUSE). The end-to-end
test really loads the machine with busy processes and runs the real calibration.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from emussd import capacity, harness
from emussd import device as emulated
from ssdartifact import checksums, config, devices


class FakeMachine:
    """What fio measures on a machine whose client gap is `idle_gap_us`, or `busy_gap_us` while other
    work uses the cores that `load` yields, one number per look (capacity.busy_cores)."""

    def __init__(self, monkeypatch, load, idle_gap_us=60.0, busy_gap_us=246.0, most_iops=50000.0):
        self.load, self.gap_us, self.measured = iter(load), idle_gap_us, 0
        self.idle_gap_us, self.busy_gap_us, self.most_iops = idle_gap_us, busy_gap_us, most_iops
        monkeypatch.setattr(capacity, "busy_cores", self.look)
        monkeypatch.setattr(capacity, "device_with_data", self.device)
        monkeypatch.setattr(capacity, "fio_point", self.fio_point)
        monkeypatch.setattr(capacity, "BUSY_PAUSE_S", 0)

    def look(self, seconds=None) -> float:
        cores = next(self.load)
        self.gap_us = self.busy_gap_us if capacity.too_busy(cores, os.cpu_count()) else self.idle_gap_us
        return cores

    @contextmanager
    def device(self, binary, root, library=False, **model):
        yield model

    def fio_point(self, model, *, rw, jobs, seconds, ramp=0.3):
        self.measured += 1
        k, latency_us = model["k_r"], model["read_latency_us"]
        if jobs <= k:  # n = k: each slot idles one gap between requests
            iops = k / (latency_us + self.gap_us) * 1e6
        else:  # past k every slot is busy, up to the most the machine serves
            iops = min(k / latency_us * 1e6, self.most_iops)
        return {"iops": iops, "clat_mean_us": jobs / iops * 1e6, "clat_p50_us": jobs / iops * 1e6}


@pytest.fixture
def fake_binary(tmp_path) -> Path:
    path = tmp_path / "build" / "emussd"
    path.parent.mkdir()
    path.write_bytes(b"an emussd binary")
    return path


def looks(cores: float, attempts: int) -> list[float]:
    """`cores` busy at every look of `attempts` calibrations (3 at a light load, 1 for the most served,
    1 per rung: the fake machine's first rung is faithful)."""
    return [cores] * 5 * attempts


def test_a_calibration_taken_on_a_busy_machine_is_taken_again_once_it_is_idle(monkeypatch, fake_binary, tmp_path):
    machine = FakeMachine(monkeypatch, looks(os.cpu_count(), 1) + looks(0.05, 1))
    said = []
    measured = capacity.calibration(fake_binary, cache_dir=tmp_path / "cache", progress=said.append)
    assert (measured.attempts, measured.busy, round(measured.round_trip_us)) == (2, False, 60)
    assert any("the machine is busy" in line and "measuring again" in line for line in said), said
    assert capacity.cached(fake_binary, tmp_path / "cache") == measured
    assert measured.record()["busy"] is False and measured.record()["busy_cores"] == 0.05
    assert machine.measured > 0


def test_a_calibration_busy_every_time_is_marked_used_by_its_command_and_taken_again_by_check_config(
        monkeypatch, fake_binary, tmp_path):
    cache = tmp_path / "cache"
    machine = FakeMachine(monkeypatch, looks(os.cpu_count(), capacity.ATTEMPTS) + looks(0.05, 1))
    said = []
    busy = capacity.calibration(fake_binary, cache_dir=cache, progress=said.append)
    assert busy.busy and busy.attempts == capacity.ATTEMPTS and round(busy.round_trip_us) == 246
    assert "`make calibrate` takes it again once the machine is idle" in said[-1]
    # the command that took it goes on with it (a run's later mounts), without measuring again ...
    measured = machine.measured
    assert capacity.calibration(fake_binary, cache_dir=cache) == busy and machine.measured == measured
    # ... and the next one that must judge a device takes it again: it never stays to block it
    idle = capacity.calibration(fake_binary, cache_dir=cache, retake="busy")
    assert not idle.busy and round(idle.round_trip_us) == 60
    assert capacity.cached(fake_binary, cache) == idle
    assert capacity.calibration(fake_binary, cache_dir=cache, retake="busy") == idle  # an idle one is kept


def no_rung_faithful(monkeypatch):
    """Every rung of the ladder served 80 % of its declared rate (what a CI machine under load showed)."""
    monkeypatch.setattr(capacity, "_rate_point", lambda binary, root, rate, seconds, library=False: {
        "declared_iops": rate, "read_latency_us": 400.0, "k_r": 16, "gap_us": 60.0, "at_4k": 0.8, "little_4k": 1.0})


def test_a_busy_machine_that_served_no_rung_faithfully_goes_on_with_the_lowest_marked_busy(
        monkeypatch, fake_binary, tmp_path):
    rungs = len(capacity.LADDER)
    FakeMachine(monkeypatch, [os.cpu_count()] * (4 + rungs) * capacity.ATTEMPTS, most_iops=50000.0)
    no_rung_faithful(monkeypatch)
    said = []
    busy = capacity.calibration(fake_binary, cache_dir=tmp_path / "cache", progress=said.append)
    assert busy.busy and busy.capacity_iops == capacity.LADDER[-1] * 50000.0
    assert any("uses the lowest tried" in line for line in said), said


def test_an_idle_machine_that_serves_no_rung_faithfully_is_refused(monkeypatch, fake_binary, tmp_path):
    FakeMachine(monkeypatch, [0.05] * (4 + len(capacity.LADDER)))
    no_rung_faithful(monkeypatch)
    with pytest.raises(harness.EmussdError, match="otherwise idle: it cannot emulate a device faithfully here"):
        capacity.calibration(fake_binary, cache_dir=tmp_path / "cache")


def test_the_labs_calls_keep_working_and_keep_what_was_measured(monkeypatch, fake_binary, tmp_path):
    """labs/labkit/device.py: calibration(binary, progress=, library=), with_gap_now(cal, binary, root,
    library=) and dilation(model, cal)."""
    FakeMachine(monkeypatch, looks(0.05, 1), idle_gap_us=60)
    cal = capacity.calibration(fake_binary, cache_dir=tmp_path / "cache", progress=print, library=False)
    monkeypatch.setattr(capacity, "_gap_us", lambda device, k, service_us, seconds: 150.0)  # busier now
    now = capacity.with_gap_now(cal, fake_binary, tmp_path, library=False)
    assert now.round_trip_us == 150 and now.busy_cores == cal.busy_cores and now.measured == cal.measured
    assert capacity.dilation({"read_latency_us": 2000, "alpha": 3, "k_r": 16, "k_w": 4}, now).factor == 3.8


# ----------------------------------------------------------------------------- check-config

# The machine: a client's gap of 246 us, measured while other work used both cores.
BUSY = {"capacity_iops": 40000, "round_trip_us": 246.0, "busy_cores": 1.9, "attempts": 3}
IDLE = {"capacity_iops": 40000, "round_trip_us": 60.0, "busy_cores": 0.05}
SATURATION = "emu-saturation"  # alpha 3, k 16 and 4 at 2 ms: time dilation 6.2 at 246 us, too slow for 300 ms points


@pytest.fixture
def machine(monkeypatch, fake_binary, tmp_path):
    """check_emulation on this tree's configs, with emussd built (`fake_binary`), FUSE, an empty
    results tree of its own, and the calibration `calibrated` sets (retakes recorded in `taken`)."""
    monkeypatch.setattr(harness, "DEFAULT_BUILD_DIR", fake_binary.parent)
    monkeypatch.setattr(harness, "fuse_available", lambda: True)
    monkeypatch.setattr(checksums, "REPO_ROOT", tmp_path / "tree")
    state = {"calibration": BUSY, "taken": []}

    def calibration(binary, progress=None, retake="never"):
        state["taken"].append(retake)
        return capacity.Calibration(capacity.host_key(binary), **state["calibration"])
    monkeypatch.setattr(emulated, "capacity_calibration", calibration)
    return state


def profile(*swept: str) -> dict:
    """The quick profile with emussd's saturation benchmark and `swept` characterized."""
    quick = config.load_profile("quick")
    return {**quick, "devices": [SATURATION, *swept], "characterize": {**quick["characterize"], "devices": list(swept)}}


def record_sweep(tree: Path, output: str, device: str, binary: Path, time_dilation: float = 6.2, **changed):
    """A measured result of a thread sweep on `device`, with its sidecar as steps.emussd writes it."""
    path = tree / output
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("threads,iops\n1,450\n", encoding="utf-8")
    calibration = capacity.Calibration(capacity.host_key(binary), **BUSY)
    facts = {"time_dilation": time_dilation, "saturating": True, "calibration": calibration.record()}
    sidecar = {"output": output, "sha256": "0" * 64, "device": {**devices.declaration(device), **changed,
                                                                "emulation": facts}}
    path.with_name(path.name + ".json").write_text(json.dumps(sidecar), encoding="utf-8")


def test_check_config_does_not_judge_a_device_measured_and_recorded_again(machine, fake_binary, tmp_path):
    """The run used emu-saturation with time dilation 6.2 from a busy calibration; the next check-config
    (make verify, make reproduce) must not refuse the profile for it."""
    record_sweep(tmp_path / "tree", "results/emussd/saturation.csv", SATURATION, fake_binary)
    problems, notes = emulated.check_emulation(profile())
    assert problems == []
    assert ("device emu-saturation: measured with time dilation 6.2 (results/emussd/saturation.csv); not judged "
            "again") in notes
    assert machine["taken"] == []  # nothing left to judge: not even calibrated


def test_check_config_refuses_a_device_still_to_measure_on_a_busy_calibration_and_says_what_to_do(
        machine, fake_binary, tmp_path):
    problems, _ = emulated.check_emulation(profile())
    assert machine["taken"] == ["busy"]  # a busy calibration was taken again first
    (problem,) = problems
    assert problem.startswith("configs/devices.yaml: device 'emu-saturation': with time dilation 6.2 ")
    assert problem.endswith("raise runtime_ms to at least 372 or declare a slower device (a longer "
                            "read_latency_us, smaller k). The machine was busy while emussd calibrated it (other "
                            f"work used 1.9 of its {os.cpu_count()} cores in 3 attempt(s), and a client's gap was "
                            "246 us): run `make calibrate` when it is idle, then this command again.")
    machine["calibration"] = IDLE  # retaken on an idle machine
    problems, notes = emulated.check_emulation(profile())
    assert problems == [] and any(note.startswith("device emu-saturation: in thread sweeps, time dilation 1.5")
                                  for note in notes)


def test_a_result_of_another_declaration_or_another_emussd_is_judged_again(machine, fake_binary, tmp_path):
    tree = tmp_path / "tree"
    record_sweep(tree, "results/emussd/saturation.csv", SATURATION, fake_binary, alpha=2)
    assert len(emulated.check_emulation(profile())[0]) == 1, "the declaration changed: it is measured again"
    record_sweep(tree, "results/emussd/saturation.csv", SATURATION, fake_binary)
    fake_binary.write_bytes(b"emussd, rebuilt")
    assert len(emulated.check_emulation(profile())[0]) == 1, "emussd changed: it is measured again"


def test_only_the_devices_still_to_measure_are_judged(machine, fake_binary, tmp_path):
    """emu-virtual's characterization is measured; the saturation benchmark is not, so it alone is judged."""
    for table in ("sweeps", "alpha_k", "interference", "writeback"):
        record_sweep(tmp_path / "tree", f"results/pio/devices/emu-virtual/{table}.csv", "emu-virtual", fake_binary)
    problems, notes = emulated.check_emulation(profile("emu-virtual"))
    assert [problem.split(":")[1] for problem in problems] == [" device 'emu-saturation'"]
    assert any(note.startswith("device emu-virtual: measured with time dilation 6.2") for note in notes)


# ----------------------------------------------------------------------------- what a result records


@pytest.mark.skipif(not harness.fuse_available(), reason="/dev/fuse is absent: emussd needs FUSE")
def test_a_result_records_the_calibration_its_time_dilation_comes_from(binary, monkeypatch, capsys):
    calibration = capacity.Calibration(capacity.host_key(binary), **BUSY, measured="2026-12-02T00:00:00+00:00")
    monkeypatch.setattr(emulated, "capacity_calibration", lambda binary, progress=None: calibration)
    device = {"name": "emu-test-capacity", "kind": "emulated", **devices.model("optane-like")}
    with emulated.Emulator(binary, saturating=True).mount(device["name"], device, 1 << 20) as opened:
        facts = opened.provenance()["emulation"]
    assert facts["time_dilation"] == capacity.dilation(devices.emulated_model(device), calibration).factor
    assert facts["calibration"] == {**calibration.record(), "busy": True}
    assert facts["calibration"]["round_trip_us"] == 246 and facts["calibration"]["attempts"] == 3
    assert "chosen from a calibration taken while the machine was busy" in capsys.readouterr().err


# ----------------------------------------------------------------------------- a real busy machine


@pytest.mark.e2e
@pytest.mark.wall_clock
@pytest.mark.skipif(not harness.fuse_available(), reason="/dev/fuse is absent: emussd needs FUSE")
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt-get install fio)")
def test_a_calibration_on_a_loaded_machine_is_marked_busy_and_retaken_once_it_is_idle(binary, tmp_path,
                                                                                      monkeypatch):
    """One busy process per core (alone otherwise, as wall_clock tests run): every attempt is busy,
    the calibration says so, and check-config's retake on the idle machine replaces it."""
    monkeypatch.setattr(capacity, "ATTEMPTS", 2)
    monkeypatch.setattr(capacity, "BUSY_PAUSE_S", 1)
    loads = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count())]
    try:
        busy = capacity.calibration(binary, cache_dir=tmp_path, progress=print)
    finally:
        for load in loads:
            load.kill()
            load.wait()
    assert busy.busy and busy.attempts == 2 and busy.busy_cores > os.cpu_count() / 2, busy
    idle = capacity.calibration(binary, cache_dir=tmp_path, progress=print, retake="busy")
    assert not idle.busy and idle.busy_cores < capacity.BUSY_SHARE * os.cpu_count(), idle
    assert capacity.cached(binary, tmp_path) == idle
