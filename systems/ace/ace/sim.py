"""The ACE bufferpool simulator (systems/ace/sim): build it and run it.

    from ace.sim import build, run, run_grid
    binary = build()                     # systems/ace/sim/build/ace-sim, built once
    row = run(binary, policy="lru", ace=True, n_w=8, pool_pages=1000, alpha=2.8, k_w=8,
              synthetic=True, ops=100_000, pages=10_000)
    print(row["hit_ratio"], row["virtual_runtime_us"])
    rows = run_grid(binary, [{"alpha": a, "ace": ace} for a in (1, 2, 4) for ace in (False, True)],
                    policy="lru", pool_pages=1000, synthetic=True, ops=100_000, pages=10_000)

Options are the command line's, with underscores (`pool_pages` for --pool-pages);
`ace=True` is `--ace on`, `synthetic=True` is `--synthetic`, None leaves an option out.
A row is a dict of the CSV's columns (systems/ace/sim/README.md), numbers converted.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

from ssdartifact import native

SIM_DIR = Path(__file__).resolve().parents[1] / "sim"  # systems/ace/sim: CMakeLists.txt, src/
SIM_BUILD = SIM_DIR / "build"
BINARY_NAME = "ace-sim"

INT_COLUMNS = {"n_w", "n_e", "pool_pages", "k_r", "k_w", "page_size", "ops", "pages", "seed", "accesses",
               "hits", "misses", "dirty_evictions", "pages_written", "write_batches", "prefetch_issued",
               "prefetch_used", "w_nonresident"}
FLOAT_COLUMNS = {"cflru_window", "read_latency_us", "alpha", "cpu_us_per_access", "read_pct", "hot_ops_pct",
                 "hot_pages_pct", "hit_ratio", "virtual_runtime_us"}


# What the workflow runs (its build step builds these, not the GoogleTest tests)
PROGRAMS = ("ace-sim", "ace-sim-scene", "ace-sim-history")


class SimError(RuntimeError):
    pass


def build(build_dir: Path = SIM_BUILD, targets: tuple[str, ...] = ()) -> Path:
    """Configures (once, Release) and builds the simulator and its tests (only `targets`, when given,
    e.g. PROGRAMS); returns the binary."""
    try:
        native.cmake_build(SIM_DIR, Path(build_dir), "the simulator", "cmake g++ libgtest-dev", targets=targets)
    except native.BuildError as error:
        raise SimError(str(error)) from error
    return Path(build_dir) / BINARY_NAME


def _value(key: str, value) -> str:
    if isinstance(value, bool):
        return ("on" if value else "off") if key == "ace" else ("1" if value else "")
    return str(value)


def _arguments(options: dict) -> list[str]:
    args = []
    for key, value in options.items():
        if value is None or (key == "synthetic" and value is False):
            continue
        flag = "--" + key.replace("_", "-")
        args += [flag] if key == "synthetic" else [flag, _value(key, value)]
    return args


def _execute(binary: Path, args: list[str]) -> list[dict]:
    return native.csv_rows(binary, args, INT_COLUMNS, FLOAT_COLUMNS, SimError)


def run(binary: Path, **options) -> dict:
    """One configuration: the CSV row as a dict."""
    rows = _execute(binary, _arguments(options))
    if len(rows) != 1:
        raise SimError(f"ace-sim printed {len(rows)} rows for one configuration")
    return rows[0]


def run_grid(binary: Path, rows: list[dict], **shared) -> list[dict]:
    """Several configurations in one process: `rows` (dicts of options) each with the `shared`
    options, a row's own value winning. One output row per configuration, in order."""
    columns = sorted({key for row in rows for key in row})
    with tempfile.TemporaryDirectory(prefix="ace-sim-grid-") as tmp:
        grid = Path(tmp) / "grid.csv"
        with open(grid, "w", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(columns)
            for row in rows:
                cells = ["" if row.get(c) is None else _value(c, row[c]) for c in columns]
                if any("," in cell for cell in cells):
                    raise SimError(f"a grid value may not contain a comma: {row}")
                writer.writerow(cells)
        out = _execute(binary, [*_arguments(shared), "--grid", str(grid)])
    if len(out) != len(rows):
        raise SimError(f"ace-sim printed {len(out)} rows for {len(rows)} configurations")
    return out
