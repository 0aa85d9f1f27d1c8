"""The Parametric I/O (PIO) model of thesis Chapter 3 (T596-667) and the
expected-parallelism analysis of Section 2.4 (T458-474).

PIO(M, k_r, k_w, alpha): a read costs 1, a write costs alpha >= 1, and a device
can serve k_r reads or k_w writes at once. An application class decides which
of the two costs are divided by the concurrency (T616-656). Everything here is
written once and used by the figure grids, the claims and later chapters.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class AppClass(str, Enum):
    """The four application classes of thesis Section 3.2.1."""

    UNBATCHABLE = "unbatchable_reads_unbatchable_writes"
    BATCHABLE_WRITES = "unbatchable_reads_batchable_writes"
    BATCHABLE_READS = "batchable_reads_unbatchable_writes"
    BATCHABLE_BOTH = "batchable_reads_batchable_writes"


@dataclass(frozen=True)
class Device:
    """PIO device parameters, with the names used everywhere in the artifact."""

    alpha: float
    k_r: int = 1
    k_w: int = 1

    def __post_init__(self) -> None:
        if not self.alpha >= 1:
            raise ValueError(f"PIO needs alpha >= 1 (writes at least as costly as reads), got alpha={self.alpha}")
        for name in ("k_r", "k_w"):
            value = getattr(self, name)
            if value < 1:
                raise ValueError(f"PIO needs {name} >= 1, got {name}={value}")


def _check_read_fraction(f_r: float) -> None:
    if not 0.0 <= f_r <= 1.0:
        raise ValueError(f"the read fraction f_r must be in [0, 1], got {f_r}")


def operation_costs(app: AppClass, device: Device) -> tuple[float, float]:
    """Per-operation (read, write) cost under PIO for an application class (the cost table of T616-656).

    Under the external-memory (EM) model every class pays (1, alpha).
    """
    read_cost = 1.0 / device.k_r if app in (AppClass.BATCHABLE_READS, AppClass.BATCHABLE_BOTH) else 1.0
    write_cost = (device.alpha / device.k_w if app in (AppClass.BATCHABLE_WRITES, AppClass.BATCHABLE_BOTH)
                  else device.alpha)
    return read_cost, write_cost


def cost_per_operation(f_r: float, device: Device, app: AppClass = AppClass.UNBATCHABLE) -> float:
    """Normalised cost of one operation of a workload with read fraction f_r (f_r + f_w = 1).

    For unbatchable reads and writes this is f_r + f_w * alpha (T620, Figure 3.1).
    """
    _check_read_fraction(f_r)
    read_cost, write_cost = operation_costs(app, device)
    return f_r * read_cost + (1.0 - f_r) * write_cost


def speedup(f_r: float, device: Device, app: AppClass) -> float:
    """Generic PIO speedup over the EM model (T632): EM cost / PIO cost of the same workload.

    S_PIO, S'_PIO and S''_PIO of the thesis are this function for the three batchable classes.
    """
    em_cost = cost_per_operation(f_r, Device(device.alpha), AppClass.UNBATCHABLE)
    return em_cost / cost_per_operation(f_r, device, app)


def speedup_batchable_writes(f_r: float, alpha: float, k_w: int) -> float:
    """S_PIO = k_w (f_r + f_w a) / (k_w f_r + f_w a)  (T632-636, Figure 3.2)."""
    return speedup(f_r, Device(alpha, k_w=k_w), AppClass.BATCHABLE_WRITES)


def speedup_batchable_reads(f_r: float, alpha: float, k_r: int) -> float:
    """S'_PIO = k_r (f_r + f_w a) / (f_r + k_r f_w a)  (T643-645, Figure 3.3)."""
    return speedup(f_r, Device(alpha, k_r=k_r), AppClass.BATCHABLE_READS)


def speedup_batchable_both(f_r: float, alpha: float, k_r: int, k_w: int) -> float:
    """S''_PIO = k_r k_w (f_r + f_w a) / (k_w f_r + k_r f_w a)  (T654-656, Figure 3.4)."""
    return speedup(f_r, Device(alpha, k_r=k_r, k_w=k_w), AppClass.BATCHABLE_BOTH)


def expected_empty_channels(channels: int, concurrent_ios: int) -> float:
    """E_m of Eq. 2.1 (T470): expected number of idle channels after m I/Os placed
    uniformly and independently on n channels; E_0 = n and E_m = n ((n-1)/n)^m."""
    if channels < 1:
        raise ValueError(f"a device needs at least one channel, got {channels}")
    if concurrent_ios < 0:
        raise ValueError(f"the number of concurrent I/Os must be >= 0, got {concurrent_ios}")
    return channels * ((channels - 1) / channels) ** concurrent_ios
