"""How a job shares the machine with a measurement (workflow/rules/common.smk): a computation beside
one of ACE's or CAVE's campaigns runs at the idle scheduling class."""

from __future__ import annotations

import functools
import os


def at_idle_priority(run):
    """`run` at the idle scheduling class (SCHED_IDLE), which the processes it starts inherit: the
    kernel gives it a core only when nothing else wants one and preempts it as soon as something
    does. Snakemake runs a job's `run:` in a thread of a process of its own; the thread gets its
    class back afterwards where it may (an unprivileged one may not leave the idle class, and its
    process ends with the job)."""
    @functools.wraps(run)
    def idle(*args, **kwargs):
        before = os.sched_getscheduler(0), os.sched_getparam(0)
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        try:
            return run(*args, **kwargs)
        finally:
            try:
                os.sched_setscheduler(0, *before)
            except PermissionError:
                pass
    return idle
