"""Device characterization (thesis Chapter 2): the adaptive thread search and the
declared rule that turns a sweep into α and k (configs/experiments/pio.yaml).

The thesis picked k by hand, "where the device bandwidth is close to saturation
or where the rate of bandwidth increase drops significantly" (T486). Here:
  * the thread count doubles until `plateau_doublings` doublings in a row each
    add less than `plateau_growth` of bandwidth (the plateau: one flat doubling
    is not enough, since a device may saturate in steps), then bisects between
    the last point below and the first point at `saturation_fraction` of the
    maximum bandwidth, so k is found to one thread with O(log k) points instead
    of a dense grid;
  * a point that a decision rests on (a doubling or a bisection point that
    seems to fall short) and the best point are measured three times and
    their median run kept; others once. The maximum bandwidth is the best
    point's median: a run disturbed by the host (or lucky) does not move it,
    and a curve that dips after its peak (too many threads slow the device
    down) keeps its peak, where a statistic over several points would mix
    the peak with the dip;
  * k = the fewest threads reaching `saturation_fraction` of that maximum
    bandwidth; the latency knee (the most threads whose mean latency stays
    within `latency_knee_factor` of the single-thread latency, T490) is
    reported beside it as a cross-check;
  * α = max read bandwidth / max write bandwidth at one block size (T554), and
    alpha_cost = the per-request cost of a write over that of a read, each at
    its own k (Little's law: in-flight requests / IOPS). The PIO model's α is
    this cost ratio (a write costs α reads; batches of up to k run at once), so
    the two agree only when k_r = k_w; emussd's declared α is the cost ratio.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from typing import Callable

ALPHA_K_COLUMNS = {
    "device": "declared device name (configs/devices.yaml)",
    "pattern": "random or sequential",
    "block_size": "bytes per request",
    "alpha": "max read bandwidth / max write bandwidth (thesis definition, T554)",
    "alpha_cost": "per-request cost of a write at k_w over that of a read at k_r (the PIO model's alpha)",
    "k_r": "fewest threads reaching the saturation fraction of the max read bandwidth",
    "k_w": "fewest threads reaching the saturation fraction of the max write bandwidth",
    "k_r_latency_knee": "most threads whose mean read latency stays within the knee factor of one thread's",
    "k_w_latency_knee": "most threads whose mean write latency stays within the knee factor of one thread's",
    "read_saturated": "whether the read search found a plateau below max_threads (else k_r is a lower bound)",
    "write_saturated": "whether the write search found a plateau below max_threads (else k_w is a lower bound)",
    "read_bw_max": "max read bandwidth: the best point's median of three runs, bytes per second",
    "write_bw_max": "max write bandwidth: the best point's median of three runs, bytes per second",
    "read_gain": "max read bandwidth / read bandwidth of one thread (the thesis's '40x')",
    "write_gain": "max write bandwidth / write bandwidth of one thread",
    "read_lat_1_us": "mean read latency of one thread (thesis Table 2.1), microseconds",
    "write_lat_1_us": "mean write latency of one thread (thesis Table 2.1), microseconds",
    "write_steady_state": "fio steady state of the write points from k_w on: reached, not reached or unchecked",
}


@dataclass(frozen=True)
class Rule:
    max_threads: int
    plateau_growth: float
    saturation_fraction: float
    latency_knee_factor: float
    plateau_doublings: int = 2

    def __post_init__(self) -> None:
        if self.max_threads < 1 or not 0 < self.saturation_fraction <= 1 or self.plateau_growth <= 0 \
                or self.latency_knee_factor <= 1 or self.plateau_doublings < 1:
            raise ValueError(f"invalid characterization rule {self}")


RUNS_PER_SETTLED_POINT = 3


def peak_bandwidth(bandwidths) -> float:
    """The device's maximum bandwidth: the best point's (search_threads measured it three times
    and kept the median)."""
    return max(bandwidths)


def search_threads(bandwidth_at: Callable[[int], float], rule: Rule) -> dict[int, float]:
    """Measure bandwidth at the thread counts the search needs; returns {threads: bandwidth},
    each point's bandwidth the median of its runs. `bandwidth_at` is called once per run."""
    runs: dict[int, list[float]] = {}

    def value(threads: int) -> float:
        return statistics.median(runs[threads])

    def measure(threads: int) -> float:
        if threads not in runs:
            runs[threads] = [bandwidth_at(threads)]
        return value(threads)

    def settle(threads: int) -> float:
        while len(runs[threads]) < RUNS_PER_SETTLED_POINT:
            runs[threads].append(bandwidth_at(threads))
        return value(threads)

    def passes(threads: int, test: Callable[[float], bool]) -> bool:
        """A point that fails its test is settled (three runs) before the search acts on it."""
        return test(measure(threads)) or test(settle(threads))

    threads, flat = 1, 0
    measure(1)
    while threads * 2 <= rule.max_threads and flat < rule.plateau_doublings:
        floor = (1 + rule.plateau_growth) * value(threads)
        flat = 0 if passes(threads * 2, lambda bandwidth: bandwidth >= floor) else flat + 1
        threads *= 2
    while len(runs[best := max(runs, key=value)]) < RUNS_PER_SETTLED_POINT:  # the peak is a median too
        settle(best)
    target = rule.saturation_fraction * value(best)
    high = min(t for t in runs if value(t) >= target)
    low = max((t for t in runs if t < high), default=0)
    while low and passes(low, lambda bandwidth: bandwidth >= target):  # the bracket's floor is doubted too
        high, low = low, max((t for t in runs if t < low), default=0)
    while high - low > 1:
        middle = (low + high) // 2
        if passes(middle, lambda bandwidth: bandwidth >= target):
            high = middle
        else:
            low = middle
    return {t: value(t) for t in sorted(runs)}


def saturation_row(rows: list[dict], rule: Rule) -> dict:
    """The row at k: the fewest threads reaching the saturation fraction of the max bandwidth."""
    target = rule.saturation_fraction * peak_bandwidth(row["bandwidth_bytes_s"] for row in rows)
    return min((row for row in rows if row["bandwidth_bytes_s"] >= target), key=lambda row: row["threads"])


def latency_knee(rows: list[dict], rule: Rule) -> int:
    """Most threads before the mean latency first exceeds knee factor x the single-thread latency."""
    ordered = sorted(rows, key=lambda row: row["threads"])
    limit = rule.latency_knee_factor * ordered[0]["lat_mean_us"]
    knee = ordered[0]["threads"]
    for row in ordered:
        if row["lat_mean_us"] > limit:
            break
        knee = row["threads"]
    return knee


def saturated(rows: list[dict], rule: Rule) -> bool:
    """Did the search end on a plateau (its last doubling gained too little), not on max_threads?"""
    bandwidth = {row["threads"]: row["bandwidth_bytes_s"] for row in rows}
    top = max(bandwidth)
    return top // 2 in bandwidth and top > 1 and bandwidth[top] < (1 + rule.plateau_growth) * bandwidth[top // 2]


def cost_per_request(row: dict) -> float:
    """Seconds one request occupies the device on average at this load (Little's law)."""
    return row["threads"] * row["iodepth"] / row["iops"]


def combined_steady_state(rows: list[dict], from_threads: int) -> str:
    states = {row["steady_state"] for row in rows if row["threads"] >= from_threads}
    for state in ("not reached", "unchecked", "reached"):
        if state in states:
            return state
    raise ValueError("no rows to judge steady state on")


def estimate(device: str, pattern: str, block_size: int, reads: list[dict], writes: list[dict],
             rule: Rule) -> dict:
    """One alpha_k row from the read and the write sweep of one (pattern, block size)."""
    if not reads or not writes:
        raise ValueError(f"{device}: α and k need both a read and a write sweep at {pattern} {block_size} B")
    k_read, k_write = saturation_row(reads, rule), saturation_row(writes, rule)
    one_read = min(reads, key=lambda row: row["threads"])
    one_write = min(writes, key=lambda row: row["threads"])
    read_max = peak_bandwidth(row["bandwidth_bytes_s"] for row in reads)
    write_max = peak_bandwidth(row["bandwidth_bytes_s"] for row in writes)
    return {
        "device": device, "pattern": pattern, "block_size": block_size,
        "alpha": read_max / write_max,
        "alpha_cost": cost_per_request(k_write) / cost_per_request(k_read),
        "k_r": k_read["threads"], "k_w": k_write["threads"],
        "k_r_latency_knee": latency_knee(reads, rule), "k_w_latency_knee": latency_knee(writes, rule),
        "read_saturated": saturated(reads, rule), "write_saturated": saturated(writes, rule),
        "read_bw_max": read_max, "write_bw_max": write_max,
        "read_gain": read_max / one_read["bandwidth_bytes_s"],
        "write_gain": write_max / one_write["bandwidth_bytes_s"],
        "read_lat_1_us": one_read["lat_mean_us"], "write_lat_1_us": one_write["lat_mean_us"],
        "write_steady_state": combined_steady_state(writes, k_write["threads"]),
    }


def estimate_all(rows: list[dict], rule: Rule) -> list[dict]:
    """alpha_k rows for every (device, pattern, block size) with a read and a write thread sweep."""
    groups: dict[tuple, dict[str, list[dict]]] = {}
    for row in rows:
        groups.setdefault((row["device"], row["pattern"], row["block_size"]), {"read": [], "write": []})[
            row["op"]].append(row)
    return [estimate(*key, sides["read"], sides["write"], rule) for key, sides in sorted(groups.items())]


def alpha_k_row(alpha_k_csv, device: str, block_size: int = 4096) -> dict[str, str]:
    """A characterized device's alpha_k.csv row at one block size (random I/O), as written."""
    with open(alpha_k_csv, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["device"] == device and row["pattern"] == "random" and int(row["block_size"]) == block_size:
                return row
    raise LookupError(f"{alpha_k_csv}: no random {block_size}-byte row for device {device!r}; "
                      "characterize it first (add it to the profile's characterize.devices)")


def measured_device(alpha_k_csv, device: str, block_size: int = 4096) -> dict:
    """alpha_cost, k_r and k_w of a characterized device at one block size (random I/O), as later
    experiments use them (ACE's n_w, CAVE's thread count), with the saturation flags."""
    row = alpha_k_row(alpha_k_csv, device, block_size)
    return {"alpha": float(row["alpha_cost"]), "k_r": int(row["k_r"]), "k_w": int(row["k_w"]),
            "read_saturated": row["read_saturated"] == "true", "write_saturated": row["write_saturated"] == "true"}
