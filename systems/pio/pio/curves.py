"""The analytical curves behind thesis Figures 2.1B, 3.1-3.4 and Section 2.4,
computed from the PIO model over the grids in configs/experiments/pio_model.yaml.

Usage (from the workflow): python -m pio.curves <name> <output.csv>
"""

from __future__ import annotations

import argparse
from typing import Callable, Iterator

from ssdartifact.config import config_hash, load
from ssdartifact.provenance import now, write_sidecar
from ssdartifact.tidy import write_csv

from . import model

GRID_FILE = "experiments/pio_model.yaml"


def _span(bounds: dict) -> range:
    return range(bounds["from"], bounds["to"] + 1)


def fig_2_1b(grid: dict) -> Iterator[dict]:
    f_r = grid["read_fraction"]
    for alpha in grid["alphas"]:
        for ios in _span(grid["concurrent_ios"]):
            yield {"read_fraction": f_r, "alpha": alpha, "concurrent_ios": ios,
                   "speedup": model.speedup_batchable_writes(f_r, alpha, ios)}


def fig_3_1(grid: dict) -> Iterator[dict]:
    steps = grid["write_fraction_steps"]
    for alpha in grid["alphas"]:
        for step in range(steps + 1):
            f_w = step / steps
            yield {"write_fraction": f_w, "alpha": alpha,
                   "cost": model.cost_per_operation(1.0 - f_w, model.Device(alpha))}


def fig_3_2(grid: dict) -> Iterator[dict]:
    for panel, f_r in sorted(grid["panels"].items()):
        for alpha in grid["alphas"]:
            for k_w in _span(grid["k_w"]):
                yield {"panel": panel, "read_fraction": f_r, "alpha": alpha, "k_w": k_w,
                       "speedup": model.speedup_batchable_writes(f_r, alpha, k_w)}


def fig_3_3(grid: dict) -> Iterator[dict]:
    for panel, f_r in sorted(grid["panels"].items()):
        for alpha in grid["alphas"]:
            for k_r in _span(grid["k_r"]):
                yield {"panel": panel, "read_fraction": f_r, "alpha": alpha, "k_r": k_r,
                       "speedup": model.speedup_batchable_reads(f_r, alpha, k_r)}


def fig_3_4(grid: dict) -> Iterator[dict]:
    alpha = grid["alpha"]
    for panel, f_r in sorted(grid["panels"].items()):
        for k_r in sorted(grid["k_r"]):
            for k_w in sorted(grid["k_w"]):
                yield {"panel": panel, "read_fraction": f_r, "alpha": alpha, "k_r": k_r, "k_w": k_w,
                       "speedup": model.speedup_batchable_both(f_r, alpha, k_r, k_w)}


def expected_idle_channels(grid: dict) -> Iterator[dict]:
    for n in grid["channels"]:
        for m in range(grid["max_ios_per_channel"] * n + 1):
            empty = model.expected_empty_channels(n, m)
            yield {"channels": n, "concurrent_ios": m, "ios_per_channel": m / n,
                   "expected_empty_channels": empty, "idle_fraction": empty / n}


READ_FRACTION = "fraction of operations that are reads (f_r)"
ALPHA = "read/write asymmetry alpha (write cost / read cost)"
SPEEDUP = "EM cost / PIO cost of the same workload (speedup, x)"
PANEL = "panel letter of the thesis figure"

CURVES: dict[str, tuple[Callable[[dict], Iterator[dict]], dict[str, str]]] = {
    "fig_2_1b": (fig_2_1b, {"read_fraction": READ_FRACTION, "alpha": ALPHA,
                            "concurrent_ios": "concurrent write I/Os issued (k_w)", "speedup": SPEEDUP}),
    "fig_3_1": (fig_3_1, {"write_fraction": "fraction of operations that are writes (f_w)", "alpha": ALPHA,
                          "cost": "normalised cost per operation f_r + f_w * alpha"}),
    "fig_3_2": (fig_3_2, {"panel": PANEL, "read_fraction": READ_FRACTION, "alpha": ALPHA,
                          "k_w": "concurrent write I/Os", "speedup": SPEEDUP}),
    "fig_3_3": (fig_3_3, {"panel": PANEL, "read_fraction": READ_FRACTION, "alpha": ALPHA,
                          "k_r": "concurrent read I/Os", "speedup": SPEEDUP}),
    "fig_3_4": (fig_3_4, {"panel": PANEL, "read_fraction": READ_FRACTION, "alpha": ALPHA,
                          "k_r": "concurrent read I/Os", "k_w": "concurrent write I/Os", "speedup": SPEEDUP}),
    "expected_idle_channels": (expected_idle_channels, {
        "channels": "internal channels n", "concurrent_ios": "concurrent I/Os m",
        "ios_per_channel": "m / n", "expected_empty_channels": "E_m of Eq. 2.1",
        "idle_fraction": "E_m / n, the expected fraction of idle channels"}),
}


def write_curve(name: str, output: str) -> None:
    started = now()
    generate, columns = CURVES[name]
    grid = load(GRID_FILE)[name]
    write_csv(output, columns, generate(grid))
    write_sidecar(output, produced_by=f"systems/pio/pio/curves.py:{name}",
                  configs={f"configs/{GRID_FILE}": config_hash(GRID_FILE)},
                  started=started, columns=columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(CURVES))
    parser.add_argument("output")
    args = parser.parse_args()
    write_curve(args.name, args.output)


if __name__ == "__main__":
    main()
