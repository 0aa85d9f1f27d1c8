"""Build and drive the `cave` binary (systems/cave/build/cave).

Every function takes the binary's path first (from build()); options are the command
line's with underscores (`io_threads` for --io-threads); True is a bare flag, None or False
leaves an option out. Results are the CSV row the tool prints, as a dict with numbers
converted (empty fields become None). Failures raise CaveError with the tool's message.
"""

from __future__ import annotations

import csv
import io
import subprocess
from pathlib import Path

from ssdartifact import native

CAVE_DIR = Path(__file__).resolve().parents[1]  # systems/cave: CMakeLists.txt, src/
BUILD_DIR = CAVE_DIR / "build"
BINARY_NAME = "cave"

TEXT_COLUMNS = {"graph", "algorithm", "variant", "io_engine", "input", "format", "model", "output"}
FLOAT_COLUMNS = {
    "load_s", "runtime_s", "cpu_user_s", "cpu_sys_s", "cpu_util_pct", "read_mib_s", "hit_ratio", "lock_wait_s",
    "lock_wait_pct", "damping", "pagerank_sum", "seconds", "t_s", "cpu_pct",
}  # fmt: skip


# What the workflow runs (its build step builds these, not the GoogleTest tests)
PROGRAMS = ("cave", "cave-trace")


class CaveError(RuntimeError):
    """The tool failed; the message is its own ("cave: error: ...")."""

    def __init__(self, message: str, returncode: int | None = None):
        super().__init__(message)
        self.returncode = returncode


def build(build_dir: Path = BUILD_DIR, configure: tuple[str, ...] = (), targets: tuple[str, ...] = ()) -> Path:
    """Configures (once, Release, with the `configure` arguments) and builds the engine and its unit
    tests (only `targets`, when given, e.g. PROGRAMS); returns the binary."""
    try:
        native.cmake_build(CAVE_DIR, Path(build_dir), "CAVE",
                           "cmake g++ libgtest-dev; liburing-dev and pkg-config for --io-engine uring", configure,
                           targets)
    except native.BuildError as error:
        raise CaveError(str(error)) from error
    return Path(build_dir) / BINARY_NAME


def arguments(options: dict) -> list[str]:
    args: list[str] = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        args += [flag] if value is True else [flag, str(value)]
    return args


def convert_value(key: str, text: str):
    if text == "":
        return None
    if key in TEXT_COLUMNS:
        return text
    if key in FLOAT_COLUMNS:
        return float(text)
    try:
        return int(text)
    except ValueError:
        return text


def parse_csv(text: str) -> list[dict]:
    return [{k: convert_value(k, v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]


def execute(binary: Path, command: str, options: dict, timeout: float | None = None) -> dict:
    """Runs `cave COMMAND --option value ...` and returns its one CSV row."""
    cmd = [str(binary), command, *arguments(options)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise CaveError(proc.stderr.strip() or f"cave exited with {proc.returncode}", proc.returncode)
    rows = parse_csv(proc.stdout)
    if len(rows) != 1:
        raise CaveError(f"`{' '.join(cmd)}` printed {len(rows)} rows, expected one")
    return rows[0]


def generate(binary: Path, output: Path | str, *, model: str, seed: int = 42, **options) -> dict:
    """`cave generate`: model ba (vertices, m), rmat (scale, edge_factor, a, b, c) or road
    (rows, cols, removal, shortcuts, shortcut_span)."""
    return execute(binary, "generate", {"model": model, "seed": seed, **options, "output": output})


def convert(binary: Path, input: Path | str, output: Path | str, *, format: str = "snap", undirected: bool = False,
            renumber: bool = False) -> dict:
    """`cave convert`: a text edge list (snap) or adjacency list into a block file."""
    return execute(binary, "convert", {"input": input, "format": format, "undirected": undirected,
                                       "renumber": renumber, "output": output})


def info(binary: Path, graph: Path | str, *, sweeps: int = 2) -> dict:
    """`cave info`: vertices, edges, blocks, file_bytes, estimated_diameter, ..."""
    return execute(binary, "info", {"graph": graph, "sweeps": sweeps})


def run(binary: Path, timeout: float | None = None, **options) -> dict:
    """`cave run`: one algorithm run; the row of counters and results (README: "cave run")."""
    return execute(binary, "run", options, timeout=timeout)


def read_values(path: Path | str) -> list[dict]:
    """A --values-out file as rows (numbers converted; a random walk's path as a list)."""
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out = {}
            for k, v in row.items():
                if k == "path":
                    out[k] = [int(x) for x in v.split()] if v else []
                elif k == "score":
                    out[k] = float(v)
                else:
                    out[k] = int(v)
            rows.append(out)
    return rows


def read_timeline(path: Path | str) -> list[dict]:
    with open(path) as f:
        return parse_csv(f.read())
