"""A declared emulated device (configs/devices.yaml, kind `emulated`) mounted for an
experiment: how this machine emulates it, whether emussd kept up, and the mount itself.

The core (`ssdartifact.devices`) resolves and checks every declaration and opens file and
block devices; it is handed an `Emulator` (by the steps that run experiments) to open an
emulated one, so the core never depends on emussd.

An emulated device faster than this machine can emulate runs with a time dilation D
(emussd.capacity chooses it from a calibration of the machine, cached under
scratch/emussd/calibration/): every service time D times longer on the wall clock. Results
that carry absolute time are converted back to the declared time scale by
`ssdartifact.devices.to_declared_time`, and carry D in a column and in their provenance.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ssdartifact import REPO_ROOT, checksums, config
from ssdartifact.devices import DeviceError, OpenDevice, check_space, declaration, emulated_model

from . import capacity, harness

EMULATED_ROOT = REPO_ROOT / "scratch" / "emussd"


def emulation(device: dict, binary: Path, *, saturating: bool = True, progress=None, calibration=None):
    """How emussd emulates `device` on this machine: (an emussd.capacity.Dilation whose factor is the
    time dilation, the calibration it comes from). The calibration is `calibration`, else this
    host's, measured first when there is none.

    `saturating`: the experiment offers the device up to 4 x k concurrent I/Os (a fio thread sweep),
    so its declared peak must fit the machine: the factor is the calibration's. Any other experiment
    (a database, a graph engine) runs at the declared time scale (factor 1, or the declared
    time_dilation): it offers far fewer I/Os at once, and a dilation would not slow its CPU work
    down, so it would change what it measures; whether emussd kept up is checked after the run
    (`fidelity`). Raises DeviceError, with the numbers, when the device cannot be emulated."""
    if calibration is None:
        try:
            calibration = capacity_calibration(binary, progress)
        except capacity.EmussdError as error:
            raise DeviceError(f"device {device['name']!r}: {CALIBRATION_FAILED}: {error}") from error
    plan = capacity.dilation(emulated_model(device), calibration)
    where = f"configs/devices.yaml: device {device['name']!r}"
    if plan.problem:
        raise DeviceError(f"{where} cannot be emulated faithfully on this machine: {plan.problem}; "
                          f"{plan.describe()}. Declare a longer read_latency_us or a smaller k_r / k_w.")
    declared = device.get("time_dilation")
    if declared is not None and saturating and declared < plan.factor:
        raise DeviceError(f"{where} declares time_dilation {declared:g}, but this machine needs at least "
                          f"{plan.describe()}. Raise time_dilation or remove it (then it is chosen).")
    factor = declared if declared is not None else plan.factor if saturating else 1.0
    return dataclasses.replace(plan, factor=float(factor)), calibration


CALIBRATION_FAILED = "emussd's calibration of this machine failed"


def capacity_calibration(binary: Path, progress=None, retake: str = "never"):
    """This host's emussd calibration (a seam the tests replace: a real one takes 10 to 20 s);
    `retake`: capacity.calibration's."""
    return capacity.calibration(binary, progress=progress, retake=retake)


LATE_SHARE_WARNED = 0.10  # mean lateness beyond this share of the mean service time: not faithful


def fidelity(stats: dict) -> dict:
    """Whether emussd kept up during a run, from its counters: per operation, the mean service time
    and how late requests completed after it on average (the sleep's overshoot when all is well;
    more when the machine could not keep up), and a warning when that exceeds LATE_SHARE_WARNED."""
    facts, warnings = {}, []
    for op in ("read", "write"):
        counters = stats["ops"][op]
        if not counters["count"]:
            continue
        service = counters["declared_service_time_us"] / counters["count"]
        late = counters["late_time_us"] / counters["count"]
        facts[op] = {"count": counters["count"], "mean_service_us": round(service, 1), "mean_late_us": round(late, 1),
                     "overruns": counters["overruns"]}
        if service and late > LATE_SHARE_WARNED * service:
            warnings.append(f"{op}s completed on average {late:.0f} us ({late / service:.0%}) after their "
                            f"{service:.0f} us service time")
    return {**facts, "warning": "; ".join(warnings)}


MIN_IOS_PER_POINT = 10  # a fio point must see at least this many requests per thread


def check_emulation(profile: dict, progress=None) -> tuple[list[str], list[str]]:
    """check-config's look at the profile's emulated devices: (problems, notes). A device that a
    thread sweep uses (the characterization, emussd's saturation benchmark) must fit with its time
    dilation, and its slowest request must still fit MIN_IOS_PER_POINT times in a fio point; one
    whose thread sweep is already measured and recorded (`recorded_sweeps`) is not judged again,
    since the calibration of today's machine says nothing about a result made before. The
    calibration is measured when that was not done yet for the built emussd (10 to 20 s), and
    measured again when it was taken on a busy machine and a device still has to be judged."""
    emulated = [declaration(name) for name in profile["devices"] if declaration(name)["kind"] == "emulated"]
    if not emulated:
        return [], []
    binary = harness.DEFAULT_BUILD_DIR / "emussd"
    later = "the workflow checks each emulated device, and chooses its time dilation, when it first mounts it"
    if not harness.fuse_available():
        return [], [f"devices: not checked here, /dev/fuse is absent; {later}"]
    if not binary.exists():
        return [], [f"devices: not checked yet, emussd is not built ({binary}); {later} (or build it, "
                    "see systems/emussd/README.md, and run check-config again)"]
    swept = set(profile["characterize"]["devices"]) | {config.load("experiments/emussd.yaml")["saturation"]["device"]}
    recorded = recorded_sweeps(binary)
    problems, notes = [], []
    judged = []
    for device in emulated:
        if device["name"] in swept and device["name"] in recorded:
            path, facts = recorded[device["name"]]
            notes.append(f"device {device['name']}: measured with time dilation {facts['time_dilation']:g} ({path}); "
                         "not judged again")
        else:
            judged.append(device)
    undilated = ("devices: a database or a graph engine runs every emulated device undilated (its own CPU time "
                 "would not be slowed down); emussd's counters say after each run whether the machine kept up")
    if not judged:
        return problems, [*notes, undilated]
    # Only a thread sweep's time dilation depends on how busy the machine was.
    retake = "busy" if any(device["name"] in swept for device in judged) else "never"
    try:
        calibration = capacity_calibration(binary, progress, retake=retake)
    except capacity.EmussdError as error:
        return [f"{CALIBRATION_FAILED}: {error}"], notes
    runtime_ms = profile["fio_point"]["runtime_ms"]
    busy = (f" The machine was busy while emussd calibrated it ({calibration.how_busy()}): run `make calibrate` "
            "when it is idle, then this command again." if calibration.busy else "")
    for device in judged:
        try:
            plan, _ = emulation(device, binary, saturating=True, calibration=calibration)
        except DeviceError as error:
            problems.append(f"{error}{busy}")
            continue
        model = emulated_model(device)
        slowest_ms = model["read_latency_us"] * max(1.0, model["alpha"]) * plan.factor / 1000
        if device["name"] in swept and slowest_ms * MIN_IOS_PER_POINT > runtime_ms:
            problems.append(f"configs/devices.yaml: device {device['name']!r}: with {plan.describe()}, its slowest "
                            f"page takes {slowest_ms:g} ms on the wall clock, so a fio point of the profile's "
                            f"fio_point.runtime_ms {runtime_ms} sees fewer than {MIN_IOS_PER_POINT} requests per "
                            f"thread; raise runtime_ms to at least {slowest_ms * MIN_IOS_PER_POINT:.0f} or declare a "
                            f"slower device (a longer read_latency_us, smaller k).{busy}")
        else:
            notes.append(f"device {device['name']}: in thread sweeps, {plan.describe()}")
    if calibration.busy and not problems:
        notes.append(f"devices: the machine was busy while emussd calibrated it ({calibration.how_busy()}), so these "
                     "time dilations are larger than an idle machine needs; `make calibrate` takes it again")
    return problems, [*notes, undilated]


def recorded_sweeps(binary: Path) -> dict[str, tuple[str, dict]]:
    """The emulated devices whose thread sweep is measured in this tree, with this emussd on this
    machine: name -> (a result, the emulation its sidecar records). A result counts while its
    device's declaration is today's (a changed one is measured again)."""
    machine = capacity.host_key(binary)
    found = {}
    for path, record in checksums.sidecars().items():
        device = dict(record.get("device") or {})
        facts = device.pop("emulation", None) or {}
        if not facts.get("saturating") or not capacity.same_machine(facts["calibration"]["host"], machine):
            continue
        try:
            if device == declaration(device["name"]):
                found.setdefault(device["name"], (path, facts))
        except DeviceError:  # no longer declared
            continue
    return found


def calibrate_again(profile: dict, progress=print) -> int:
    """`make calibrate`: this machine's calibration for the built emussd taken again, and the time
    dilation it gives each emulated device of `profile` in thread sweeps. 1 when it could not be
    taken, or the machine was busy every time."""
    binary = harness.DEFAULT_BUILD_DIR / "emussd"
    if not harness.fuse_available() or not binary.exists():
        progress(f"calibrate: nothing to calibrate: emussd is not built ({binary}) or /dev/fuse is absent; the "
                 "workflow calibrates this machine when it first mounts an emulated device")
        return 1
    try:
        calibration = capacity_calibration(binary, progress, retake="always")
    except capacity.EmussdError as error:
        progress(f"calibrate: {CALIBRATION_FAILED}: {error}")
        return 1
    progress(f"calibrate: {capacity.cache_path(calibration.host)}: a client's gap {calibration.round_trip_us:.0f} us, "
             f"{calibration.capacity_iops:,.0f} page I/Os per s served faithfully")
    for name in profile["devices"]:
        if declaration(name)["kind"] != "emulated":
            continue
        try:
            plan, _ = emulation(declaration(name), binary, calibration=calibration)
            progress(f"calibrate: device {name}: in thread sweeps, {plan.describe()}")
        except DeviceError as error:
            progress(f"calibrate: {error}")
    if calibration.busy:
        progress(f"calibrate: the machine was busy in every attempt ({calibration.how_busy()}): run `make "
                 "calibrate` again when it is idle")
        return 1
    return 0


@dataclasses.dataclass(frozen=True)
class Emulator:
    """Mounts emulated devices with the built emussd `binary` (see `emulation` for `saturating`);
    `stats_out`: where emussd's counters are copied when it unmounts."""
    binary: Path
    stats_out: Path | None = None
    saturating: bool = False

    @contextmanager
    def mount(self, name: str, device: dict, needed_bytes: int) -> Iterator[OpenDevice]:
        """The emulated device mounted, from an empty backing store (the caller holds its lock),
        and always unmounted afterwards, also when the experiment fails or is interrupted."""
        plan, calibration = emulation(device, self.binary, saturating=self.saturating, progress=_say)
        facts = {"time_dilation": plan.factor, "reason": plan.describe(), "saturating": self.saturating,
                 "calibration": calibration.record()}
        if self.saturating and calibration.busy:
            _say(f"warning: device {name!r} runs with time dilation {plan.factor:g}, chosen from a calibration taken "
                 f"while the machine was busy ({calibration.how_busy()}); its results record it")
        root = EMULATED_ROOT / name
        shutil.rmtree(root / "backing", ignore_errors=True)  # each experiment starts from an empty device
        root.mkdir(parents=True, exist_ok=True)
        check_space(root, needed_bytes, needed_bytes, name)
        with harness.Mount(self.binary, root, stats_out=self.stats_out, time_dilation=plan.factor,
                           **emulated_model(device)) as mount:
            (mount.backing / "io").mkdir(exist_ok=True)

            def refresh():
                _check_fidelity(name, mount, facts)
                mount.stop()
                mount.start()

            def written_pages():
                return mount.stats()["ops"]["write"]["pages"]

            yield OpenDevice(name, device, mount.mountpoint / "io", mount.backing / "io",
                             time_dilation=plan.factor, emulation=facts, refresh=refresh,
                             written_pages=written_pages, written_pages_source="emussd counters")
            _check_fidelity(name, mount, facts)
        shutil.rmtree(root / "backing", ignore_errors=True)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _check_fidelity(name: str, mount, facts: dict) -> None:
    """Record whether emussd kept up with the mount's requests so far, and warn when it did not."""
    facts["fidelity"] = fidelity(mount.stats())
    if facts["fidelity"]["warning"]:
        print(f"warning: emussd did not keep up with device {name!r} on this machine: "
              f"{facts['fidelity']['warning']}", file=sys.stderr)


def unmount_stale() -> list[Path]:
    """Unmount emussd mounts left behind by an interrupted run (called when the workflow starts and
    ends). A mount whose emussd still has the process that started it is another run's, in use
    (two workflows may run at once on disjoint outputs), and is left alone."""
    left = []
    if EMULATED_ROOT.exists():
        for mountpoint in EMULATED_ROOT.glob("*/mnt"):
            if os.path.ismount(mountpoint) and not _held_by_a_live_run(mountpoint):
                subprocess.run(["fusermount3", "-uz", str(mountpoint)], capture_output=True)
                left.append(mountpoint)
    return left


def _held_by_a_live_run(mountpoint: Path) -> bool:
    """Whether the emussd serving `mountpoint` was started by a process that is still alive (the
    harness runs emussd as its child; a left-over emussd was detached, or lost its parent)."""
    wanted = str(mountpoint).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
            if b"--mountpoint" not in arguments or arguments[arguments.index(b"--mountpoint") + 1] != wanted:
                continue
            status = (entry / "status").read_text()
        except (OSError, IndexError):
            continue
        parent = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
        return parent > 1 and Path(f"/proc/{parent}").exists()
    return False


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m emussd.device", description="emussd's calibration of this machine")
    parser.add_argument("command", choices=["calibrate"], help="take it again (make calibrate)")
    parser.add_argument("--profile", default="quick", help="the profile whose emulated devices are shown")
    sys.exit(calibrate_again(config.load_profile(parser.parse_args().profile)))
