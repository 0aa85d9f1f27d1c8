"""Thesis Table 6.5 (T1983-1989), "Standard benchmarks and real-world traces used": the unique
pages, operations and read share of each trace. YCSB is YCSB's scrambled zipfian (theta 0.99)
generated at the profile's size (the thesis's 62M-page, 93M-operation YCSB trace is not public in
its form); TPC-C, TPC-E and Thesios appear when configured (configs/experiments/restore.yaml, key
traces). The thesis's own row values are not in results/reference/, so only ours are printed.

Usage: python figures/scripts/table_6_5.py results/restore/table_6_5.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import tabular

NAMES = {"ycsb": "YCSB (synthetic)", "tpcc": "TPC-C", "tpce": "TPC-E", "thesios": "Google Thesios"}
HEADER = ["Trace Name", "#unique_pages", "#operations", "reads (%)"]


def main(stats: str, output: str) -> None:
    with open(stats, newline="", encoding="utf-8") as handle:
        rows = [[NAMES.get(r["trace"], r["trace"]), f"{int(r['unique_pages']):,}", f"{int(r['operations']):,}",
                 f"{float(r['read_pct']):.1f}"] for r in csv.DictReader(handle)]
    atomic_write_text(output, tabular(HEADER, rows, "lrrr"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
