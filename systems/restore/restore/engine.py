"""The restore-sim binary (systems/restore): build it and run it.

    from restore.engine import build, run, run_grid
    binary = build()                                   # systems/restore/build/restore-sim, built once
    rows = run(binary, policy="all", workload="5hf90", pages=10_000, requests=1_000_000)
    rows = run_grid(binary, [{"policy": "tlfu", "capacity_pct": "1:4:100"}, ...], jobs=2, workload="A")

Options are the command line's with underscores (`capacity_pct` for --capacity-pct); lists of
per-tier values may be given as Python lists (joined with ':'); True/False become on/off;
None leaves an option out. A row is a dict of the CSV's columns (README.md), numbers converted.
"""

from __future__ import annotations

import csv
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ssdartifact import native

RESTORE_DIR = Path(__file__).resolve().parents[1]  # systems/restore: CMakeLists.txt, src/
BUILD_DIR = RESTORE_DIR / "build"
BINARY_NAME = "restore-sim"

INT_COLUMNS = {"seed", "pages", "requests", "tiers", "page_size", "clients", "reads", "writes", "accesses_t1",
               "accesses_t2", "accesses_t3", "migrations_t2_t1", "migrations_t3_t2", "demotions_t1_t2",
               "demotions_t2_t3", "migrations_total", "policy_memory_bytes", "policy_heap_bytes", "timestep",
               "requested"}
FLOAT_COLUMNS = {"read_pct", "mean_latency_us", "data_access_us", "cpu_us", "runtime_us", "overhead_us_per_access",
                 "sim_wall_s", "temperature"}


# What the workflow runs (its build step builds these, not the GoogleTest tests)
PROGRAMS = ("restore-sim",)


class RestoreError(RuntimeError):
    """restore-sim (or its build) failed; the message is the tool's."""


def build(build_dir: Path = BUILD_DIR, targets: tuple[str, ...] = ()) -> Path:
    """Configures (once, Release) and builds restore-sim and its tests (only `targets`, when given,
    e.g. PROGRAMS); returns the binary."""
    try:
        native.cmake_build(RESTORE_DIR, Path(build_dir), "restore-sim", "cmake g++ libgtest-dev", targets=targets)
    except native.BuildError as error:
        raise RestoreError(str(error)) from error
    return Path(build_dir) / BINARY_NAME


def option_text(value) -> str:
    """An option's value as restore-sim reads it (lists joined with ':', booleans on/off)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return ":".join(option_text(v) for v in value)
    return str(value)


def arguments(options: dict) -> list[str]:
    """The command line of a dict of options."""
    args = []
    for key, value in options.items():
        if value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if key == "temperature_demo":
            if value:
                args.append(flag)
            continue
        args += [flag, option_text(value)]
    return args


def _execute(binary: Path, args: list[str]) -> list[dict]:
    return native.csv_rows(binary, args, INT_COLUMNS, FLOAT_COLUMNS, RestoreError)


def run(binary: Path, **options) -> list[dict]:
    """One configuration (one row per policy, e.g. policy="all" gives 7)."""
    return _execute(binary, arguments(options))


def temperature_demo(binary: Path, **options) -> list[dict]:
    """Thesis Fig 6.5's temperature trace of one page (rows: timestep, requested, temperature)."""
    return _execute(binary, ["--temperature-demo", *arguments(options)])


def _grid_chunk(binary: Path, rows: list[dict], shared: dict) -> list[dict]:
    columns = sorted({key for row in rows for key in row})
    with tempfile.TemporaryDirectory(prefix="restore-grid-") as tmp:
        grid = Path(tmp) / "grid.csv"
        with open(grid, "w", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(columns)
            for row in rows:
                cells = ["" if row.get(c) is None else option_text(row[c]) for c in columns]
                if any("," in cell for cell in cells):
                    raise RestoreError(f"a grid value may not contain a comma: {row}")
                writer.writerow(cells)
        return _execute(binary, [*arguments(shared), "--grid", str(grid)])


def run_grid(binary: Path, rows: list[dict], jobs: int = 1, **shared) -> list[dict]:
    """Several configurations: `rows` (dicts of options) each with the `shared` options, a row's
    own value winning, split over `jobs` processes. Output rows in input order (a row whose
    policy lists several policies gives one output row per policy)."""
    if not rows:
        return []
    jobs = max(1, min(jobs, len(rows)))
    chunks = [rows[i::jobs] for i in range(jobs)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda chunk: _grid_chunk(binary, chunk, shared), chunks))
    per_row = [len(str(r.get("policy", shared.get("policy", "restore"))).split(":")) if
               str(r.get("policy", shared.get("policy"))) != "all" else 7 for r in rows]
    # Re-interleave: chunk k holds rows k, k + jobs, ...
    out, cursors = [], [0] * jobs
    for i, n in enumerate(per_row):
        k = i % jobs
        out.extend(results[k][cursors[k]:cursors[k] + n])
        cursors[k] += n
    if sum(per_row) != len(out):
        raise RestoreError(f"restore-sim printed {len(out)} rows for {sum(per_row)} expected")
    return out
