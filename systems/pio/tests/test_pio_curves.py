"""The PIO model's figure CSVs follow their grids and carry a provenance sidecar."""

import csv
import json

from pio import curves, model
from ssdartifact import config


def test_curve_csv_and_sidecar(tmp_path):
    output = tmp_path / "fig_3_2.csv"
    curves.write_curve("fig_3_2", str(output))
    rows = list(csv.DictReader(output.open()))
    grid = config.load("experiments/pio_model.yaml")["fig_3_2"]
    span = grid["k_w"]["to"] - grid["k_w"]["from"] + 1
    assert len(rows) == len(grid["panels"]) * len(grid["alphas"]) * span
    row = next(r for r in rows if r["panel"] == "C" and r["alpha"] == "8" and r["k_w"] == "8")
    assert float(row["speedup"]) == model.speedup_batchable_writes(0.5, 8, 8) == 4.5
    sidecar = json.loads((tmp_path / "fig_3_2.csv.json").read_text())
    assert sidecar["produced_by"].endswith("curves.py:fig_3_2")
    assert set(sidecar["columns"]) == set(rows[0])
    assert "configs/experiments/pio_model.yaml" in sidecar["configs"]
    for key in ("git", "host", "tools", "started", "finished", "sha256"):
        assert key in sidecar


def test_fig_3_1_spans_all_reads_to_all_writes():
    grid = config.load("experiments/pio_model.yaml")["fig_3_1"]
    rows = list(curves.fig_3_1(grid))
    for alpha in grid["alphas"]:
        mine = [r for r in rows if r["alpha"] == alpha]
        assert mine[0]["write_fraction"] == 0 and mine[0]["cost"] == 1
        assert mine[-1]["write_fraction"] == 1 and mine[-1]["cost"] == alpha
