"""Thesis Table 6.6 (T2048-2052), "CPU time and memory overhead of each policy": the average CPU
time per access spent in the policy (measured with steady_clock around the policy's code, mean
over the repeats; host-dependent), the memory of the policy's data structures (placement included,
as the policy counts it) and the heap it holds at the end of its run, measured by the allocator
(median of the repeats) on 5hf90, then the thesis's rows, marked
"(thesis)", and both CPU rows relative to Static's, which is what can carry over between machines.

Usage: python figures/scripts/table_6_6.py results/restore/table_6_6.csv results/reference/table_6_6.csv <output.tex>
"""

import csv
import sys
from statistics import mean, median

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import MISSING, tabular

POLICIES = {"static": "Static", "tlfu": "tLFU", "tlru": "tLRU", "lrfu": "LRFU", "exd": "EXD", "temp": "TEMP",
            "restore": "ReStore"}


def read_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def cells(values: dict[str, float], digits: int) -> list[str]:
    return [f"{values[p]:.{digits}f}" if p in values else MISSING for p in POLICIES.values()]


def main(measured: str, reference: str, output: str) -> None:
    runs = read_rows(measured)
    cpu, memory, heap = {}, {}, {}
    for key, name in POLICIES.items():
        rows = [r for r in runs if r["policy"] == key]
        if rows:
            cpu[name] = mean(float(r["overhead_us_per_access"]) for r in rows)
            memory[name] = mean(float(r["policy_memory_mb"]) for r in rows)
            heap[name] = median(float(r["policy_heap_mb"]) for r in rows)
    thesis = {r["policy"]: r for r in read_rows(reference)}
    thesis_cpu = {p: float(r["cpu_time_per_access_us"]) for p, r in thesis.items()}
    thesis_memory = {p: float(r["memory_mb"]) for p, r in thesis.items()}

    def relative(values: dict[str, float]) -> dict[str, float]:
        return {p: v / values["Static"] for p, v in values.items()} if values.get("Static") else {}

    rows = [["CPU (μs)", *cells(cpu, 3)], ["CPU (μs) (thesis)", *cells(thesis_cpu, 3)],
            ["CPU / Static's", *cells(relative(cpu), 2)], ["CPU / Static's (thesis)", *cells(relative(thesis_cpu), 2)],
            ["Memory, counted (MB)", *cells(memory, 2)], ["Memory, measured heap (MB)", *cells(heap, 2)],
            ["Memory (MB) (thesis)", *cells(thesis_memory, 2)]]
    atomic_write_text(output, tabular(["", *POLICIES.values()], rows, "l" + "r" * len(POLICIES)))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
