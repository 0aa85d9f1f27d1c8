"""GraphChi (graphchi-cpp, parallel sliding windows) on a CAVE graph: its edge list is sharded by
the first run of a program (`prepare`, timed as GraphChi's preprocessing), then BFS (the artifact's
example_apps/bfs), connected components (GraphChi's own) and PageRank (the artifact's
example_apps/pagerank_cave) run on the shards and leave one 4-byte value per vertex in
<edge list>.4B.vout: the level (uint32, 4294967295: not reached), the smallest vertex id of the
component (uint32; GraphChi's components treat every edge as undirected), or the score (float).
Shards hold the edges' values: BFS and components share 4-byte ones, PageRank's bulk-synchronous
engine has 8-byte ones, so it gets shards of its own.

The memory budget is GraphChi's membudget_mb (whole MB, at least 1); it sets the shard count, so
each budget gets its own shards. GraphChi reads through the page cache (no O_DIRECT)."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import build, edges, runner

SYSTEM = "graphchi"
EDGE_LIST = "graph.edges"
UNREACHED = 0xFFFFFFFF
BYTES_PER_THREAD = 0  # GraphChi's buffers come out of its membudget_mb


def budget_mb(budget_bytes: int) -> int:
    return max(1, math.ceil(budget_bytes / (1 << 20)))


def _program(tree: Path, name: str, work: Path, arguments: list, *, budget_bytes: int, threads: int,
             timeout_s: float, memory_limit: int | None = None) -> runner.Ran:
    command = [build.programs(SYSTEM, tree)[name], "file", work / EDGE_LIST, "filetype", "edgelist", *arguments,
               "execthreads", threads, "membudget_mb", budget_mb(budget_bytes), "metrics.reporter", "console"]
    # GraphChi finds conf/graphchi.cnf under GRAPHCHI_ROOT; the command line overrides it
    return runner.run(command, work, threads=threads, timeout_s=timeout_s, env={"GRAPHCHI_ROOT": str(tree)},
                      memory_limit=memory_limit)


def _reported_runtime(output: str) -> float | None:
    found = re.search(r"^runtime:\s+([0-9.eE+-]+) s", output, re.MULTILINE)
    return float(found.group(1)) if found else None


def prepare(tree: Path, a: sp.csr_matrix, work: Path, algorithm: str, *, budget_bytes: int, threads: int,
            timeout_s: float) -> dict:
    """The edge list in `work` (emptied first) and its shards for this budget and algorithm."""
    if a.nnz == a.diagonal().astype(bool).sum():
        raise runner.CannotRun("GraphChi cannot shard a graph without an edge between two vertices "
                               "(its sharder crashes; it drops self-loops)")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    edges.write_text(a, work / EDGE_LIST)
    program = "pagerank" if algorithm == "pagerank" else "bfs"  # no iteration: the shards only
    ran = _program(tree, program, work, ["niters", 0], budget_bytes=budget_bytes, threads=threads,
                   timeout_s=timeout_s)
    shards = [path for path in work.iterdir() if path.name.startswith(EDGE_LIST + ".") or
              path.name == EDGE_LIST + "_degs.bin"]
    return {"preprocess_s": ran.seconds,
            "disk_bytes": runner.disk_bytes(p for p in shards if not p.name.endswith(".vout"))}


def _vertex_values(work: Path) -> np.ndarray:
    return np.fromfile(work / f"{EDGE_LIST}.4B.vout", dtype="<u4").astype(np.int64)


def bfs(tree: Path, work: Path, root: int, **limits) -> dict:
    numbered = int((work / f"{EDGE_LIST}.numvertices").read_text())
    if root >= numbered:
        raise runner.CannotRun(f"GraphChi numbers the vertices up to the largest id in an edge between two "
                               f"vertices ({numbered - 1}): it has no vertex {root} to start a BFS from")
    ran = _program(tree, "bfs", work, ["root", root], **limits)
    levels = _vertex_values(work)
    levels[levels == UNREACHED] = -1
    return {"seconds": ran.seconds, "reported_s": _reported_runtime(ran.output), "levels": levels, **ran.memory}


def wcc(tree: Path, work: Path, **limits) -> dict:
    ran = _program(tree, "wcc", work, [], **limits)
    return {"seconds": ran.seconds, "reported_s": _reported_runtime(ran.output), "labels": _vertex_values(work),
            **ran.memory}


def pagerank(tree: Path, work: Path, iterations: int, **limits) -> dict:
    # the bulk-synchronous engine's first iteration only sets every vertex's start value: iterations + 1
    # of them make `iterations` updates (checked against the reference, which iterates that often)
    ran = _program(tree, "pagerank", work, ["niters", iterations + 1], **limits)
    values = np.fromfile(work / f"{EDGE_LIST}.4B.vout", dtype="<f4").astype(np.float64)
    return {"seconds": ran.seconds, "reported_s": _reported_runtime(ran.output), "values": values, **ran.memory}
