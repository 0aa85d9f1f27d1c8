"""Mosaic (Hilbert-ordered tiles, its CPU build: one edge engine on the host) on a CAVE graph, driven
through its own programs without its scripts (they need root, pick settings by host name and
allocate ring buffers of 1-32 GB).

`prepare` makes Mosaic's files as its scripts do: grc-in-memory cuts the int32 edge pairs (GridGraph's
input, the same ids: `--use-original-ids`, so a vertex in no edge keeps its id) into tiles of up to
2^16 x 2^16 vertices in Hilbert order; the tiles, their indexes and statistics are then concatenated
into one tiles.dat, meta.dat and tile_stats.dat, each tile padded to a page and a MiB of zeros at the
end, as its rebalance_input.py / post_pgrc.py do (here in Python, without their os.sync()); and
post-grc-indexer writes the vertex -> tiles index that BFS and connected components schedule tiles
by. All of it is timed as Mosaic's preprocessing (Table 5.2).

The engine (`mosaic`) reads the active tiles from tiles.dat and meta.dat with O_DIRECT at every
iteration (no page cache, no file mapped), and with the artifact's patch 0004 writes the final value
of every vertex to MOSAIC_OUTPUT: the BFS level (uint32, 4294967295: not reached; patch 0003 makes
them levels), the component label (uint32, the smallest id reaching it along the edges: WCC gets the
symmetrized graph, as GridGraph's) or the PageRank score (float, over in-edges: compared on
symmetric graphs only, as the others'). Its own time is the sum of its rounds' ("Round Time").

Memory. The thesis sets Mosaic's cache with SG_RB_SIZE_HOST_TILES (its README, "Link to Other
Systems"): the host-tiles ring buffer gets the memory budget, but at least what one round needs
(`floor_bytes`: 8 x the largest tile, at least 8 MiB; with 4 MiB its PageRank aborted). Its other ring
buffers (tiles read from the device, processed tiles, the index, the vertex fetcher's and the global
reducer's) are working buffers of that floor each, two for the tiles read; like GridGraph's I/O
buffers they come on top of the memory limit, and so does what the floor adds to a smaller budget.
The ring buffers are shared memory (memfd), charged to the cgroup in full.

Threads: `threads` tile processors and appliers (SG_NPROCESSOR, the thesis's thread setting), one
tile reader (SG_NREADER: Mosaic's own default) and one of each other thread kind."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import build, edges, runner

SYSTEM = "mosaic"
BYTES_PER_THREAD = 0  # its buffers do not grow with its threads: see ring_buffers
HASH_FOLDERS = 512  # grc-in-memory spreads its per-tile files over this many folders (lib/core/util.cc)
PAGE = 4096
TAIL = 1 << 20  # post_pgrc.py's zeros after the last tile (reads past it stay in the file)
MIB = 1 << 20
UNREACHED = 0xFFFFFFFF
# post_pgrc.py's three concatenations: the tiles (eb-), their indexes (ebi-) and statistics (ebs-)
CONCATENATED = (("tile", "eb-", "tiles.dat", True), ("meta", "ebi-", "meta.dat", True),
                ("meta", "ebs-", "tile_stats.dat", False))


def prepare(tree: Path, a: sp.csr_matrix, work: Path, algorithm: str, *, threads: int, timeout_s: float) -> dict:
    """Mosaic's files in `work` (emptied first): of `a` for BFS and PageRank, of `a` symmetrized for WCC."""
    if a.nnz == 0:  # the engine maps a table of one entry per tile, and mmap() refuses 0 bytes
        raise runner.CannotRun("Mosaic cannot tile a graph without an edge")
    shutil.rmtree(work, ignore_errors=True)
    graph = edges.symmetrized(a) if algorithm == "wcc" and not edges.symmetric(a) else a
    grc = work / "grc"
    for kind in ("meta", "tile"):
        for index in range(HASH_FOLDERS):
            (grc / kind / f"{index:03x}").mkdir(parents=True)
    (work / "globals").mkdir()
    pairs = edges.write_int32_pairs(graph, work / "edges.bin")
    programs = build.programs(SYSTEM, tree)
    start = time.perf_counter()
    runner.run([programs["grc"], "--source", pairs, "--count-vertices", a.shape[0], "--generator", "binary",
                "--graphname", "graph", "--path-globals", work / "globals", "--paths-meta", grc / "meta",
                "--paths-tile", grc / "tile", "--nthreads", threads, "--npartition-managers", 1,
                "--input-weighted", 0, "--output-weighted", 0, "--rmat-count-edges", 0,
                "--use-run-length-encoding", 1, "--use-original-ids", 1, "--traversal", "hilbert",
                "--delimiter", "space"], work, threads=threads, timeout_s=timeout_s)
    largest_tile = max((path.stat().st_size for path in (grc / "tile").glob("*/eb-*")), default=0)
    for kind, prefix, name, padded in CONCATENATED:
        _concatenate(sorted((grc / kind).glob(f"*/{prefix}*"), key=lambda path: path.name),
                     work / "data" / kind / name, padded)
    shutil.copy(work / "globals" / "stat.dat", work / "data" / "meta" / "stat.dat")
    shutil.rmtree(grc)
    runner.run([programs["indexer"], "--nthreads", 1, "--paths-meta", work / "data" / "meta",
                "--path-global", work / "globals"], work, threads=threads, timeout_s=timeout_s)
    seconds = time.perf_counter() - start
    pairs.unlink()
    tiles = int(np.fromfile(work / "globals" / "stat.dat", dtype="<u8", count=2)[1])  # vertices, tiles
    largest_tile = -(-largest_tile // PAGE) * PAGE  # padded to a page in tiles.dat
    (work / "tiles.json").write_text(json.dumps({"tiles": tiles, "largest_tile_bytes": largest_tile}))
    return {"preprocess_s": seconds, "disk_bytes": runner.disk_bytes([work / "data", work / "globals"])}


def _concatenate(parts: list[Path], out: Path, padded: bool) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as target:
        for part in parts:
            data = part.read_bytes()
            target.write(data)
            if padded and len(data) % PAGE:
                target.write(bytes(PAGE - len(data) % PAGE))
        if padded:
            target.write(bytes(TAIL))


def floor_bytes(work: Path) -> int:
    """What each of Mosaic's ring buffers needs to hold a round's tiles: 8 x the largest, at least 8 MiB."""
    largest = json.loads((work / "tiles.json").read_text())["largest_tile_bytes"]
    return max(8 * largest, 8 * MIB)


def ring_buffers(budget_bytes: int, floor: int) -> dict:
    """The ring buffers' sizes: the host tiles' is the cache (the budget, at least the floor)."""
    return {"host_tiles": max(budget_bytes, floor), "read_tiles": 2 * floor, "processed": floor, "index": floor,
            "fetcher": floor, "global_reducer": floor}


def _engine(tree: Path, work: Path, algorithm: str, iterations: int, env: dict, *, budget_bytes: int, threads: int,
            timeout_s: float, memory_limit: int | None) -> tuple[runner.Ran, np.ndarray]:
    sizes = ring_buffers(budget_bytes, floor_bytes(work))
    if memory_limit:  # the working buffers, and what the floor adds to a smaller budget, on top
        memory_limit += sum(sizes.values()) - budget_bytes
    output = work / f"{algorithm}.values"
    output.unlink(missing_ok=True)
    unused = work / "unused"  # its fault-tolerance and perf-event folders: both off
    unused.mkdir(exist_ok=True)
    command = [build.programs(SYSTEM, tree)["mosaic"], "--algorithm", algorithm, "--max-iterations", iterations,
               "--nmic", 1, "--count-applier", threads, "--count-globalreducer", 1, "--count-globalfetcher", 1,
               "--count-indexreader", 1, "--count-vertex-reducer", 1, "--count-vertex-fetcher", 1,
               "--in-memory-mode", 0, "--paths-meta", work / "data" / "meta", "--paths-tile", work / "data" / "tile",
               "--path-globals", work / "globals", "--use-selective-scheduling", int(algorithm != "pagerank"),
               "--path-fault-tolerance-output", unused, "--enable-fault-tolerance", 0,
               "--enable-tile-partitioning", 1, "--count-tile-reader", 1, "--local-fetcher-mode", "DirectAccess",
               "--global-fetcher-mode", "Active", "--enable-perf-event-collection", 0, "--path-perf-events", unused,
               "--count-tile-processors", threads, "--use-smt", 0, "--host-tiles-rb-size", sizes["host_tiles"],
               "--local-reducer-mode", "GlobalReducer", "--processed-rb-size", sizes["processed"],
               "--read-tiles-rb-size", sizes["read_tiles"], "--tile-processor-mode", "Active",
               "--tile-processor-input-mode", "VertexFetcher", "--tile-processor-output-mode", "VertexReducer",
               "--count-followers", 0]
    env = {"MOSAIC_OUTPUT": str(output), "MOSAIC_INDEX_RB_SIZE": str(sizes["index"]),
           "MOSAIC_FETCHER_RB_SIZE": str(sizes["fetcher"]),
           "MOSAIC_GLOBAL_REDUCER_RB_SIZE": str(sizes["global_reducer"]), **env}
    ran = runner.run(command, work, threads=threads, timeout_s=timeout_s, memory_limit=memory_limit, env=env)
    if not output.is_file():
        raise runner.BaselineRunError(f"Mosaic's {algorithm} wrote no {output}:\n{ran.output[-2000:]}")
    values = np.fromfile(output, dtype="<f4" if algorithm == "pagerank" else "<u4")
    output.unlink()
    return ran, values


def _reported(output: str) -> float | None:
    rounds = re.findall(r"Round Time for iteration \d+ ([0-9.]+)msec", output)
    return sum(map(float, rounds)) / 1000 if rounds else None


def bfs(tree: Path, work: Path, root: int, *, max_iterations: int = 1 << 30, **limits) -> dict:
    ran, values = _engine(tree, work, "bfs", max_iterations, {"MOSAIC_BFS_ROOT": str(root)}, **limits)
    levels = np.where(values == UNREACHED, -1, values.astype(np.int64))
    return {"seconds": ran.seconds, "reported_s": _reported(ran.output), "levels": levels, **ran.memory}


def wcc(tree: Path, work: Path, *, max_iterations: int = 1 << 30, **limits) -> dict:
    ran, values = _engine(tree, work, "cc", max_iterations, {}, **limits)
    return {"seconds": ran.seconds, "reported_s": _reported(ran.output), "labels": values.astype(np.int64),
            **ran.memory}


def pagerank(tree: Path, work: Path, iterations: int, **limits) -> dict:
    ran, values = _engine(tree, work, "pagerank", iterations, {}, **limits)
    return {"seconds": ran.seconds, "reported_s": _reported(ran.output), "values": values.astype(np.float64),
            **ran.memory}
