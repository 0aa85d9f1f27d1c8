"""Which jobs may run at once (workflow/rules/common.smk): with emulated_side_by_side, two
measurements on emulated devices share the machine, and nothing else ever runs beside a
measurement; without it, each measurement takes every core. Checked on Snakemake's own plan (a
dry run), and the lock that keeps two experiments off one emulated device."""

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
    """(rule, device or '', threads, machine share or None, devices held, priority) of every job of a
    forced dry run."""
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
        share = re.search(r"machine_share=(\d+)", block)
        held = set(re.findall(r"device_(\w+)=1", block))
        priority = re.search(r"priority: (\d+)", block)
        jobs.append((rule.group(1), device.group(1) if device else "", int(threads.group(1)) if threads else 1,
                     int(share.group(1)) if share else None, held, int(priority.group(1)) if priority else 0))
    return jobs


def test_measurements_on_emulated_devices_run_two_at_a_time_and_nothing_beside_them():
    jobs = planned_jobs("quick", "emulated_side_by_side=true")
    emulated = {name for rule, name, *_ in jobs if name and devices.declaration(name)["kind"] == "emulated"}
    side_by_side = [(rule, name) for rule, name, threads, share, *_ in jobs if share == 1]
    assert side_by_side and all(rule in MEASUREMENTS and name in emulated for rule, name in side_by_side)
    assert all(threads == 1 for rule, name, threads, share, *_ in jobs if share == 1)
    alone = [(rule, name, threads) for rule, name, threads, share, *_ in jobs if share == 2]
    # a measurement on the machine's own disk runs alone with every core, as does every computation
    assert ("characterize_device", "local-disk", 2) in alone
    assert {rule for rule, _, _ in alone} >= {"build_ace_server", "load_ace_templates", "draw_figure",
                                              "emussd_saturation_sweep", "crosscheck_restore_emulator"}
    assert len(alone) + len(side_by_side) == len(jobs)
    # each measurement holds its device, and ACE's also the device its WAL is written to: two
    # ACE campaigns never run side by side
    for rule, name, _, _, held, _ in jobs:
        if rule in MEASUREMENTS:
            wal = {"local_disk"} if rule == "run_ace_experiments" else set()
            assert held == {name.replace("-", "_")} | wal, (rule, name, held)


def test_side_by_side_the_longest_lane_starts_first_and_real_devices_come_last():
    """The order that keeps both lanes busy: the builds the measurements need, then ACE's campaigns
    (one lane: they share the WAL device), beside them the other emulated measurements, and the
    measurements that run alone (real devices) only when no emulated one is ready."""
    jobs = planned_jobs("quick", "emulated_side_by_side=true")
    priority = {(rule, name): p for rule, name, *_, p in jobs}
    builds = [priority[(rule, "")] for rule in ("fetch_postgresql_source", "build_ace_server", "load_ace_templates",
                                                "build_emussd", "build_cave")]
    measurements = {(rule, name): p for (rule, name), p in priority.items() if rule in MEASUREMENTS}
    emulated = {key: p for key, p in measurements.items() if devices.declaration(key[1])["kind"] == "emulated"}
    ace = [p for (rule, _), p in emulated.items() if rule == "run_ace_experiments"]
    others = [p for (rule, _), p in emulated.items() if rule != "run_ace_experiments"]
    real = [p for key, p in measurements.items() if key not in emulated]
    assert ace and others and real
    assert min(builds) > max(ace) > max(others) > max(real)
    assert min(others) > 0 and max(real) == 0
    # the deterministic jobs that need no measurement keep the default
    assert priority[("build_restore_simulator", "")] == 0


def test_without_the_setting_every_measurement_takes_every_core():
    jobs = planned_jobs("quick", "emulated_side_by_side=false")
    measurements = [(threads, held) for rule, _, threads, _, held, _ in jobs if rule in MEASUREMENTS]
    assert measurements and all(threads == 2 and not held for threads, held in measurements)


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


def test_the_setting_on_the_command_line_is_true_or_false():
    """Snakemake hands `--config emulated_side_by_side=false` on as the string 'false', which Python
    takes for yes: the workflow reads it as no, and refuses what is neither."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", "--config", "profile=quick",
                             "emulated_side_by_side=maybe"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode != 0
    assert "--config emulated_side_by_side=maybe: expected true or false" in result.stdout + result.stderr
