"""Lab 1, reference solution: the artifact's characterization rule (pio.characterize, which
Chapter 2's figures come from), written out as a student would."""

import statistics

GROWTH = 0.10        # a doubling of threads that adds less bandwidth than this is flat
FLAT_DOUBLINGS = 2   # this many flat doublings in a row: the plateau (a device may saturate in steps)
SATURATION = 0.95    # k: the fewest threads reaching this share of the maximum bandwidth
RUNS = 3             # a point a decision rests on is measured this often; its median run counts


def sweep(measure, max_threads):
    return {op: search(lambda threads, op=op: measure(op, threads), max_threads) for op in ("read", "write")}


def search(measure_at, max_threads):
    """Double the threads until the bandwidth stops growing, then bisect down to the knee."""
    runs = {}

    def bandwidth(threads):
        return statistics.median(run["bandwidth_bytes_s"] for run in runs[threads])

    def measure(threads, times=1):
        while len(runs.setdefault(threads, [])) < times:
            runs[threads].append(measure_at(threads))
        return bandwidth(threads)

    def reaches(threads, target):  # a point that falls short is measured again before it counts
        return measure(threads) >= target or measure(threads, RUNS) >= target

    threads, flat = 1, 0
    measure(1)
    while threads * 2 <= max_threads and flat < FLAT_DOUBLINGS:
        flat = 0 if reaches(threads * 2, (1 + GROWTH) * bandwidth(threads)) else flat + 1
        threads *= 2
    while len(runs[best := max(runs, key=bandwidth)]) < RUNS:  # the peak is a median too
        measure(best, RUNS)
    target = SATURATION * bandwidth(best)
    high = min(t for t in runs if bandwidth(t) >= target)
    low = max((t for t in runs if t < high), default=0)
    while low and reaches(low, target):
        high, low = low, max((t for t in runs if t < low), default=0)
    while high - low > 1:
        middle = (low + high) // 2
        if reaches(middle, target):
            high = middle
        else:
            low = middle
    # each thread count's median run
    return [sorted(points, key=lambda p: p["bandwidth_bytes_s"])[(len(points) - 1) // 2]
            for _, points in sorted(runs.items())]


def knee(points):
    top = max(point["bandwidth_bytes_s"] for point in points)
    return min((p for p in points if p["bandwidth_bytes_s"] >= SATURATION * top), key=lambda p: p["threads"])


def estimate(curves):
    read, write = knee(curves["read"]), knee(curves["write"])
    # Little's law: n requests in flight at X per second each occupy the device n / X seconds
    alpha = (write["threads"] / write["iops"]) / (read["threads"] / read["iops"])
    return {"k_r": read["threads"], "k_w": write["threads"], "alpha": alpha}


def predict_speedup(read_fraction, alpha, k_w, batch):
    k = min(batch, k_w)
    writes = 1 - read_fraction
    alpha = max(alpha, 1.0)
    return (read_fraction + writes * alpha) / (read_fraction + writes * alpha / k)


def plot(curves, folder):
    """Bandwidth against threads, reads and writes, as an SVG drawn by hand (no plotting library)."""
    width, height, margin = 640, 400, 60
    points = curves["read"] + curves["write"]
    top_threads = max(p["threads"] for p in points)
    top_bandwidth = max(p["bandwidth_bytes_s"] for p in points)

    def xy(p):
        return (margin + (width - 2 * margin) * p["threads"] / top_threads,
                height - margin - (height - 2 * margin) * p["bandwidth_bytes_s"] / top_bandwidth)

    lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<line x1="{margin}" y1="{height - margin}" '
             f'x2="{width - margin}" y2="{height - margin}" stroke="black"/>',
             f'<line x1="{margin}" y1="{margin}" x2="{margin}" y2="{height - margin}" stroke="black"/>',
             f'<text x="{width / 2}" y="{height - 20}" text-anchor="middle">threads (up to {top_threads})</text>',
             f'<text x="15" y="{height / 2}" transform="rotate(-90 15 {height / 2})" text-anchor="middle">'
             f'bandwidth (up to {top_bandwidth / 1e6:.1f} MB/s)</text>']
    for op, colour in (("read", "#1b9e77"), ("write", "#d95f02")):
        ordered = sorted(curves[op], key=lambda p: p["threads"])
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in map(xy, ordered))
        lines.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        lines.append(f'<text x="{width - margin}" y="{margin + (0 if op == "read" else 20)}" fill="{colour}" '
                     f'text-anchor="end">{op}</text>')
    lines.append("</svg>")
    with open(f"{folder}/plot.svg", "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
