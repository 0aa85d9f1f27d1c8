"""A student's hidden emulated SSD (emussd): built, calibrated on this machine as it is now, mounted
with its model out of the submission's sight (emussd takes it from its environment and blanks it)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from .config import GradingError

# A root grader (Gradescope, `sudo`) runs the device and the tools that measure it (fio, the
# write-back application, the I/O replay) in a real-time class, above the machine's other work: a
# CPU hog then delays them only by the kernel's real-time throttling (5 % of each second). The
# sandboxed calls go back to the normal class (labkit.sandbox), so a submission never has it.
REAL_TIME = os.SCHED_RR
REAL_TIME_PRIORITY = 10


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


@contextmanager
def hidden_ssd(device: dict, root: Path, page_size: int, say=print):
    """Mount `device` (read_latency_us, alpha, k_r, k_w) under `root`; yields (mount, dilation): when
    the device is faster than this machine can emulate now (the cached calibration, with a
    client's gap measured again before each device), it runs `dilation` times slower throughout
    (times divide back by it; alpha, k and speedups do not change)."""
    from emussd import capacity, harness  # noqa: PLC0415

    binary = harness.build()
    with priority():
        calibration = capacity.with_gap_now(capacity.calibration(binary, progress=say), binary, root)
        plan = capacity.dilation({**device, "page_size": page_size}, calibration)
        if plan.problem:
            raise GradingError(f"this machine cannot emulate the hidden device: {plan.problem}; narrow lab.yaml's "
                               "ranges")
        with harness.Mount(binary, Path(root) / "device", **device, page_size=page_size, time_dilation=plan.factor,
                           hide_model=True) as mount:
            yield mount, plan.factor
