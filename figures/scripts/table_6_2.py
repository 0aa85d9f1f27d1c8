"""Thesis Table 6.2 (T1713-1720), "Empirical latency, asymmetry and concurrency of some storage
devices for 4KB block size": each of the thesis's devices, its printed row marked "(thesis)", and
below it the device measured for it here (results/restore/table_6_2.csv, in its order): one
thread's 4 KiB random read and write latency at queue depth 1, alpha (a write's cost over a read's)
and k ("≥N": no plateau below the profile's max_threads), or "not run in this profile" with the
profile's reason in a note under the table.

An emulated device serves its requests at its declared latency, not the thesis device's (a few
microseconds cannot be emulated on 2 cores): "(N×)" after its name gives that scale, its declared
read latency over the thesis's, so its latencies compare with the thesis's times N.

Usage: python figures/scripts/table_6_2.py results/restore/table_6_2.csv results/reference/table_6_2.csv <output.tex>
"""

import csv
import sys

from ssdartifact.files import atomic_write_text
from ssdartifact.latex import MISSING, concurrency, escape, significant, tabular

HEADER = ["Device", "Read latency", "Write latency", "α", "k_r", "k_w", "Source"]
MICRO = "\N{GREEK SMALL LETTER MU}s"
MEASURED_COLUMNS = ("thesis_device", "device", "declared_read_latency_us", "status", "reason", "read_lat_1_us",
                    "write_lat_1_us", "alpha", "k_r", "k_w", "read_saturated", "write_saturated")
REFERENCE_COLUMNS = ("device", "read_latency_us", "write_latency_us", "alpha", "k_r", "k_w", "thesis_line")


SCALE_NOTE = ("(N×): an emulated device, measured at its declared latency, N times the thesis device's; "
              "its latencies compare with the thesis's times N.")


class TableError(Exception):
    """An input the table cannot be built from; the message names the file and what to do."""


def read_rows(path: str, needed: tuple[str, ...], fix: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in needed if column not in (reader.fieldnames or [])]
        if missing:
            raise TableError(f"{path}: no column(s) {', '.join(missing)}; {fix}")
        rows = list(reader)
    if not rows:
        raise TableError(f"{path}: no rows; {fix}")
    return rows


def scale(measured: dict[str, str], thesis: dict[str, str]) -> str:
    """How much slower than the thesis's device an emulated one is declared: " (294×)" after its name
    (a real device: nothing, it runs at its own latency)."""
    if measured["declared_read_latency_us"] in ("", "NA"):
        return ""
    factor = float(measured["declared_read_latency_us"]) / float(thesis["read_latency_us"])
    return f" ({factor:.3g}×)"


def microseconds(value: str) -> str:
    return f"{significant(value)} {MICRO}"


def main(measured_csv: str, reference_csv: str, output: str) -> None:
    measured = read_rows(measured_csv, MEASURED_COLUMNS, "rebuild it (rule describe_restore_devices)")
    thesis = {row["device"]: row for row in read_rows(reference_csv, REFERENCE_COLUMNS,
                                                      "it is the thesis's Table 6.2 (results/reference/)")}
    rows, notes, scaled = [], [], False
    for ours in measured:
        if ours["thesis_device"] not in thesis:
            raise TableError(f"{measured_csv}: device {ours['device']!r} stands for {ours['thesis_device']!r}, which "
                             f"is not a row of {reference_csv} ({', '.join(thesis)}); correct its thesis_device in "
                             "configs/experiments/restore.yaml (table_6_2)")
        printed = thesis[ours["thesis_device"]]
        rows.append([f"{printed['device']} (thesis)", f"{printed['read_latency_us']} {MICRO}",
                     f"{printed['write_latency_us']} {MICRO}", printed["alpha"], printed["k_r"], printed["k_w"],
                     f"thesis {printed['thesis_line']}"])
        if ours["status"] == "measured":
            scaled = scaled or bool(scale(ours, printed))
            rows.append([ours["device"] + scale(ours, printed), microseconds(ours["read_lat_1_us"]),
                         microseconds(ours["write_lat_1_us"]), significant(ours["alpha"]),
                         concurrency(ours["k_r"], ours["read_saturated"]),
                         concurrency(ours["k_w"], ours["write_saturated"]), "measured"])
        elif ours["status"] == "not run":
            notes.append(f"({len(notes) + 1}) {ours['device']}: {ours['reason'].rstrip('.')}")
            rows.append([ours["device"], MISSING, MISSING, MISSING, MISSING, MISSING, f"not run ({len(notes)})"])
        else:
            raise TableError(f"{measured_csv}: device {ours['device']!r} has status {ours['status']!r}; expected "
                             "'measured' or 'not run' (rule describe_restore_devices)")
    said = [SCALE_NOTE] if scaled else []
    if notes:
        said.append("Not run in this profile: " + "; ".join(notes) + ".")
    text = "{\\footnotesize\n" + tabular(HEADER, rows, "lrrrrrl")
    if said:
        text += "\\par\\smallskip\\raggedright " + escape(" ".join(said)) + "\\par\n"
    atomic_write_text(output, text + "}\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    try:
        main(*sys.argv[1:])
    except TableError as error:
        sys.exit(f"table_6_2.py: {error}")
