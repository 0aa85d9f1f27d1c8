"""Chapter 5's points on one device (cave.plan.device_points): each graph is copied onto the
device outside the timed part (through an emulated SSD's backing store), then every run reads it
with O_DIRECT; each BFS, WCC and PageRank answer is also computed by the in-memory reference, once
per graph and repetition. Timelines (Figure 5.9B) are sampled every 100 ms, beside fio's
random-read bandwidth at the same concurrency on the same device.

The device is opened by the caller's `open_device(needed_bytes)` (a context manager yielding an
ssdartifact.devices.OpenDevice), and only when a point is left to measure."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Callable

from ssdartifact import devices, files
from ssdartifact.kept import KeptRuns, key_of

from . import engine, experiment, plan, reference
from .datasets import GRAPHS
from .results import RUN_COLUMNS


def run(*, device: str, points: list[dict], device_labels: dict, k_r: int, binary: Path, fio_seconds: float,
        raw_dir: Path, open_device: Callable, say: Callable[[str], None]) -> tuple[list[dict], list[dict], list[Path]]:
    """(the runs' rows, the timelines' samples, the files they are kept in) of every point on
    `device`; `device_labels`: columns every row carries; `k_r`: the device's read concurrency,
    which points may ask for. Each finished point is kept in `raw_dir` (with the reference answers
    it computed), so an interrupted campaign resumes; a kept point is reused only under the same
    engine, device, labels and fio reference."""
    kept_runs = KeptRuns(raw_dir, [files.sha256_file(binary), devices.declaration(device), device_labels,
                                   fio_seconds])
    keys = [key_of(plan.resolve(point, k_r)) for point in points]
    pending = [index for index, key in enumerate(keys) if kept_runs.get(key) is None]
    if pending:
        # the reference answers are computed once per graph, algorithm and repetition, and kept
        # with the point that computed them: those of the points kept already are not computed again
        references = {tuple(ref) for index, key in enumerate(keys) if index not in pending
                      for ref in kept_runs.get(key)["references"]}
        _measure(device, [points[index] for index in pending], [keys[index] for index in pending], references,
                 device_labels, k_r, binary, fio_seconds, kept_runs, open_device, say)
    kept = [kept_runs.get(key) for key in keys]
    return ([row for point in kept for row in point["rows"]], [sample for point in kept for sample in point["samples"]],
            [kept_runs.path(key) for key in keys])


def _measure(device: str, points: list[dict], keys: list[str], references: set[tuple], device_labels: dict, k_r: int,
             binary: Path, fio_seconds: float, kept_runs: KeptRuns, open_device: Callable,
             say: Callable[[str], None]) -> None:
    graphs = {}
    for point in points:
        graphs.setdefault(point["spec"]["name"], experiment.prepare_graph(binary, point["spec"], GRAPHS)[0])
    needed = 2 * sum(path.stat().st_size for path in graphs.values()) + (64 << 20)
    with open_device(needed) as opened:
        placed = {graph: experiment.place_on_device(path, opened.prepare_dir).name for graph, path in graphs.items()}
        for index, (point, key) in enumerate(zip(points, keys)):
            rows, samples, computed = [], [], []
            point = plan.resolve(point, k_r)
            graph = opened.io_dir / placed[point["spec"]["name"]]
            labels = {"device": device, "dataset": point["spec"]["name"], "graph": point["graph"],
                      "graph_size": point["spec"]["name"].removeprefix(f"{point['graph']}-"), **device_labels}
            say(f"[{index + 1}/{len(points)} to measure] {point['algorithm']} {point['variant']} "
                f"on {labels['dataset']}: "
                f"{point['io_threads']} concurrent I/Os, cache {point['cache_fraction']}")
            options = {"graph": graph, "algorithm": point["algorithm"], "variant": point["variant"],
                       "io_threads": point["io_threads"], "io_engine": point["io_engine"], **point["options"],
                       **_cache(point, graphs[labels["dataset"]].stat().st_size)}
            if point["kind"] == "timeline":
                samples += _timeline(binary, fio_seconds, options, point, labels, opened)
            else:
                measured = engine.run(binary, **options)
                rows.append({**{c: measured.get(c) for c in RUN_COLUMNS}, **labels, "experiment": "run",
                             "system": experiment.SYSTEM_NAMES[point["variant"]], "repetition": point["repetition"],
                             "cache_fraction": point["cache_fraction"]})
                say(f"    {measured['runtime_s']:.3f} s, {measured['block_reads']} reads, "
                    f"lock wait {measured['lock_wait_pct']:.2f} %")
            ref_key = (labels["dataset"], point["algorithm"], point["repetition"])
            checked = point["algorithm"] in ("bfs", "wcc", "pagerank") and point["kind"] == "run"
            if checked and ref_key not in references:
                references.add(ref_key)
                computed.append(ref_key)
                measured = reference.run_reference(graphs[labels["dataset"]], point["algorithm"],
                                                   **{k: v for k, v in point["options"].items()
                                                      if k in ("source", "iterations", "damping")})
                rows.append({**{c: measured.get(c) for c in RUN_COLUMNS}, **labels, "experiment": "run",
                             "system": experiment.REFERENCE_SYSTEM, "algorithm": point["algorithm"],
                             "repetition": point["repetition"]})
            kept_runs.keep(key, {"rows": rows, "samples": samples, "references": computed})


def _cache(point: dict, file_bytes: int) -> dict:
    """The cache option of a run: its share of the file, or as many blocks as that share but at
    least the point's floor (cave.plan: a concurrency sweep's largest number of threads)."""
    if "cache_floor_blocks" not in point:
        return {"cache_fraction": point["cache_fraction"]}
    return {"cache_blocks": max(math.ceil(point["cache_fraction"] * file_bytes / 4096), point["cache_floor_blocks"])}


def _timeline(binary: Path, fio_seconds: float, options: dict, point: dict, labels: dict, opened) -> list[dict]:
    """One sampled run, and fio's random-read bandwidth and CPU at its concurrency on the same device."""
    sampled = Path(opened.prepare_dir).parent / f"timeline-{os.getpid()}.csv"
    try:
        engine.run(binary, **options, timeline_out=sampled, timeline_ms=100)
        samples = engine.read_timeline(sampled)
    finally:
        sampled.unlink(missing_ok=True)
    fio = experiment.fio_randread(options["graph"], point["io_threads"], runtime_s=fio_seconds)
    return [{**sample, **labels, "experiment": "timeline", "algorithm": point["algorithm"],
             "variant": point["variant"], "io_threads": point["io_threads"], "cache_fraction": point["cache_fraction"],
             "fio_read_mib_s": fio["read_mib_s"], "fio_cpu_pct": fio["cpu_pct"],
             "bandwidth_util_pct": 100.0 * sample["read_mib_s"] / fio["read_mib_s"]}
            for sample in samples]
