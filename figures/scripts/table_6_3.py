"""Thesis Table 6.3 (T1755-1780), "Our notation for modeling tiered storage with RL": the 23 terms
of the RL formulation and their definitions, typeset from the one data file that holds the
thesis's text (results/reference/table_6_3.csv; each term in LaTeX math, `term_latex`).

Usage: python figures/scripts/table_6_3.py results/reference/table_6_3.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import escape

COLUMNS = ("term_latex", "definition")


def main(notation: str, output: str) -> None:
    with open(notation, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    missing = [c for c in COLUMNS if rows and c not in rows[0]]
    if not rows or missing:
        sys.exit(f"{notation}: expected rows with the columns {', '.join(COLUMNS)}; missing: {missing or 'rows'}")
    # The terms are LaTeX math already; the definitions are text.
    lines = [r"\begin{tabular}{ll}", r"\toprule", r"Term & Definition \\", r"\midrule"]
    lines += [f"{row['term_latex']} & {escape(row['definition'])} \\\\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    atomic_write_text(output, "\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
