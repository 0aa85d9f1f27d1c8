"""Thesis Figure 4.7 (T869-877), the history-based prefetcher's table: row i holds the pages that
followed page i (NextPages) and how often (Weights). Drawn from the table of the simulator's own
prefetcher after the accesses of figures/diagrams/scenes/fig_4_7.history (ace-sim-history): its
first rows by index, every slot as the code keeps it, and what the prefetcher fetches after the
page the accesses ask about (T869: after page 1, page 3).

Usage: python figures/diagrams/fig_4_7.py TABLE.csv <output.tikz>
"""

import csv
import sys
from pathlib import Path

COLUMNS = ["kind", "page", "slot", "next", "weight"]
SHOWN_ROWS = 3  # as the thesis: rows 0-2, then the rest of the table elided


def read_table(path: str) -> tuple[dict[int, list[tuple[int, int]]], dict[int, list[int]]]:
    """{row: [(next, weight) by slot]}, {page asked about: [pages to prefetch, first first]}."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != COLUMNS:
            sys.exit(f"{path}: expected the columns {','.join(COLUMNS)} (ace-sim-history's output), "
                     f"found {reader.fieldnames}")
        rows = [{k: (v if k == "kind" else int(v)) for k, v in row.items()} for row in reader]
    table: dict[int, list[tuple[int, int]]] = {}
    predicted: dict[int, list[int]] = {}
    for row in sorted(rows, key=lambda r: (r["page"], r["slot"])):
        if row["kind"] == "slot":
            table.setdefault(row["page"], []).append((row["next"], row["weight"]))
        else:
            predicted.setdefault(row["page"], []).append(row["next"])
    if not table:
        sys.exit(f"{path}: the history table is empty (no page followed another)")
    return table, predicted


def main(table_csv: str, out: str) -> None:
    table, predicted = read_table(table_csv)
    shown = sorted(table)[:SHOWN_ROWS]
    lines = [r"\node[anchor=north west, inner sep=0pt] (t) at (0,0) {\begin{tabular}{c|l|l}",
             r"\textbf{Index} & \textbf{NextPages} & \textbf{Weights}\\ \hline"]
    for page in shown:
        slots = table[page]
        lines.append(f"{page} & $\\{{{', '.join(str(n) for n, _ in slots)}\\}}$ & "
                     f"$\\{{{', '.join(str(w) for _, w in slots)}\\}}$\\\\")
    if len(table) > len(shown):
        lines.append(r"$\vdots$ & \multicolumn{1}{c|}{$\vdots$} & \multicolumn{1}{c}{$\vdots$}\\")
    lines.append(r"\end{tabular}};")
    notes = []
    for page, pages in sorted(predicted.items()):
        weights = dict(table.get(page, []))
        said = ", ".join(f"page {p}" + (f" (weight {weights[p]})" if p in weights else "") for p in pages)
        notes.append(f"after a miss on page {page} it prefetches {said}")
    if notes:
        lines.append(r"\node[note, anchor=north west, align=left] at ([yshift=-4pt]t.south west) {"
                     + "; ".join(notes) + "};")
    Path(out).write_text("\\begin{tikzpicture}\n" + "\n".join(lines) + "\n\\end{tikzpicture}\n", encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
