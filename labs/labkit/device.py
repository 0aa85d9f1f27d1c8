"""A student's hidden emulated SSD (emussd): built, calibrated on this machine, mounted with its
model out of the submission's sight (emussd takes it from its environment and blanks it)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from .config import GradingError


@contextmanager
def hidden_ssd(device: dict, root: Path, page_size: int, say=print):
    """Mount `device` (read_latency_us, alpha, k_r, k_w) under `root`; yields (mount, dilation): when
    the device is faster than this machine can emulate, it runs `dilation` times slower throughout
    (times divide back by it; α, k and speedups do not change)."""
    from emussd import capacity, harness  # noqa: PLC0415

    binary = harness.build()
    plan = capacity.dilation({**device, "page_size": page_size}, capacity.calibration(binary, progress=say))
    if plan.problem:
        raise GradingError(f"this machine cannot emulate the hidden device: {plan.problem}; narrow lab.yaml's ranges")
    with harness.Mount(binary, Path(root) / "device", **device, page_size=page_size, time_dilation=plan.factor,
                       hide_model=True) as mount:
        yield mount, plan.factor
