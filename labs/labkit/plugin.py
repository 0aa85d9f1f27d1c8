"""A C++ plug-in submission (labs 2 and 4): the student's file compiled in the sandbox into one of
the artifact's simulators, and that binary run in the sandbox, one configuration at a time."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from . import sandbox

COMPILER_OUTPUT_KEPT = 3000


def build(source: Path, include: Path, library: Path, work: Path, limits: sandbox.Limits, *,
          link: tuple[str, ...] = ()) -> tuple[Path | None, str]:
    """`source` compiled with the simulator's `include`/main.cc and `library` (the simulator without
    its built-in policies, so that a submission cannot delegate to one) into work/simulator, reading
    only the simulator's headers: (the binary or None, the compiler's first messages)."""
    binary = work / "simulator"
    command = ["g++", "-std=c++20", "-O2", "-Wall", "-Wextra", f"-I{include}", str(source), str(include / "main.cc"),
               str(library), *link, "-o", str(binary)]
    readable = (*sorted(include.glob("*.h")), include / "main.cc", library, source.parent)
    done = sandbox.run(command, work=work, limits=limits, readable=readable, listable=(include,), what="the compiler")
    with open(work / ".output", encoding="utf-8", errors="replace") as printed:
        first = printed.read(COMPILER_OUTPUT_KEPT).strip()  # the first errors matter, not the last
    if done.error or done.value != 0 or not binary.is_file():
        return None, (done.error or f"{source.name} does not compile") + f":\n{first}"
    return binary, first


class Runner:
    """The submission's simulator, run in the sandbox with `--policy <policy>`; one CSV row each."""

    def __init__(self, binary: Path, work: Path, limits: sandbox.Limits, policy: str):
        self.binary, self.work, self.limits, self.policy, self.runs = binary, work, limits, policy, 0

    def run(self, args: list[str], output_option: str | None = None) -> tuple[dict | None, str, bytes]:
        """(the row as text, an error when it did not run to the end, the bytes of the file that
        `output_option FILE` asked for, e.g. ace-sim's --io-log)."""
        self.runs += 1
        out, extra = self.work / f"run-{self.runs}.csv", self.work / f"run-{self.runs}.extra"
        command = [str(self.binary), "--policy", self.policy, *args, "--out", str(out),
                   *((output_option, str(extra)) if output_option else ())]
        done = sandbox.run(command, work=self.work, limits=self.limits, what="your policy")
        if done.error or done.value != 0:
            message = done.error or f"{self.binary.name} stopped with status {done.value}"
            return None, f"{message}\n{done.output.strip()}".rstrip(), b""
        try:
            row = next(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
            return row, "", extra.read_bytes() if output_option else b""
        except (OSError, StopIteration, ValueError) as error:
            return None, f"no result ({error})", b""
