"""Thesis Table 5.1 (T1519-1527), "Dataset Description": for each generated graph of this run
(configs/datasets.yaml at the profile's size), the thesis datasets it stands for, its vertices,
undirected edges, a double-sweep lower bound of its diameter ("est.") and the size of its CAVE block file
(results/cave/table_5_1.csv); then the thesis's six datasets as printed, marked "(thesis)".

Usage: python figures/scripts/table_5_1.py results/cave/table_5_1.csv results/reference/table_5_1.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import tabular

HEADER = ["Dataset", "Stands for", "#Nodes", "#Edges", "Diameter", "Size"]


def read_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def count(text: str) -> str:
    """1234567 -> 1.2M, as the thesis prints counts."""
    value = int(text)
    for size, suffix in ((10**9, "B"), (10**6, "M"), (10**3, "K")):
        if value >= size:
            return f"{value / size:.1f}{suffix}"
    return str(value)


def main(measured: str, reference: str, output: str) -> None:
    rows = [[f"{r['dataset']} ({r['graph_size']})", r["stands_for"], count(r["vertices"]), count(r["edges"]),
             f"{r['estimated_diameter']} (est.)", f"{float(r['size_mib']):.1f} MiB"] for r in read_rows(measured)]
    rows += [[f"{r['dataset']} (thesis)", r["description"], r["nodes_printed"], r["edges_printed"], r["diameter"],
              r["size_printed"]] for r in read_rows(reference)]
    atomic_write_text(output, "{\\footnotesize\n" + tabular(HEADER, rows, "llrrrr") + "}\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
