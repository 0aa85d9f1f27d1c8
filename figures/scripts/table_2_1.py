"""Thesis Table 2.1 (T517-528), "Performance comparison of the tested devices": 4KB random read
(RR) and write (RW) latency. Measured rows first (mean latency of one thread at QD 1, random
4096-byte requests, from alpha_k.csv: read_lat_1_us, write_lat_1_us), in the order of the CSV;
then the thesis's printed rows, marked "(thesis)".

Usage: python figures/scripts/table_2_1.py results/pio/alpha_k.csv results/reference/table_2_1.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import MISSING, significant, tabular

HEADER = ["Device", "Latency (RR)", "Latency (RW)", "Source"]
MICRO = "\N{GREEK SMALL LETTER MU}s"


def microseconds(number: str) -> str:
    return number if number == MISSING else f"{number} {MICRO}"


def read_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def main(alpha_k: str, reference: str, output: str) -> None:
    rows = []
    for row in read_rows(alpha_k):
        if row["pattern"] == "random" and int(row["block_size"]) == 4096:
            rows.append([row["device"], microseconds(significant(row["read_lat_1_us"])),
                         microseconds(significant(row["write_lat_1_us"])), f"measured ({row['kind']})"])
    for row in read_rows(reference):
        rows.append([f"{row['device']} (thesis)", microseconds(row["rand_read_latency_us"]),
                     microseconds(row["rand_write_latency_us"]), f"{row['source']}, {row['thesis_line']}"])
    atomic_write_text(output, tabular(HEADER, rows, "lrrl"))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
