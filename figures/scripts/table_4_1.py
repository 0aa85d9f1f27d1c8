"""Thesis Table 4.1 (T975-981), "Empirical α and k of our SSDs": alpha, k_r and k_w of each device
Chapter 4 runs on in this profile, at 8 KiB (PostgreSQL's page, as ACE's n_w = k_w uses them),
measured by this run's characterization or, for an emulated device, as declared (the source
column says which); then the thesis's four SSDs, marked "(thesis)".

Usage: python figures/scripts/table_4_1.py results/ace/table_4_1.csv results/reference/table_4_1.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import significant, tabular

HEADER = ["Device", "α", "k_r", "k_w", "Source"]


def read_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def main(devices: str, reference: str, output: str) -> None:
    rows = [[row["device"], significant(row["alpha"]), str(int(float(row["k_r"]))), str(int(float(row["k_w"]))),
             row["source"]] for row in read_rows(devices)]
    rows += [[f"{row['device']} (thesis)", row["alpha"], row["k_r"], row["k_w"], f"thesis {row['thesis_line']}"]
             for row in read_rows(reference)]
    atomic_write_text(output, tabular(HEADER, rows, "lrrrl"))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
