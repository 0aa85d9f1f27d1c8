"""emussd's timing on the wall clock (end-to-end phase: `pytest -m e2e`).

Every bound is relative to this machine's calibration (emussd.capacity: its emulation capacity and
a client's round trip, measured once per host and binary and cached), never a fixed constant of
another machine, and no check is retried: a device declared beyond the machine runs with the time
dilation the calibration gives it. Clients are fio (psync, 4 KiB, O_DIRECT) except where noted.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from emussd import capacity
from emussd.harness import DEFAULT_BUILD_DIR, fuse_available
from ssdartifact.native import googletest_failures

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.wall_clock,
    pytest.mark.skipif(not fuse_available(), reason="/dev/fuse is absent: emussd needs FUSE"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt-get install fio)"),
]

SECONDS = 1.0  # fio's measured time per point (after a 0.3 s ramp)


@pytest.fixture(scope="module")
def machine(binary) -> capacity.Calibration:
    return capacity.calibration(binary, progress=print)


def mounted(binary, root: Path, machine, **model):
    """The device with the time dilation this machine needs for it, and that factor."""
    plan = capacity.dilation(model, machine)
    assert not plan.problem, plan.problem
    return capacity.device_with_data(binary, root, time_dilation=plan.factor, **model), plan.factor


def test_googletest_timing_tests_pass(binary):
    """serve()'s wall-clock bounds, each relative to the sleep precision measured in the same test."""
    failures = googletest_failures(DEFAULT_BUILD_DIR, "-L", "timing", timeout=300)
    assert not failures, failures


def test_single_thread_latency_and_alpha(binary, machine, tmp_path):
    """One thread sees the service time plus this machine's round trip; writes cost alpha reads."""
    model = {"read_latency_us": 2000, "alpha": 3.0, "k_r": 1, "k_w": 1}
    device, dilation = mounted(binary, tmp_path, machine, **model)
    with device as m:
        read = capacity.fio_point(m, rw="randread", jobs=1, seconds=SECONDS)["clat_p50_us"]
        write = capacity.fio_point(m, rw="randwrite", jobs=1, seconds=SECONDS)["clat_p50_us"]
    service = model["read_latency_us"] * dilation
    overhead = read - service
    text = (f"read {read:.0f} us, write {write:.0f} us, service {service:.0f} us, "
            f"client gap {machine.round_trip_us:.0f} us")
    assert 0 <= overhead <= 2 * machine.round_trip_us + 50, text  # never early; about the calibrated round trip
    # The round trip is the same for both: the difference is (alpha - 1) service times.
    assert (write - read) / ((model["alpha"] - 1) * service) == pytest.approx(1, abs=0.05), text


@pytest.mark.parametrize("op", ["read", "write"])
def test_throughput_grows_until_k_then_stays_flat_to_4k(binary, machine, tmp_path, op):
    """Linear to k (less the round trip's share), then flat within 10 % up to 4k threads, never above
    k / service time, and the mean latency is Little's law's threads / throughput."""
    model = {"read_latency_us": 2000, "alpha": 3.0, "k_r": 8, "k_w": 4}
    k = model["k_r"] if op == "read" else model["k_w"]
    device, dilation = mounted(binary, tmp_path, machine, **model)
    service_us = model["read_latency_us"] * dilation * (1 if op == "read" else model["alpha"])
    at_k = service_us / (service_us + machine.round_trip_us)  # a closed-loop client leaves a slot idle that long
    points = {}
    with device as m:
        for n in (1, k // 2, k, 2 * k, 4 * k):
            points[n] = capacity.fio_point(m, rw=f"rand{op}", jobs=n, seconds=SECONDS)
        stats = m.stats()["ops"][op]
    fraction = {n: p["iops"] / (min(n, k) / service_us * 1e6) for n, p in points.items()}
    little = {n: p["clat_mean_us"] / (n / p["iops"] * 1e6) for n, p in points.items()}
    text = ", ".join(f"n={n}: {fraction[n]:.3f} of min(n,k)/service, latency {little[n]:.3f} of Little's"
                     for n in points)
    grows = [n for n in points if n <= k]
    assert all(points[a]["iops"] < points[b]["iops"] for a, b in zip(grows, grows[1:])), text
    assert all(fraction[n] >= at_k - 0.1 for n in grows), text
    assert all(0.9 <= fraction[n] <= 1.03 for n in (2 * k, 4 * k)), text
    assert all(little[n] == pytest.approx(1, abs=0.1) for n in (2 * k, 4 * k)), text
    assert stats["max_in_service"] == k and stats["max_queue_length"] >= 2 * k, stats


@pytest.mark.parametrize("model", [
    {"read_latency_us": 50, "alpha": 1.2, "k_r": 16, "k_w": 16},
    {"read_latency_us": 200, "alpha": 4.0, "k_r": 32, "k_w": 4},
], ids=["50us-k16", "200us-a4-k32"])
def test_a_device_beyond_the_machine_is_faithful_with_its_time_dilation(binary, machine, tmp_path, model):
    """Declared at many times what 2 cores can emulate: dilated, it stays flat to 4k with Little's law
    (without dilation its throughput collapsed to 0.3-0.7 of the peak past k)."""
    device, dilation = mounted(binary, tmp_path, machine, **model)
    assert dilation > 1
    with device as m:
        for op, k, service_us in (("read", model["k_r"], model["read_latency_us"]),
                                  ("write", model["k_w"], model["read_latency_us"] * model["alpha"])):
            peak = k / (service_us * dilation) * 1e6
            for n in (k, 4 * k):
                # Each thread completes at least 20 I/Os: a window of a few latencies leaves the
                # slowest ones in flight at its end, and the mean of those that completed comes out
                # low (dilated 120 times, a write at 16 threads takes 0.38 s: 0.89 of Little's in 1 s).
                seconds = max(SECONDS, 20 * n / peak)
                p = capacity.fio_point(m, rw=f"rand{op}", jobs=n, seconds=seconds)
                text = f"{op} at {n} threads, dilation {dilation:g}: {p['iops']:.0f} IOPS of {peak:.0f}"
                if n == 4 * k:
                    assert 0.9 <= p["iops"] / peak <= 1.03, text
                    assert p["clat_mean_us"] / (n / p["iops"] * 1e6) == pytest.approx(1, abs=0.1), text
                else:
                    assert p["iops"] / peak >= 0.8, text


def test_shared_channels_limit_reads_and_writes_together(mounts, machine, tmp_path):
    """With channels = 3, 4 readers and 4 writers (Python threads) together get 3 / service time."""
    root = tmp_path / "ch"
    (root / "backing").mkdir(parents=True)
    for i in range(8):
        (root / "backing" / f"f{i}").write_bytes(bytes(16 * 4096))
    m = mounts(root=root, read_latency_us=2000, alpha=1, k_r=4, k_w=4, channels=3)
    done = [0] * 8
    stop = time.monotonic() + 2 * SECONDS

    def work(i):
        fd = os.open(m.mountpoint / f"f{i}", os.O_RDWR | os.O_DIRECT)
        import mmap
        buf = mmap.mmap(-1, 4096)
        try:
            while time.monotonic() < stop:
                (os.preadv if i < 4 else os.pwritev)(fd, [buf], (done[i] % 16) * 4096)
                done[i] += 1
        finally:
            os.close(fd)

    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rate = sum(done) / (time.monotonic() - started) / (3 / 2e-3)
    ops = m.stats()["ops"]
    assert 0.9 <= rate <= 1.03, rate
    assert ops["read"]["max_in_service"] <= 3 and ops["write"]["max_in_service"] <= 3
