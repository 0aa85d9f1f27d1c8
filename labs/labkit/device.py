"""A student's hidden emulated SSD: built, calibrated on this machine as it is now, and out of the
submission's sight. Two kinds, with the same alpha and k (measured: systems/emussd/README.md, "The
library device"):

- `fuse`: an emussd mount (FUSE), where the machine lets the grader mount one; the model is in
  emussd's environment, which it blanks;
- `library`: an ordinary folder whose I/O is charged to emussd's device model as a library, where
  FUSE is not there (Gradescope's unprivileged containers): fio through its external engine, the
  write-back application and the I/O replay through the model in the grader's process, CAVE
  through `--emulate`.

Either way the grader's tools read the device; only lab 3's traversal reads it from the student's
process (CAVE's engine, linked with it: labkit.plugin refuses a traversal that opens files
itself, so that it cannot read the graph around the model)."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

from .config import GradingError

KIND_ENV = "LABKIT_DEVICE"  # fuse or library: which kind to use, whatever the machine allows
# A root grader (Gradescope, `sudo`) runs the device and the tools that measure it (fio, the
# write-back application, the I/O replay) in a real-time class, above the machine's other work: a
# CPU hog then delays them only by the kernel's real-time throttling (5 % of each second). The
# sandboxed calls go back to the normal class (labkit.sandbox), so a submission never has it.
REAL_TIME = os.SCHED_RR
REAL_TIME_PRIORITY = 10


def kind() -> str:
    """'fuse' where this machine can mount emussd (/dev/fuse, and root or fusermount3), else
    'library'; $LABKIT_DEVICE chooses."""
    chosen = os.environ.get(KIND_ENV, "")
    if chosen:
        if chosen not in ("fuse", "library"):
            raise GradingError(f"{KIND_ENV}={chosen!r}: use fuse or library")
        return chosen
    can_mount = os.access("/dev/fuse", os.R_OK | os.W_OK) and (os.geteuid() == 0 or shutil.which("fusermount3"))
    return "fuse" if can_mount else "library"


@contextmanager
def priority():
    """The grader's process (and what it starts) in the real-time class while it lasts, where the
    grader may (root); else nothing changes."""
    before = (os.sched_getscheduler(0), os.sched_getparam(0))
    try:
        os.sched_setscheduler(0, REAL_TIME, os.sched_param(REAL_TIME_PRIORITY))
    except PermissionError:
        yield
        return
    try:
        yield
    finally:
        os.sched_setscheduler(0, before[0], before[1])


def prepare(say=print) -> None:
    """Build the hidden devices' emulator for this machine's kind and calibrate it (once per machine)."""
    from emussd import capacity  # noqa: PLC0415

    with priority():
        capacity.calibration(_emulator(say), progress=say, library=kind() == "library")


def _emulator(say=print) -> Path:
    """emussd's binary, or the library device's fio engine, built."""
    if kind() == "fuse":
        from emussd import harness  # noqa: PLC0415

        say("building emussd")
        return harness.build()
    from emussd import library  # noqa: PLC0415

    say("building emussd's device model as a library, and fio's engine over it")
    return library.fio_engine()


class HiddenDevice:
    """What the graders use of a hidden device, whichever its kind: `mountpoint` (where the files
    are), `backing` (where the grader prepares them: sparse files behind a mount, the same folder
    otherwise), `fio_ioengine` and `fio_environment()`, `model` (the device for the Python tools'
    `device=`, None behind a mount) and `emulate` (CAVE's `--emulate`, None behind a mount)."""

    def __init__(self, device, model=None, emulate: str | None = None):
        self.mountpoint, self.backing = device.mountpoint, device.backing
        self.fio_ioengine, self.fio_environment = device.fio_ioengine, device.fio_environment
        self.model, self.emulate = model, emulate


@contextmanager
def hidden_ssd(device: dict, root: Path, page_size: int, say=print):
    """`device` (read_latency_us, alpha, k_r, k_w) under `root`; yields (HiddenDevice, dilation): when
    the device is faster than this machine can emulate now (the cached calibration, with a
    client's gap measured again before each device), it runs `dilation` times slower throughout
    (times divide back by it; alpha, k and speedups do not change)."""
    from emussd import capacity, harness  # noqa: PLC0415

    library = kind() == "library"
    binary = _emulator(lambda message: None)
    with priority():
        calibration = capacity.with_gap_now(capacity.calibration(binary, progress=say, library=library), binary, root,
                                            library=library)
        plan = capacity.dilation({**device, "page_size": page_size}, calibration)
        if plan.problem:
            raise GradingError(f"this machine cannot emulate the hidden device: {plan.problem}; narrow lab.yaml's "
                               "ranges")
        model = {**device, "page_size": page_size, "time_dilation": plan.factor}
        if library:
            from emussd import library as library_device  # noqa: PLC0415

            with library_device.Folder(Path(root) / "device", **model) as folder:
                yield HiddenDevice(folder, folder.device, library_device.spec(**model)), plan.factor
        else:
            with harness.Mount(binary, Path(root) / "device", **model, hide_model=True) as mount:
                yield HiddenDevice(mount), plan.factor
