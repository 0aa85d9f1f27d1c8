"""Supplementary table (not in the thesis): what decides Chapter 6's verdicts, per configuration of
Figures 6.8 (static workloads) and 6.10 (drifting ones) (issue 43, item 3). For each workload and
tier sizes: the fastest migrating policy, ReStore's rank among the six migrating policies, the
promotions per Tier 2-3 access of ReStore, tLFU and TEMP (how often a request to a slower tier
moved its page up), and the headroom, tLFU's time over the oracle Static's (how much any policy
could gain over tLFU there).

Usage: python figures/scripts/supp_restore_decides.py results/restore/fig_6_8.csv
           results/restore/fig_6_10.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import MISSING, significant, tabular

NAMES = {"tlfu": "tLFU", "tlru": "tLRU", "lrfu": "LRFU", "exd": "EXD", "temp": "TEMP", "restore": "ReStore"}


def percent(value: str) -> str:
    return f"{100 * float(value):.0f}" if value not in ("", "NA") else MISSING


def configurations(path: str) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    groups: dict[tuple, dict[str, dict]] = {}
    for row in rows:
        if row["seed"] == rows[0]["seed"]:  # the first seed: one line per configuration
            groups.setdefault((row["workload"], row["t1_pct"], row["t2_pct"]), {})[row["policy"]] = row
    lines = []
    for (workload, t1, t2), by in groups.items():
        migrating = {p: float(r["data_access_us"]) for p, r in by.items() if p in NAMES}
        first = NAMES[min(migrating, key=migrating.get)] if migrating else MISSING
        restore = by.get("restore", {})
        rates = [percent(by[p]["promotion_rate"]) if p in by else MISSING for p in ("restore", "tlfu", "temp")]
        headroom = next((r["headroom"] for r in by.values() if r.get("headroom") not in (None, "", "NA")), "")
        lines.append([workload, f"{t1} / {t2}", first, restore.get("adaptive_rank") or MISSING, *rates,
                      significant(headroom) if headroom else MISSING])
    return lines


def main(static_csv: str, drifting_csv: str, output: str) -> None:
    lines = configurations(static_csv) + configurations(drifting_csv)
    header = ["workload", "Tier 1 / 2 (%)", "fastest", "ReStore's rank", "ReStore promotes (%)", "tLFU (%)",
              "TEMP (%)", "headroom (× Static)"]
    atomic_write_text(output, tabular(header, lines, "llllrrrr"))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
