"""Thesis Table 6.1 (T1669-1676), "Our proposed approach captures workload features and device
properties and quickly adapts to workload drift": the feature matrix of the migration policies,
from each policy's declared properties (systems/restore/restore/tables.py, results/restore/table_6_1.csv).
A check mark is yes, a cross no, a tilde partly.

Usage: python figures/scripts/table_6_1.py results/restore/table_6_1.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import tabular

NAMES = {"exd": "EXD", "lrfu": "LRFU", "tlru": "tLRU", "tlfu": "tLFU", "restore": "ReStore"}
MARKS = {"yes": "✓", "no": "✗", "partly": "~"}


def main(features: str, output: str) -> None:
    with open(features, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        sys.exit(f"{features}: no policies")
    names = [c for c in rows[0] if c != "policy"]
    header = ["Feature"] + [NAMES.get(row["policy"], row["policy"]) for row in rows]
    try:
        body = [[name.replace("_", " ")] + [MARKS[row[name]] for row in rows] for name in names]
    except KeyError as error:
        sys.exit(f"{features}: a feature must be one of {', '.join(MARKS)}, not {error}")
    atomic_write_text(output, tabular(header, body, "l" + "c" * len(rows)))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
