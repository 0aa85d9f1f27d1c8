"""The experiment driver: graphs prepared once, runs on a device directory, tidy rows.

One function per thesis figure family; each takes a plain dict of parameters and returns
rows (dicts) whose keys are the module's column constants, for tidy CSVs (write_csv):

    concurrency_sweep(p)  Figs 5.5, 5.8, 5.13A/B   runtime and lock wait vs number of concurrent I/Os
    cache_sweep(p)        Figs 5.6, 5.10, 5.12     runtime vs cache size, blocked and non-blocked,
                                                   plus the in-memory reference (scipy) rows
    timeline(p)           Fig 5.9B                 CPU % and read bandwidth over time during one run
    dataset_table(p)      Table 5.1                vertices, edges, estimated diameter, size on disk

Parameters (keys of p; README "Experiment driver" has the full list):
    graph          graph spec: {"name": "LJ-quick", "generator": "rmat", "scale": 16, "edge_factor": 16,
                   "seed": 1} (generator ba|rmat|road with the options of `cave generate`) or
                   {"name": "RN", "edge_list": "roadNet-PA.txt", "format": "snap"}; optional
                   "undirected" (True) and "renumber" (True)
    graph_dir      where converted graphs are cached (by a hash of the spec)
    device_dir     directory on the device under test; the block file is copied there
    device         label for the rows (default: device_dir)
    algorithm      bfs | wcc | pagerank | randomwalk | dfs
    variant        blocked | nonblocked (concurrency_sweep, timeline); cache_sweep runs both
    io_threads     list of ints (concurrency_sweep) or one int (cache_sweep, timeline)
    cache_fractions  list of floats (cache_sweep) / cache_fraction one float (default 0.03)
    repetitions    runs per point (default 3; the thesis averages three)
    io_engine      threads | uring (default threads)
    options        extra `cave run` options, e.g. {"iterations": 10} or {"walks": 1000}
    reference      cache_sweep: add the in-memory reference rows (default True for bfs/wcc/pagerank)
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import engine, reference

# Bump when the block format or the converter changes: cached graphs are rebuilt.
GRAPH_CACHE_VERSION = 1

RUN_COLUMNS = [
    "experiment", "dataset", "system", "algorithm", "variant", "device", "io_engine", "io_threads",
    "cache_fraction", "cache_blocks", "repetition", "runtime_s", "load_s", "cpu_util_pct", "block_reads",
    "bytes_read", "read_mib_s", "cache_hits", "cache_misses", "hit_ratio", "lock_wait_s", "lock_wait_pct",
    "reached", "levels", "components", "pagerank_sum", "steps", "dead_ends", "vertices", "edges", "file_bytes",
]  # fmt: skip
CONCURRENCY_COLUMNS = RUN_COLUMNS
CACHE_COLUMNS = RUN_COLUMNS
TIMELINE_COLUMNS = [
    "experiment", "dataset", "algorithm", "variant", "device", "io_threads", "cache_fraction", "t_s", "cpu_pct",
    "reads", "bytes_read", "read_mib_s", "bandwidth_util_pct",
]  # fmt: skip
DATASET_COLUMNS = [
    "dataset", "source", "vertices", "edges", "stored_edges", "estimated_diameter", "file_bytes", "size_mib",
    "convert_s",
]  # fmt: skip

SYSTEM_NAMES = {"nonblocked": "CAVE", "blocked": "CAVE_blocked"}
REFERENCE_SYSTEM = "in-memory reference (scipy)"
GENERATOR_OPTIONS = {
    "ba": {"vertices", "m"},
    "rmat": {"scale", "edge_factor", "a", "b", "c"},
    "road": {"rows", "cols", "removal", "shortcuts", "shortcut_span"},
}


class ExperimentError(ValueError):
    pass


# ------------------------------------------------------------------ graphs


def _spec_hash(spec: dict) -> str:
    key = {k: v for k, v in spec.items() if k != "name"}
    key["_version"] = GRAPH_CACHE_VERSION
    if "edge_list" in spec:
        st = Path(spec["edge_list"]).stat()
        key["_input"] = [str(Path(spec["edge_list"]).resolve()), st.st_size, st.st_mtime_ns]
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def _check_spec(spec: dict) -> None:
    if "name" not in spec:
        raise ExperimentError("graph spec needs a 'name'")
    if ("generator" in spec) == ("edge_list" in spec):
        raise ExperimentError(f"graph spec {spec['name']!r} needs exactly one of 'generator' or 'edge_list'")
    if "generator" in spec:
        gen = spec["generator"]
        if gen not in GENERATOR_OPTIONS:
            raise ExperimentError(f"graph spec {spec['name']!r}: generator must be one of ba, rmat, road, got {gen!r}")
        extra = set(spec) - GENERATOR_OPTIONS[gen] - {"name", "generator", "seed", "undirected", "renumber"}
        if extra:
            raise ExperimentError(f"graph spec {spec['name']!r}: unknown keys {sorted(extra)} for generator {gen}")


def prepare_graph(binary: Path, spec: dict, graph_dir: Path | str) -> tuple[Path, dict]:
    """Generates (or reads) and converts the graph once; later calls reuse the cached file.
    Returns the block file and its metadata (generate/convert rows)."""
    _check_spec(spec)
    graph_dir = Path(graph_dir)
    graph_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{spec['name']}-{_spec_hash(spec)}"
    out, meta_path = graph_dir / f"{stem}.cave", graph_dir / f"{stem}.json"
    if out.exists() and meta_path.exists():
        return out, json.loads(meta_path.read_text())
    meta: dict = {"spec": spec}
    if "generator" in spec:
        edges = graph_dir / f"{stem}.edges.txt"
        opts = {k: v for k, v in spec.items() if k in GENERATOR_OPTIONS[spec["generator"]]}
        meta["generate"] = engine.generate(binary, edges, model=spec["generator"], seed=spec.get("seed", 42), **opts)
        fmt, source = "snap", edges
    else:
        fmt, source, edges = spec.get("format", "snap"), Path(spec["edge_list"]), None
    meta["convert"] = engine.convert(binary, source, out, format=fmt, undirected=spec.get("undirected", True),
                                     renumber=spec.get("renumber", True))
    if edges is not None:
        edges.unlink()  # regenerated from the seed when needed
    tmp = meta_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(meta, indent=1, sort_keys=True))
    os.replace(tmp, meta_path)
    return out, meta


def place_on_device(graph: Path, device_dir: Path | str) -> Path:
    """Copies the block file into the device directory (once; same name and size = done),
    fsyncs it and drops it from the page cache."""
    device_dir = Path(device_dir)
    device_dir.mkdir(parents=True, exist_ok=True)
    dest = device_dir / graph.name
    if dest.exists() and dest.stat().st_size == graph.stat().st_size:
        return dest
    tmp = dest.with_suffix(".cave.tmp")
    with open(graph, "rb") as src, open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 22)
        dst.flush()
        os.fsync(dst.fileno())
        os.posix_fadvise(dst.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    os.replace(tmp, dest)
    return dest


# ------------------------------------------------------------------ runs


def _binary(binary):
    return Path(binary) if binary else engine.build()


def _run_options(p: dict, graph: Path, variant: str, threads: int, fraction: float) -> dict:
    opts = {"graph": graph, "algorithm": p["algorithm"], "variant": variant, "io_threads": threads,
            "io_engine": p.get("io_engine", "threads"), "cache_fraction": fraction}
    opts.update(p.get("options", {}))
    return opts


def _row(experiment: str, p: dict, run: dict, repetition: int, fraction) -> dict:
    row = {c: run.get(c) for c in RUN_COLUMNS}
    row.update(experiment=experiment, dataset=p["graph"]["name"], system=SYSTEM_NAMES[run["variant"]],
               device=p.get("device", str(p["device_dir"])), cache_fraction=fraction, repetition=repetition)
    return row


def _setup(p: dict, binary) -> tuple[Path, Path]:
    for key in ("graph", "graph_dir", "device_dir", "algorithm"):
        if key not in p:
            raise ExperimentError(f"experiment parameters need {key!r}")
    b = _binary(binary)
    graph, _ = prepare_graph(b, p["graph"], p["graph_dir"])
    return b, place_on_device(graph, p["device_dir"])


def concurrency_sweep(p: dict, binary: Path | None = None) -> list[dict]:
    """Figs 5.5 (lock_wait_pct), 5.8 (BFS), 5.13A (random walk), 5.13B (DFS): runtime vs
    io_threads at one cache fraction (default 0.03) and one variant (default blocked for
    bfs/wcc/pagerank/randomwalk as in the original thread tests, nonblocked for dfs)."""
    b, graph = _setup(p, binary)
    variant = p.get("variant", "nonblocked" if p["algorithm"] == "dfs" else "blocked")
    fraction = p.get("cache_fraction", 0.03)
    rows = []
    for rep in range(p.get("repetitions", 3)):
        for threads in p["io_threads"]:
            run = engine.run(b, **_run_options(p, graph, variant, threads, fraction))
            rows.append(_row("concurrency", p, run, rep, fraction))
    return rows


def cache_sweep(p: dict, binary: Path | None = None) -> list[dict]:
    """Figs 5.6 (BFS), 5.10 (WCC), 5.12 (PageRank): runtime vs cache fraction for both
    variants at io_threads (default 8), plus one in-memory reference row per repetition."""
    b, graph = _setup(p, binary)
    threads = p.get("io_threads", 8)
    if isinstance(threads, list):
        raise ExperimentError("cache_sweep takes one io_threads value")
    rows = []
    for rep in range(p.get("repetitions", 3)):
        for fraction in p["cache_fractions"]:
            for variant in p.get("variants", ["nonblocked", "blocked"]):
                run = engine.run(b, **_run_options(p, graph, variant, threads, fraction))
                rows.append(_row("cache", p, run, rep, fraction))
        if p.get("reference", True) and p["algorithm"] in ("bfs", "wcc", "pagerank"):
            opts = {k: v for k, v in p.get("options", {}).items() if k in ("source", "iterations", "damping")}
            ref = reference.run_reference(graph, p["algorithm"], **opts)
            row = {c: None for c in RUN_COLUMNS}
            row.update(experiment="cache", dataset=p["graph"]["name"], system=REFERENCE_SYSTEM,
                       algorithm=p["algorithm"], device="memory", repetition=rep,
                       **{k: v for k, v in ref.items() if k in RUN_COLUMNS})
            rows.append(row)
    return rows


def fio_randread(path: Path | str, jobs: int, runtime_s: float = 5.0, ioengine: str = "psync") -> dict:
    """fio's 4 KiB O_DIRECT random reads with `jobs` jobs at iodepth 1 over the file `path`, which
    is on the device already (the graph's block file: the same file, on the same device, that the
    engine reads), opened read-only: `read_mib_s`, the device's bandwidth at that concurrency, and
    `cpu_pct`, fio's CPU time over its jobs / its runtime / online cores x 100 (as CAVE's cpu_pct):
    what the reads alone cost the CPU on this machine, with no graph work. Reading an existing file
    spares fio its layout: writing a file through an emulated SSD one page at a time at the declared
    write latency took longer than the whole experiment it served (230 s for a 30 MiB graph)."""
    if shutil.which("fio") is None:
        raise ExperimentError("fio not found: apt-get install fio")
    path = Path(path)
    size = path.stat().st_size // 4096 * 4096
    if size == 0:
        raise ExperimentError(f"{path}: {path.stat().st_size} bytes, fewer than one 4 KiB block for fio to read")
    # One report per job (no group_reporting): each job's usr_cpu and sys_cpu are its own
    # thread's share of one CPU over its runtime, so their sum is the cores fio used.
    cmd = ["fio", "--name=randread", f"--filename={path}", "--readonly", f"--size={size}", "--bs=4k",
           "--rw=randread", "--direct=1", f"--ioengine={ioengine}", "--iodepth=1", f"--numjobs={jobs}",
           "--thread", "--time_based", f"--runtime={runtime_s}", "--ramp_time=1", "--output-format=json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ExperimentError(f"fio failed: {proc.stderr.strip()[-2000:]}")
    reports = json.loads(proc.stdout[proc.stdout.index("{"):])["jobs"]
    cores_used = sum(job["usr_cpu"] + job["sys_cpu"] for job in reports) / 100.0
    return {"read_mib_s": sum(job["read"]["bw_bytes"] for job in reports) / 1048576.0,
            "cpu_pct": 100.0 * cores_used / (os.cpu_count() or 1)}


def timeline(p: dict, binary: Path | None = None) -> list[dict]:
    """Fig 5.9B: one run (default blocked BFS) sampled every `timeline_ms` (100). When
    `measure_fio` is true (or `max_bandwidth_mib_s` is given), bandwidth_util_pct is the read
    bandwidth divided by fio's random-read bandwidth at the same concurrency on the same
    directory, as the thesis defines it [T:1577]."""
    b, graph = _setup(p, binary)
    threads = p.get("io_threads", 8)
    fraction = p.get("cache_fraction", 0.03)
    variant = p.get("variant", "blocked")
    with tempfile.TemporaryDirectory(prefix="cave-timeline-") as tmp:
        out = Path(tmp) / "timeline.csv"
        opts = _run_options(p, graph, variant, threads, fraction)
        opts.update(timeline_out=out, timeline_ms=p.get("timeline_ms", 100))
        engine.run(b, **opts)
        samples = engine.read_timeline(out)
    max_bw = p.get("max_bandwidth_mib_s")
    if max_bw is None and p.get("measure_fio"):
        max_bw = fio_randread(graph, threads)["read_mib_s"]
    rows = []
    for s in samples:
        rows.append({
            "experiment": "timeline", "dataset": p["graph"]["name"], "algorithm": p["algorithm"], "variant": variant,
            "device": p.get("device", str(p["device_dir"])), "io_threads": threads, "cache_fraction": fraction,
            "t_s": s["t_s"], "cpu_pct": s["cpu_pct"], "reads": s["reads"], "bytes_read": s["bytes_read"],
            "read_mib_s": s["read_mib_s"], "bandwidth_util_pct": (100.0 * s["read_mib_s"] / max_bw) if max_bw else None,
        })  # fmt: skip
    return rows


def dataset_table(p: dict, binary: Path | None = None) -> list[dict]:
    """Table 5.1: for each graph spec in p["datasets"] (converted into p["graph_dir"]):
    vertices, undirected edges, stored edges, double-sweep diameter estimate, file size."""
    b = _binary(binary)
    rows = []
    for spec in p["datasets"]:
        graph, meta = prepare_graph(b, spec, p["graph_dir"])
        i = engine.info(b, graph, sweeps=p.get("sweeps", 2))
        source = f"generated: {spec['generator']}" if "generator" in spec else f"file: {Path(spec['edge_list']).name}"
        rows.append({
            "dataset": spec["name"], "source": source, "vertices": i["vertices"],
            "edges": i["undirected_edges"] if i["undirected_edges"] is not None else i["edges"],
            "stored_edges": i["edges"], "estimated_diameter": i["estimated_diameter"], "file_bytes": i["file_bytes"],
            "size_mib": i["file_bytes"] / 1048576.0, "convert_s": meta["convert"]["seconds"],
        })  # fmt: skip
    return rows


def write_csv(rows: list[dict], columns: list[str], path: Path | str) -> None:
    """Writes rows with exactly `columns` (None as empty), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="raise")
        w.writeheader()
        for row in rows:
            w.writerow({c: ("" if row.get(c) is None else row.get(c)) for c in columns})
    os.replace(tmp, path)
