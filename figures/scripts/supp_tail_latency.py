"""Supplementary table (not in the thesis): the tail-latency table of Yang's NVM study (J. Yang,
"High Performance Storage System Design Using Emerging Storage Technologies", PhD thesis, University of
Minnesota, 2021, §2.5.1 and Table 2.1 of §2.5.7): per measured device (in the order of the CSV), 4KB
random reads and writes of one fio job at QD 1 (thread search, threads = 1): p50, p99, p99.9, p99.99 and mean completion
latency in microseconds, and the number of requests the percentiles come from (a p99.99 needs at
least 10,000 of them to differ from the maximum).

Usage: python figures/scripts/supp_tail_latency.py results/pio/sweeps.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import significant, tabular

MICRO = "\N{GREEK SMALL LETTER MU}s"
COLUMNS = [(f"p50 ({MICRO})", "lat_p50_us"), (f"p99 ({MICRO})", "lat_p99_us"), (f"p99.9 ({MICRO})", "lat_p99_9_us"),
           (f"p99.99 ({MICRO})", "lat_p99_99_us"), (f"Mean ({MICRO})", "lat_mean_us")]
HEADER = ["Device", "Op"] + [title for title, _ in COLUMNS] + ["Requests"]
OPS = ("read", "write")


def main(sweeps: str, output: str) -> None:
    with open(sweeps, newline="", encoding="utf-8") as handle:
        points = [row for row in csv.DictReader(handle)
                  if row["sweep"] == "threads" and int(row["threads"]) == 1 and int(row["iodepth"]) == 1
                  and row["pattern"] == "random" and int(row["block_size"]) == 4096]
    devices = list(dict.fromkeys(row["device"] for row in points))
    rows = []
    for device in devices:
        for op in OPS:
            matches = [row for row in points if row["device"] == device and row["op"] == op]
            if not matches:
                continue
            if len(matches) > 1:
                sys.exit(f"sweeps.csv: {len(matches)} one-thread 4KB random {op} points for {device}")
            row = matches[0]
            requests = f"{round(float(row['iops']) * float(row['duration_s'])):,}"
            rows.append([device, f"random {op}"] + [significant(row[key]) for _, key in COLUMNS] + [requests])
    atomic_write_text(output, tabular(HEADER, rows, "ll" + "r" * (len(HEADER) - 2)))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
