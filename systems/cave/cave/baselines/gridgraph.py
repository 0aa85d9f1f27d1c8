"""GridGraph (2-level hierarchical partitioning, streaming edge blocks) on a CAVE graph: its int32
edge pairs are preprocessed into a P x P grid (`prepare`, timed as its preprocessing), then its own
bfs, wcc and pagerank run on the grid and leave their answers in their vertex arrays' folder (the
grid's, or one on a file system that can map files): `parent` (int32 per vertex, -1: not reached),
`label` (uint32 per vertex, the smallest id of the component) and `pagerank` (float per vertex).

GridGraph's wcc propagates labels from source to target only: it gets the symmetrized graph, which
is the graph itself when every list is mirrored (CAVE's converted graphs are). The memory budget is
GridGraph's (bytes, a fraction of a GB after the artifact's patch); below the edge data's size it
reads edges with O_DIRECT."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import build, edges, runner

SYSTEM = "gridgraph"
PARTITIONS = 4  # GridGraph's README preprocesses LiveJournal into a 4 x 4 grid
GB = 1 << 30
# Memory GridGraph allocates whatever its budget: one I/O buffer per thread (IOSIZE, 1 MiB after the
# artifact's patch 0004), which streams edges and caches nothing.
BYTES_PER_THREAD = 1 << 20


def _budget_gb(budget_bytes: int) -> str:
    return f"{budget_bytes / GB:.9f}"


def prepare(tree: Path, a: sp.csr_matrix, work: Path, algorithm: str, *, threads: int, timeout_s: float,
            partitions: int = PARTITIONS) -> dict:
    """The grid in `work`/grid (`work` emptied first): of `a` for BFS, of `a` symmetrized for WCC."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    graph = edges.symmetrized(a) if algorithm == "wcc" and not edges.symmetric(a) else a
    source = edges.write_int32_pairs(graph, work / "edges.bin")
    ran = runner.run([build.programs(SYSTEM, tree)["preprocess"], "-i", source, "-o", work / "grid",
                      "-v", a.shape[0], "-p", partitions, "-t", 0], work, threads=threads, timeout_s=timeout_s)
    source.unlink()
    return {"preprocess_s": ran.seconds, "disk_bytes": runner.disk_bytes([work / "grid"])}


def _reported(output: str, pattern: str) -> float | None:
    found = re.search(pattern, output)
    return float(found.group(1)) if found else None


def _answer_run(tree: Path, work: Path, program: str, arguments: list, *, vertex_dir: Path | None, budget_bytes: int,
                threads: int, timeout_s: float, memory_limit: int | None) -> tuple[runner.Ran, Path]:
    """Run bfs or wcc on work/grid, with its vertex arrays in `vertex_dir` (default: the grid's folder;
    the artifact's patch 0005): the folder they are in."""
    folder = Path(vertex_dir or work / "grid")
    ran = runner.run([build.programs(SYSTEM, tree)[program], work / "grid", *arguments, _budget_gb(budget_bytes)],
                     work, threads=threads, timeout_s=timeout_s, memory_limit=memory_limit,
                     env={"GRIDGRAPH_VERTEX_DIR": str(folder)})
    return ran, folder


def _vertex_array(work: Path, path: Path, dtype: str) -> np.ndarray:
    """One value per vertex: a vertex array GridGraph saved through O_DIRECT is padded to whole pages,
    so it is cut at the grid's vertex count (its `meta`: edge type, vertices, edges, partitions)."""
    vertices = int((work / "grid" / "meta").read_text().split()[1])
    return np.fromfile(path, dtype=dtype)[:vertices].astype(np.float64 if dtype == "<f4" else np.int64)


def bfs(tree: Path, work: Path, root: int, **limits) -> dict:
    ran, folder = _answer_run(tree, work, "bfs", [root], **limits)
    parents = _vertex_array(work, folder / "parent", "<i4")
    return {"seconds": ran.seconds, "reported_s": _reported(ran.output, r"vertices from \d+ in ([0-9.]+) seconds"),
            "parents": parents, **ran.memory}


def wcc(tree: Path, work: Path, **limits) -> dict:
    ran, folder = _answer_run(tree, work, "wcc", [], **limits)
    labels = _vertex_array(work, folder / "label", "<u4")
    return {"seconds": ran.seconds, "reported_s": _reported(ran.output, r"components found in ([0-9.]+) seconds"),
            "labels": labels, **ran.memory}


def pagerank(tree: Path, work: Path, iterations: int, **limits) -> dict:
    ran, folder = _answer_run(tree, work, "pagerank", [iterations], **limits)
    values = _vertex_array(work, folder / "pagerank", "<f4")
    return {"seconds": ran.seconds,
            "reported_s": _reported(ran.output, r"iterations of pagerank took ([0-9.]+) seconds"),
            "values": values, **ran.memory}
