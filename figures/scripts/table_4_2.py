"""Thesis Table 4.2 (T985-991), "Properties of the synthetic workloads": each workload's database,
read/write ratio and locality, from configs/experiments/ace.yaml as this profile runs it
(results/ace/table_4_2.csv). The thesis's databases are 15 GB (pgbench scale 1000, the full
profile); a profile's smaller scale is printed as it is.

Usage: python figures/scripts/table_4_2.py results/ace/table_4_2.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import MISSING, tabular

# The thesis's names for the workloads' abbreviations (T987-990).
NAMES = {"MS": "Mixed Skewed", "WIS": "Write-Intensive Skewed", "RIS": "Read-Intensive Skewed",
         "MU": "Mixed Uniform"}
HEADER = ["Workload", "Database", "R/W ratio", "Locality"]


def main(workloads: str, output: str) -> None:
    with open(workloads, newline="", encoding="utf-8") as handle:
        rows = []
        for row in csv.DictReader(handle):
            name = f"{NAMES[row['workload']]} ({row['workload']})" if row["workload"] in NAMES else row["workload"]
            database = MISSING if row["pgbench_scale"] == "NA" else f"pgbench scale {row['pgbench_scale']}"
            reads = float(row["read_pct"])
            hot_ops = float(row["hot_ops_pct"])
            # locality S/D: S % of the operations on D % of the pages, as the thesis writes 90/10
            rows.append([name, database, f"{reads:g}/{100 - reads:g}", f"{hot_ops:g}/{float(row['hot_pages_pct']):g}"])
    atomic_write_text(output, tabular(HEADER, rows, "llll"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
