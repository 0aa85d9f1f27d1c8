"""Which jobs may run at once (workflow/rules/common.smk): a measurement takes every core, so
nothing runs beside it. Checked on Snakemake's own plan (a dry run), and the lock that keeps two
experiments off one emulated device."""

import os
import re
import subprocess
import sys
import time

import pytest

from ssdartifact import REPO_ROOT, devices

MEASUREMENTS = {"characterize_device", "search_device_threads", "run_ace_experiments", "run_cave_experiments",
                "run_cave_baselines"}


def planned_jobs(profile, *settings):
    """(rule, device or '', threads, devices held) of every job of a forced dry run."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--forceall", "--cores", "2",
                             "--config", f"profile={profile}", *settings], cwd=REPO_ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule is None:
            continue
        device = re.search(r"wildcards: .*device=([\w-]+)", block)
        threads = re.search(r"threads: (\d+)", block)
        held = set(re.findall(r"device_(\w+)=1", block))
        jobs.append((rule.group(1), device.group(1) if device else "", int(threads.group(1)) if threads else 1, held))
    return jobs


def test_every_measurement_takes_every_core():
    """On one machine a measurement runs alone: it takes every core, and holds no device (nothing
    could run beside it on another; on a cluster it holds its device: common.smk, devices_held)."""
    measurements = [(name, threads, held) for rule, name, threads, held in planned_jobs("quick")
                    if rule in MEASUREMENTS]
    assert {devices.declaration(name)["kind"] for name, *_ in measurements} >= {"emulated", "file"}
    assert all(threads == 2 and not held for _, threads, held in measurements)


def test_a_second_experiment_on_an_emulated_device_waits_for_the_first(tmp_path):
    lock = tmp_path / "emu-x.lock"
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\n"
                               f"h = open({str(lock)!r}, 'w'); fcntl.flock(h, fcntl.LOCK_EX)\n"
                               "print('held', flush=True); time.sleep(1.0)"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    started = time.monotonic()
    read, write = os.pipe()
    with os.fdopen(write, "w") as stderr_copy:
        saved, sys.stderr = sys.stderr, stderr_copy
        try:
            with devices._held(lock, "device 'emu-x' is in use by another experiment: waiting"):
                waited = time.monotonic() - started
        finally:
            sys.stderr = saved
    assert holder.wait() == 0
    assert waited > 0.3  # it got the device only once the holder had let go
    assert os.fdopen(read).read() == "device 'emu-x' is in use by another experiment: waiting\n"



def test_an_experiment_may_open_a_device_its_own_process_holds(monkeypatch, tmp_path):
    """ACE's runs on the local disk open it twice, as the WAL device and as the device measured:
    the second open must not wait on the first's lock (a deadlock, not a wait)."""
    import signal
    monkeypatch.setattr(devices, "DEVICE_LOCKS", tmp_path)
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the second open waited on this process's own lock"))
    signal.alarm(10)
    try:
        with devices.opened("local-disk", 4096) as wal, devices.opened("local-disk", 4096) as measured:
            assert wal.io_dir == measured.io_dir
    finally:
        signal.alarm(0)
    assert devices._HELD_HERE == set()


def test_a_switch_on_the_command_line_is_true_or_false():
    """Snakemake hands `--config rerun_on_runtime_change=false` on as the string 'false', which Python
    takes for yes: the workflow reads it as no, and refuses what is neither."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", "--config", "profile=quick",
                             "rerun_on_runtime_change=maybe"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode != 0
    assert "--config rerun_on_runtime_change=maybe: expected true or false" in result.stdout + result.stderr
