"""Thesis Table 1.1 (T341-347), "Comparison of HDD and SSD trends", typeset from the
thesis's printed values (literature data: the thesis cites no measurement for it).

Usage: python figures/scripts/table_1_1.py results/reference/table_1_1.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import tabular

COLUMNS = [("Device", "device"), ("Capacity", "capacity_printed"), ("Seq. BW", "seq_bw_printed"),
           ("Rand. BW", "rand_bw_printed"), ("Time to Read", "time_to_read_printed"),
           ("Cost ($/MB)", "cost_usd_per_mb")]


def main(source: str, output: str) -> None:
    with open(source, newline="", encoding="utf-8") as handle:
        rows = [[row[key] for _, key in COLUMNS] for row in csv.DictReader(handle)]
    atomic_write_text(output, tabular([title for title, _ in COLUMNS], rows, "lrrrrr"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
