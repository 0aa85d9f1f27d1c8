"""A C++ plug-in submission (labs 2 and 4): the student's file compiled in the sandbox into one of
the artifact's simulators, and that binary run in the sandbox, one configuration at a time."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from . import sandbox

COMPILER_OUTPUT_KEPT = 3000
# The headers every system shares (systems/common: the random generators, ...), which the systems'
# own headers include: on the include path and readable, like the system's.
COMMON_INCLUDE = Path(__file__).resolve().parents[2] / "systems" / "common" / "include"


def build(source: Path, include: Path, library: Path, work: Path, limits: sandbox.Limits, *,
          link: tuple[str, ...] = (), flags: tuple[str, ...] = ("-O2",),
          name: str = "simulator") -> tuple[Path | None, str]:
    """`source` compiled with the system's `include`/main.cc and `library` (the system without its
    built-in policies, so that a submission cannot delegate to one) into work/`name`, reading only
    the system's headers and the common ones (COMMON_INCLUDE): (the binary or None, the compiler's
    first messages)."""
    binary = work / name
    command = ["g++", "-std=c++20", *flags, "-Wall", "-Wextra", f"-I{include}", f"-I{COMMON_INCLUDE}", str(source),
               str(include / "main.cc"), str(library), *link, "-o", str(binary)]
    readable = (*sorted(include.glob("*.h")), *sorted(COMMON_INCLUDE.rglob("*.h")), include / "main.cc", library,
                source.parent)
    done = sandbox.run(command, work=work, limits=limits, readable=readable, listable=(include, COMMON_INCLUDE),
                       what="the compiler")
    with open(work / ".output", encoding="utf-8", errors="replace") as printed:
        first = printed.read(COMPILER_OUTPUT_KEPT).strip()  # the first errors matter, not the last
    if done.error or done.value != 0 or not binary.is_file():
        return None, (done.error or f"{source.name} does not compile") + f":\n{first}"
    return binary, first


class Runner:
    """The submission's simulator, run in the sandbox with `<option> <policy>` (--policy,
    --traversal); one CSV row each, written by `out_option FILE`, or from its standard output when
    `out_option` is None."""

    def __init__(self, binary: Path, work: Path, limits: sandbox.Limits, policy: str, option: str = "--policy",
                 out_option: str | None = "--out", readable: tuple[Path, ...] = ()):
        self.binary, self.work, self.limits, self.policy, self.option = binary, work, limits, policy, option
        self.out_option, self.readable, self.runs = out_option, readable, 0

    def run(self, args: list[str], output_option: str | None = None) -> tuple[dict | None, str, bytes]:
        """(the row as text, an error when it did not run to the end, the bytes of the file that
        `output_option FILE` asked for, e.g. ace-sim's --io-log)."""
        self.runs += 1
        out, extra = self.work / f"run-{self.runs}.csv", self.work / f"run-{self.runs}.extra"
        command = [str(self.binary), *args, self.option, self.policy,
                   *((output_option, str(extra)) if output_option else ())]
        # the CSV to a file: by the tool's own option, or its standard output (its errors stay in the output)
        command = [*command, self.out_option, str(out)] if self.out_option else \
            ["/bin/sh", "-c", 'out="$0"; exec "$@" > "$out"', str(out), *command]
        done = sandbox.run(command, work=self.work, limits=self.limits, readable=self.readable, what="your code")
        if done.error or done.value != 0:
            message = done.error or f"{self.binary.name} stopped with status {done.value}"
            return None, f"{message}\n{done.output.strip()}".rstrip(), b""
        try:
            row = next(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
            return row, "", extra.read_bytes() if output_option else b""
        except (OSError, StopIteration, ValueError) as error:
            return None, f"no result ({error})", b""
