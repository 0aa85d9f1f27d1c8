"""Thesis Table 4.3 (T1008-1012), "Comparison of buffer miss and logical/physical writes": the change
(%) of ACE with prefetching against each policy's baseline in buffer misses, logical writes (pages
PostgreSQL wrote) and physical writes (pages the device wrote: emussd's counters on an emulated SSD;
a dash where not measured), per workload. Both write counts include the change in dirty pages left
in the pool (results/ace/fig_4_8.csv, owed_writes): a short run ends with many writes still owed,
which the thesis's 10-minute runs could neglect. Measured rows per device first, then the thesis's
rows (PCIe SSD), marked "(thesis)".

Usage: python figures/scripts/table_4_3.py results/ace/fig_4_8.csv results/reference/table_4_3.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import MISSING, tabular

POLICIES = {"clock": "Clock", "lru": "LRU", "cflru": "CFLRU", "lru_wsr": "LRU-WSR"}
METRICS = {"buffer_misses": "delta_misses_pct", "logical_writes": "delta_logical_writes_pct",
           "physical_writes": "delta_device_writes_pct"}
HEADER = ["Device", "WL", *(f"{name} Δ{short}" for name in POLICIES.values() for short in ("miss", "lw", "pw"))]


def percent(text: str, decimals: int = 2) -> str:
    if text.strip() in ("", "NA", "nan"):
        return MISSING
    return f"{float(text):+.{decimals}f}%"


def read_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def main(measured: str, reference: str, output: str) -> None:
    rows = []
    cells = {(r["device"], r["workload"], r["policy"]): r for r in read_rows(measured) if r["variant"] == "ace_pf"}
    for device in dict.fromkeys(key[0] for key in cells):
        for workload in dict.fromkeys(key[1] for key in cells if key[0] == device):
            row = [device, workload]
            for policy in POLICIES:
                cell = cells.get((device, workload, policy))
                row += [percent(cell[column]) if cell else MISSING for column in METRICS.values()]
            rows.append(row)
    printed = {(r["workload"], r["policy"], r["metric"]): r["percent_change_printed"] for r in read_rows(reference)}
    for workload in dict.fromkeys(key[0] for key in printed):
        rows.append(["PCIe SSD (thesis)", workload,
                     *(printed.get((workload, name, metric), MISSING) for name in POLICIES.values()
                       for metric in METRICS)])
    atomic_write_text(output, "{\\footnotesize\\setlength{\\tabcolsep}{3pt}\n"
                      + tabular(HEADER, rows, "ll" + "r" * 12) + "}\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
