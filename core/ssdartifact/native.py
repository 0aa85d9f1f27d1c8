"""Building the systems' native code with CMake: one place for the configure-once, build-always,
one-build-at-a-time recipe that the bufferpool simulator, CAVE and ReStore share."""

from __future__ import annotations

import csv
import fcntl
import io
import re
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path


class BuildError(RuntimeError):
    pass


@contextmanager
def locked(build_dir: Path):
    """One build at a time per build directory (parallel tests or workflow jobs). The lock is in the
    directory, so that a build writes nowhere else (in docker mode, the rest is read-only)."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def cmake_build(source_dir: Path, build_dir: Path, what: str, packages: str, configure: tuple[str, ...] = (),
                targets: tuple[str, ...] = ()) -> None:
    """Configures `source_dir` once (Release, with the `configure` arguments) into `build_dir` and
    builds it (only `targets`, when given: the workflow builds the programs it runs, not the unit
    tests); when everything is up to date, CMake only checks timestamps. `what` and `packages`
    word the error when tools lack."""
    missing = [tool for tool in ("cmake", "g++") if shutil.which(tool) is None]
    if missing:
        raise BuildError(f"{' and '.join(missing)} not found: {what} needs a C++20 compiler, CMake and GoogleTest "
                         f"(apt-get install {packages})")
    build_dir = Path(build_dir)
    with locked(build_dir):
        if not (build_dir / "CMakeCache.txt").exists():
            _checked(["cmake", "-S", str(source_dir), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release", *configure])
        _checked(["cmake", "--build", str(build_dir), "-j2", *(f"--target={target}" for target in targets)])


def patch_series(folder: Path, error: type[Exception] = BuildError) -> list[Path]:
    """The patches of `folder` in the order of its `series` file (comments and blank lines skipped),
    as quilt and Debian keep them; `error` names the series' missing patches."""
    folder = Path(folder)
    names = [line.strip() for line in (folder / "series").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        raise error(f"{folder / 'series'} names missing patches: {', '.join(missing)}")
    return [folder / name for name in names]


def compiler_version(compiler: str = "gcc") -> str:
    """The compiler's first line of --version (part of a build's key), or "unknown"."""
    result = subprocess.run([compiler, "--version"], capture_output=True, text=True)
    return result.stdout.splitlines()[0] if result.returncode == 0 and result.stdout else "unknown"


def googletest_failures(build_dir: Path, *ctest_args: str, timeout: int = 600) -> str:
    """Runs the GoogleTest suite built in `build_dir` through ctest (`ctest_args`: -j2, -L or -LE a
    label) and returns "" when every test passed; otherwise each failed test's own output and ctest's
    summary, which the end of the log (all that a test report keeps) does not hold when tests run
    side by side."""
    proc = subprocess.run(["ctest", "--output-on-failure", *ctest_args], cwd=build_dir, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode == 0 and "100% tests passed" in proc.stdout:
        return ""
    failed, inside = [], False
    for line in proc.stdout.splitlines():
        if "***" in line and " Test #" in line:  # ***Failed, ***Exception, ***Timeout
            inside = True
        elif re.match(r"\s*(Start\s+\d+:|\d+/\d+ Test #|\d+% tests passed)", line):
            inside = False
        if inside:
            failed.append(line)
    summary = re.search(r"^\d+% tests passed.*", proc.stdout, re.M | re.S)
    return "\n".join(failed)[-12000:] + "\n" + (summary[0] if summary else proc.stdout[-2000:]) + proc.stderr[-2000:]


def _checked(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")


def csv_rows(binary: Path, args: list[str], int_columns: set[str], float_columns: set[str],
             error: type[Exception]) -> list[dict]:
    """Runs a tool that prints a CSV table and returns its rows, with the named columns as numbers
    and empty cells as None; a failure raises `error` with the tool's own message."""
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise error(f"{Path(binary).name} exited with {proc.returncode}: {proc.stderr.strip()}")

    def typed(key: str, text: str | None):
        if text in ("", None):
            return None
        return int(text) if key in int_columns else float(text) if key in float_columns else text
    return [{key: typed(key, text) for key, text in row.items()} for row in csv.DictReader(io.StringIO(proc.stdout))]
