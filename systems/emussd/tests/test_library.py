"""The library device (emussd.library, libartifact_device.so, fio's engine): emussd's model without
FUSE. The unit phase checks the counts, never the wall clock, and needs neither /dev/fuse nor root;
the wall-clock checks (e2e) hold its throughput to the declaration and to an emussd mount's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from emussd import library
from emussd.harness import fuse_available
from ssdartifact.native import googletest_failures

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt-get install fio)")
DEVICE = {"read_latency_us": 2000, "alpha": 3, "k_r": 4, "k_w": 2}


@pytest.fixture(scope="module")
def shared_library() -> Path:
    return library.build()


@pytest.fixture(scope="module")
def engine() -> Path:
    return library.fio_engine()


def test_the_c_api_googletest_suite_passes(shared_library):
    assert googletest_failures(shared_library.parent, "-j2") == ""


def test_a_device_is_checked_and_given_as_emussd_model(shared_library):
    with pytest.raises(ValueError, match="k_r must be an integer in"):
        library.Device(read_latency_us=100, alpha=2, k_r=0, k_w=1, library=shared_library)
    with pytest.raises(ValueError, match="unknown device parameters"):
        library.spec(read_latency=100)
    device = library.Device(**DEVICE, time_dilation=2.5, library=shared_library)
    assert device.spec == "read_latency_us=2000,alpha=3,k_r=4,k_w=2,page_size=4096,time_dilation=2.5"
    params = device.stats()["params"]
    assert {key: params[key] for key in DEVICE} == DEVICE and params["time_dilation"] == 2.5
    with pytest.raises(KeyError):
        device.serve("trim", 4096)
    device.close()
    with pytest.raises(ValueError, match="closed"):
        device.serve("read", 4096)


def test_python_threads_share_one_device(shared_library):
    """16 threads of 3 reads and 2 writes each on one device: every request counted, never more
    in service than k (a count of the model's own schedule, not a time)."""
    device = library.Device(read_latency_us=100, alpha=2, k_r=4, k_w=2, library=shared_library)

    def client():
        for op in ("read", "write", "read", "write", "read"):
            device.serve(op, 4096, time.monotonic_ns())

    threads = [threading.Thread(target=client) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ops = device.stats()["ops"]
    assert (ops["read"]["count"], ops["write"]["count"]) == (48, 32)
    assert ops["read"]["max_in_service"] <= 4 and ops["write"]["max_in_service"] <= 2


def fio(directory: Path, *options: str, engine: Path | None = None, model: str = "", stats: Path | None = None):
    """fio on `directory`: through the library device's engine (`engine`, with `model`) or psync."""
    io = [f"--ioengine=external:{engine}"] if engine else ["--ioengine=psync"]
    env = {**os.environ, "EMUSSD_MODEL": model, **({"EMUSSD_STATS_OUT": str(stats)} if stats else {})}
    return subprocess.run(["fio", "--name=lib", f"--directory={directory}", "--bs=4k", "--size=1m", "--direct=1", *io,
                           "--group_reporting", "--output-format=json", *options],
                          capture_output=True, text=True, env=env, timeout=120)


@needs_fio
def test_fio_charges_every_io_of_every_job_to_one_device(engine, tmp_path):
    stats = tmp_path / "stats.json"
    model = library.spec(read_latency_us=200, alpha=2, k_r=2, k_w=1)
    for rw in ("randread", "randwrite"):
        result = fio(tmp_path, "--thread", "--numjobs=4", f"--rw={rw}", "--number_ios=16", engine=engine,
                     model=model, stats=stats)
        assert result.returncode == 0, result.stderr
        side = "read" if rw == "randread" else "write"
        counted = json.loads(result.stdout[result.stdout.index("{"):])["jobs"][0][side]["total_ios"]
        ops = json.loads(stats.read_text())["ops"]
        assert ops[side]["count"] == counted == 64
        assert ops[side]["pages"] == 64 and 1 <= ops[side]["max_in_service"] <= (2 if side == "read" else 1)


@needs_fio
def test_fio_refuses_jobs_as_processes_and_a_bad_model(engine, tmp_path):
    model = library.spec(**DEVICE)
    result = fio(tmp_path, "--rw=randread", "--number_ios=4", engine=engine, model=model)  # no --thread
    assert "emussd: needs --thread" in result.stderr
    result = fio(tmp_path, "--thread", "--rw=randread", "--number_ios=4", engine=engine,
                 model="read_latency_us=2000,alpha=3")
    assert result.returncode != 0 and "needs read_latency_us, alpha, k_r and k_w" in result.stderr


# --- wall clock -----------------------------------------------------------------------------

def iops(result: subprocess.CompletedProcess, side: str) -> float:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout[result.stdout.index("{"):])["jobs"][0][side]["iops"]


@pytest.mark.e2e
@pytest.mark.wall_clock
def test_python_threads_overlap_in_the_device(shared_library):
    """ctypes releases the GIL: k threads each serving one 50 ms read finish together, not one
    after the other (k x 50 ms)."""
    device = library.Device(read_latency_us=50_000, alpha=1, k_r=8, k_w=1, library=shared_library)
    threads = [threading.Thread(target=device.serve, args=("read", 4096)) for _ in range(8)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 0.05 <= time.monotonic() - started < 0.2


POINTS = [(rw, side, k, n)
          for rw, side, k in (("randread", "read", DEVICE["k_r"]), ("randwrite", "write", DEVICE["k_w"]))
          for n in (k, 2 * k)]
TIMED = ("--thread", "--time_based", "--runtime=1", "--ramp_time=0.3", "--randrepeat=0")


def peak_iops(side: str, dilation: float) -> float:
    """k / service time of DEVICE on the wall clock."""
    service_us = DEVICE["read_latency_us"] * (DEVICE["alpha"] if side == "write" else 1) * dilation
    return DEVICE["k_r" if side == "read" else "k_w"] / service_us * 1e6


@pytest.mark.e2e
@pytest.mark.wall_clock
@needs_fio
def test_fio_on_the_library_device_reaches_k_over_the_service_time(engine, tmp_path):
    """At 2k threads the device is busy throughout: k / service time within 10 %, reads and writes.
    D = 3, about what emussd's calibration gives a 2 ms device here (no FUSE needed to run this)."""
    model = library.spec(**DEVICE, time_dilation=3)
    for rw, side, k, n in POINTS:
        if n == 2 * k:
            got = iops(fio(tmp_path, *TIMED, f"--numjobs={n}", f"--rw={rw}", engine=engine, model=model), side)
            assert got == pytest.approx(peak_iops(side, 3), rel=0.1), (side, n)


@pytest.mark.e2e
@pytest.mark.wall_clock
@needs_fio
@pytest.mark.skipif(not fuse_available(), reason="/dev/fuse is absent: the comparison needs an emussd mount")
def test_fio_sees_the_same_device_on_the_library_and_on_an_emussd_mount(engine, tmp_path, binary):
    """fio at k and 2k threads, reads and writes, with the time dilation emussd's calibration gives
    the device: the library device within 10 % of the mount at every point."""
    from emussd import capacity  # noqa: PLC0415
    from emussd.harness import Mount  # noqa: PLC0415

    dilation = capacity.dilation(DEVICE, capacity.calibration(binary, progress=print)).factor
    model = library.spec(**DEVICE, time_dilation=dilation)
    (tmp_path / "lib").mkdir()
    (tmp_path / "backing").mkdir()
    for job in range(2 * max(DEVICE["k_r"], DEVICE["k_w"])):  # fio's files, laid out beside the device
        for folder in ("lib", "backing"):
            with open(tmp_path / folder / f"lib.{job}.0", "wb") as handle:
                handle.truncate(1 << 20)
    found = {}
    with Mount(binary, tmp_path, **DEVICE, time_dilation=dilation) as mount:
        for rw, side, k, n in POINTS:  # interleaved, so that both see the machine as it is
            point = (*TIMED, f"--numjobs={n}", f"--rw={rw}")
            found[side, n] = (iops(fio(tmp_path / "lib", *point, engine=engine, model=model), side),
                              iops(fio(mount.mountpoint, *point), side))
    print(found)
    for (side, n), (on_library, on_mount) in found.items():
        assert on_library == pytest.approx(on_mount, rel=0.1), (side, n, found)
