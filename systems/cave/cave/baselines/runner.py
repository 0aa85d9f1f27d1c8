"""Running a baseline's program: its wall time, its output, its memory, and a clear error when it
fails or exceeds its memory budget."""

from __future__ import annotations

import os
import subprocess
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from ssdartifact import memlimit


class BaselineRunError(RuntimeError):
    pass


class CannotRun(RuntimeError):
    """The system cannot run this case by its own design (the reason says which limit): the case is
    shown as not run, with the reason, never as a time."""


class BudgetExceeded(BaselineRunError):
    """The kernel killed the program at its memory limit: it needs more memory than its budget."""


class TimedOut(BaselineRunError):
    """The program ran past its time limit and was stopped."""


@dataclass(frozen=True)
class Ran:
    output: str
    seconds: float
    memory: dict  # how the memory limit was enforced and the peak it saw ({} without a limit)


def run(command: list, cwd: Path, *, threads: int, timeout_s: float, env: dict | None = None,
        memory_limit: int | None = None) -> Ran:
    """Run the command with OpenMP's thread count `threads` (the systems built with OpenMP take theirs
    from it) and, with `memory_limit`, in a memory cgroup of that many bytes (page cache included)."""
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C",
                   "OMP_NUM_THREADS": str(threads), **(env or {})}
    command = [str(part) for part in command]
    name = Path(command[0]).name
    group = memlimit.MemoryCgroup(memory_limit, name) if memory_limit else None
    with group or nullcontext():
        start = time.perf_counter()
        try:
            result = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True,
                                    timeout=timeout_s, preexec_fn=group.join if group else None)
        except subprocess.TimeoutExpired:
            raise TimedOut(f"{name} ran past its {timeout_s:.0f} s limit: {' '.join(command)}") from None
        seconds = time.perf_counter() - start
        usage = group.usage() if group else None
    output = result.stdout + result.stderr
    tail = "\n".join(output.splitlines()[-20:])
    if usage and (usage.oom_kills or result.returncode == -9):
        raise BudgetExceeded(f"{name} needed more than its memory limit of {memory_limit / (1 << 20):.1f} MiB "
                             f"({group.enforcement}); the kernel killed it: {' '.join(command)}\n{tail}")
    if result.returncode != 0:
        raise BaselineRunError(f"{' '.join(command)} exited with {result.returncode} in {cwd}:\n{tail}")
    memory = {"memory_limit": group.enforcement, "peak_bytes": usage.peak_bytes} if group else {}
    return Ran(output, seconds, memory)


def disk_bytes(paths) -> int:
    """Bytes the files take (a folder: every file in it)."""
    total = 0
    for path in paths:
        path = Path(path)
        total += sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size
    return total
