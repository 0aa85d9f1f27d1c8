"""Supplementary table (not in the thesis): the authors' released ReStore agent (Run_RL) and their
tLFU, TEMP and tLRU beside ours (restore-sim) on the same streams (issue 43, item 1). Per workload
and policy, for each implementation: the time until every request was served (theirs: the median
of the repeats, in real time, with the fastest and slowest; ours: virtual time, one run), that time
against the same implementation's tLFU on the same stream (theirs: the median of the repeats'
ratios), and the promotions per access served by Tier 2 or 3; last, how far our tiers' accesses are
from theirs (the largest gap over the tiers, in % of the requests).

Usage: python figures/scripts/supp_restore_original_table.py results/restore/original_summary.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import MISSING, significant, tabular

POLICIES = {"restore": "ReStore", "tlfu": "tLFU", "temp": "TEMP", "tlru": "tLRU"}


def seconds(us: str) -> str:
    return significant(str(float(us) / 1e6)) if us not in ("", "NA") else MISSING


def main(summary: str, output: str) -> None:
    with open(summary, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    by = {(r["workload"], r["seed"], r["implementation"], r["policy"]): r for r in rows}
    streams = list(dict.fromkeys((r["workload"], r["seed"]) for r in rows))
    seeds = {seed for _, seed in streams}
    lines = []
    for workload, seed in streams:
        for policy, name in POLICIES.items():
            theirs, ours = by.get((workload, seed, "authors", policy)), by.get((workload, seed, "artifact", policy))
            if theirs is None and ours is None:
                continue
            cells = [workload if len(seeds) == 1 else f"{workload} (seed {seed})", name]
            if theirs:
                cells += [f"{seconds(theirs['total_us'])} ({seconds(theirs['total_us_min'])}-"
                          f"{seconds(theirs['total_us_max'])})", significant(theirs["vs_tlfu"]),
                          significant(theirs["promotion_rate"])]
            else:
                cells += [MISSING] * 3
            if ours:
                gap = f"{100 * float(ours['tier_gap']):.2f}" if ours["tier_gap"] not in ("", "NA") else MISSING
                cells += [seconds(ours["total_us"]), significant(ours["vs_tlfu"]), significant(ours["promotion_rate"]),
                          gap]
            else:
                cells += [MISSING] * 4
            lines.append(cells)
    header = ["workload", "policy", "theirs: s (range)", "× tLFU", "promoted", "ours: s", "× tLFU", "promoted",
              "tiers' gap (%)"]
    atomic_write_text(output, tabular(header, lines, "ll" + "r" * 7))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
