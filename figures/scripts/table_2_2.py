"""Thesis Table 2.2 (T552-564), "Empirical Asymmetry and Concurrency": alpha, k_r and k_w at
4KB and 8KB. Measured rows first (random pattern, from alpha_k.csv, in the order of the CSV;
alpha = max read / max write bandwidth as in the thesis, T554; a k is printed "≥N" when the
thread search found no plateau, so N is only a lower bound), then the thesis's printed rows,
marked "(thesis)". The last column is the PIO model's alpha (per-request cost of a write over
that of a read, alpha_cost) at 4KB, which the thesis does not print ("–").

Usage: python figures/scripts/table_2_2.py results/pio/alpha_k.csv results/reference/table_2_2.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import MISSING, concurrency, significant, tabular

BLOCK_SIZES_KIB = (4, 8)
# "4K" rather than "4KB" in the headers keeps the table within a 6.5 in text width.
HEADER = ["Device"] + [f"{kib}K {name}" for kib in BLOCK_SIZES_KIB for name in ("α", "k_r", "k_w")] + ["4K α cost"]


def read_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def main(alpha_k: str, reference: str, output: str) -> None:
    measured: dict[str, dict[int, dict[str, str]]] = {}
    for row in read_rows(alpha_k):
        if row["pattern"] == "random":
            measured.setdefault(row["device"], {})[int(row["block_size"])] = row
    rows = []
    for device, by_size in measured.items():
        cells = [device]
        for kib in BLOCK_SIZES_KIB:
            row = by_size.get(kib * 1024)
            cells += ([significant(row["alpha"]), concurrency(row["k_r"], row["read_saturated"]),
                       concurrency(row["k_w"], row["write_saturated"])] if row else [MISSING] * 3)
        row = by_size.get(4096)
        cells.append(significant(row["alpha_cost"]) if row else MISSING)
        rows.append(cells)
    thesis: dict[str, dict[int, dict[str, str]]] = {}
    for row in read_rows(reference):
        thesis.setdefault(row["device"], {})[int(row["block_size_kib"])] = row
    for device, by_size in thesis.items():
        cells = [f"{device} (thesis)"]
        for kib in BLOCK_SIZES_KIB:
            row = by_size.get(kib)
            cells += [row["alpha"], row["k_r"], row["k_w"]] if row else [MISSING] * 3
        cells.append(MISSING)
        rows.append(cells)
    atomic_write_text(output, tabular(HEADER, rows, "l" + "r" * (len(HEADER) - 1)))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
