"""Thesis Table 5.2 (T1529-1538), "Preprocessing Time and Space Comparison": for each generated graph
the artifact preprocessed (results/cave/table_5_2.csv), each system's time to convert the same edges
into its own format (the median of the repetitions; CAVE's conversion of the edge list GraphChi gets)
and the size of the files it made, each beside CAVE's as a ratio; then the thesis's rows on FS and
TW, marked "(thesis)".

Usage: python figures/scripts/table_5_2.py results/cave/table_5_2.csv results/reference/table_5_2.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import MISSING, tabular

HEADER = ["System", "Graph", "Preprocessing (s)", "/ CAVE's", "Files", "/ CAVE's"]
ORDER = ["GraphChi", "GridGraph", "Mosaic", "CAVE"]


def read_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def main(measured: str, reference: str, output: str) -> None:
    rows = []
    runs = read_rows(measured)
    for (device, dataset) in dict.fromkeys((r["device"], r["dataset"]) for r in runs):
        on_graph = {r["system"]: r for r in runs if (r["device"], r["dataset"]) == (device, dataset)}
        cave = on_graph.get("CAVE")
        for system in sorted(on_graph, key=lambda name: ORDER.index(name) if name in ORDER else len(ORDER)):
            r = on_graph[system]
            seconds, mib = float(r["preprocess_s"]), float(r["disk_mib"])
            rows.append([system, f"{dataset} ({device})", f"{seconds:.2f}",
                         f"{seconds / float(cave['preprocess_s']):.1f}" if cave else MISSING, f"{mib:.1f} MiB",
                         f"{mib / float(cave['disk_mib']):.1f}" if cave else MISSING])
    thesis = {r["system"]: r for r in read_rows(reference)}
    for graph, time_column, size_column in (("FS", "preprocessing_time_fs_s", "data_file_size_fs_gb"),
                                            ("TW", "preprocessing_time_tw_s", "data_file_size_tw_gb")):
        cave = thesis["CAVE"]
        for system in ORDER:
            r = thesis[system]
            rows.append([f"{system} (thesis)", graph, r[time_column],
                         f"{float(r[time_column]) / float(cave[time_column]):.1f}", f"{r[size_column]} GB",
                         f"{float(r[size_column]) / float(cave[size_column]):.1f}"])
    atomic_write_text(output, "{\\footnotesize\n" + tabular(HEADER, rows, "llrrrr") + "}\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
