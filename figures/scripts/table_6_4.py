"""Thesis Table 6.4 (T1972-1981), "Our synthetic workloads": the static and dynamic workloads the
experiment runs (configs/experiments/restore.yaml) with restore-sim's phases for each
(results/restore/table_6_4.csv). The descriptions follow the xhfy definition of the text (T1966,
y % of the accesses on x % of the pages); the thesis's table words it the other way round
(results/reference/NOTES.md).

Usage: python figures/scripts/table_6_4.py results/restore/table_6_4.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import escape

HEADER = ("Name", "Type", "restore-sim phases", "Description")


def main(workloads: str, output: str) -> None:
    with open(workloads, newline="", encoding="utf-8") as handle:
        # spaces around '+' let a long list of phases wrap
        rows = [[row["workload"], row["kind"], row["phases"].replace("+", " + "), row["description"]]
                for row in csv.DictReader(handle)]
    # The description wraps: a paragraph column.
    lines = [r"\begin{tabular}{llp{0.22\linewidth}p{0.42\linewidth}}", r"\toprule",
             " & ".join(HEADER) + r" \\", r"\midrule"]
    lines += [" & ".join(escape(cell) for cell in row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    atomic_write_text(output, "\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
