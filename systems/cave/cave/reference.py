"""In-memory reference implementations (scipy.sparse.csgraph / numpy), used by the
correctness tests and as the "in-memory reference (scipy)" line of the cache sweeps.

The graph is a scipy CSR matrix A with A[v, u] = 1 when u is in v's stored neighbour list,
so a row is a vertex's list, as in the block file. They compute exactly what the engine
computes:

* bfs_levels(A, s): BFS level of every vertex from s following stored edges, -1 if unreached.
* wcc_labels(A): for a symmetric graph, each vertex's component labelled by its smallest id.
* pagerank(A, iterations, damping): the thesis's formula [T:1361-1396] in score form,
  y_0 = 1 and y_{t+1}(v) = (1 - d) + d * sum_{u in N(v)} y_t(u) / deg(u), where
  deg(u) = len(N(u)) and a vertex without neighbours passes nothing on (its score is 1 - d
  after the first iteration); no normalisation to 1, no redistribution of dangling mass.
  The engine keeps x = y / deg, as the thesis does; the values agree up to rounding.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

BLOCK = 4096
EDGES_PER_BLOCK = 1024
MAGIC = b"CAVEGRPH"


def load_cave(path: Path | str) -> sp.csr_matrix:
    """Parses a block file with numpy (independently of the engine; README "File format"),
    with the checks of README "Checks on read": ValueError for a file the engine refuses."""
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size < BLOCK or bytes(raw[16:24]) != MAGIC:
        raise ValueError(f"{path} is not a CAVE graph file")
    n, num_blocks, nvb, neb = (int(x) for x in raw[:16].view(np.int32))
    version, flags = (int(x) for x in raw[24:32].view(np.uint32))
    num_edges = int(raw[32:40].view(np.uint64)[0])
    if version != 1 or flags & ~1:
        raise ValueError(f"{path}: version {version}, flags {flags}")
    if min(n, num_blocks, nvb, neb) < 0 or nvb != -(-n // 512) or neb > 1 << 22 or num_blocks != 1 + nvb + neb \
            or raw.size != num_blocks * BLOCK:
        raise ValueError(f"{path}: inconsistent metadata")
    rec = raw[BLOCK : BLOCK * (1 + nvb)].view(np.uint32).reshape(-1, 2)[:n]
    degree = rec[:, 0].astype(np.int64)
    addr = rec[:, 1].astype(np.int64)
    offset = addr & 1023
    first = (addr >> 10) * EDGES_PER_BLOCK + offset
    listed = degree > 0
    if np.any(listed & (first + degree > neb * EDGES_PER_BLOCK)):
        raise ValueError(f"{path}: a list ends past the edge region")
    short = degree <= EDGES_PER_BLOCK
    if np.any(listed & short & (offset + degree > EDGES_PER_BLOCK)) or np.any(~short & (offset != 0)):
        raise ValueError(f"{path}: a list breaks the packing rules")
    if int(degree.sum()) != num_edges:
        raise ValueError(f"{path}: the degrees do not sum to num_edges")
    # the lists of each edge block tile its first slots: covered slots == end of the last list
    v = np.flatnonzero(listed)
    first_block = first[v] // EDGES_PER_BLOCK
    blocks = (first[v] + degree[v] - 1) // EDGES_PER_BLOCK - first_block + 1
    owner = np.repeat(v, blocks)
    block = (np.repeat(first_block, blocks) + np.arange(int(blocks.sum()))
             - np.repeat(np.cumsum(blocks) - blocks, blocks))
    base = block * EDGES_PER_BLOCK
    lo = np.maximum(first[owner], base)
    hi = np.minimum(first[owner] + degree[owner], base + EDGES_PER_BLOCK)
    covered = np.bincount(block, weights=hi - lo, minlength=neb)
    end = np.zeros(neb, dtype=np.int64)
    np.maximum.at(end, block, hi - base)
    if np.any(covered != end):
        raise ValueError(f"{path}: lists overlap or leave a gap in an edge block")
    edges = raw[BLOCK * (1 + nvb) :].view(np.uint32)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degree, out=indptr[1:])
    # gather every list: position of the k-th neighbour of v is first[v] + k
    idx = np.repeat(first - indptr[:-1], degree) + np.arange(indptr[-1], dtype=np.int64)
    ids = edges[idx]
    if np.any(ids >= n):
        raise ValueError(f"{path}: a neighbour id is not below the vertex count {n}")
    data = np.ones(ids.size, dtype=np.float64)
    return sp.csr_matrix((data, ids.astype(np.int32), indptr), shape=(n, n))


def load_text(path: Path | str, format: str = "snap", undirected: bool = False,
              renumber: bool = False) -> sp.csr_matrix:
    """A small text graph, parsed in Python by the converter's documented rules (for tests)."""
    src: list[int] = []
    dst: list[int] = []
    order: dict[int, int] = {}

    def vid(x: int) -> int:
        if not renumber:
            return x
        return order.setdefault(x, len(order))

    with open(path) as f:
        for line in f:
            tokens = line.replace(",", " ").split()
            if not tokens or tokens[0].startswith(("#", "%")):
                continue
            if format == "snap":
                u, v = vid(int(tokens[0])), vid(int(tokens[1]))
                src.append(u)
                dst.append(v)
            else:
                u = vid(int(tokens[0]))
                for t in tokens[1:]:
                    src.append(u)
                    dst.append(vid(int(t)))
    ids = src + dst
    n = (len(order) if renumber else (max(ids) + 1 if ids else 0))
    if format == "adjacency" and not renumber:  # a vertex on a line of its own still counts
        with open(path) as f:
            for line in f:
                tokens = line.split()
                if tokens and not tokens[0].startswith(("#", "%")):
                    n = max(n, int(tokens[0]) + 1)
    s, d = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
    if undirected:
        s, d = np.concatenate([s, d]), np.concatenate([d, s])
    a = sp.csr_matrix((np.ones(s.size), (s, d)), shape=(n, n))
    a.sum_duplicates()
    a.data[:] = 1.0
    return a


def degrees(a: sp.csr_matrix) -> np.ndarray:
    return np.diff(a.indptr)


def bfs_levels(a: sp.csr_matrix, source: int = 0) -> np.ndarray:
    if a.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    dist = csgraph.shortest_path(a, directed=True, unweighted=True, indices=source)
    return np.where(np.isinf(dist), -1, dist).astype(np.int64)


def wcc_labels(a: sp.csr_matrix) -> np.ndarray:
    n = a.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    _, comp = csgraph.connected_components(a, directed=True, connection="weak")
    smallest = np.full(comp.max() + 1, n, dtype=np.int64)
    np.minimum.at(smallest, comp, np.arange(n))
    return smallest[comp]


def pagerank(a: sp.csr_matrix, iterations: int = 10, damping: float = 0.85) -> np.ndarray:
    n = a.shape[0]
    deg = degrees(a).astype(np.float64)
    y = np.ones(n)
    inv = np.divide(1.0, deg, out=np.zeros(n), where=deg > 0)
    for _ in range(iterations):
        y = (1.0 - damping) + damping * (a @ (y * inv))
    return y


def timed(fn, *args, **kwargs):
    """(result, seconds) of one call, wall clock."""
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - t0


def run_reference(graph: Path | str, algorithm: str, *, source: int = 0, iterations: int = 10,
                  damping: float = 0.85) -> dict:
    """Loads a block file into memory and times one algorithm (loading not included).
    Returns {"load_s", "runtime_s", "result"} with the same summary as the engine's row
    (reached, components or pagerank_sum)."""
    a, load_s = timed(load_cave, graph)
    if algorithm == "bfs":
        lv, t = timed(bfs_levels, a, source)
        return {"load_s": load_s, "runtime_s": t, "reached": int((lv >= 0).sum()),
                "levels": int(lv.max()) + 1 if lv.size else 0}
    if algorithm == "wcc":
        lab, t = timed(wcc_labels, a)
        return {"load_s": load_s, "runtime_s": t, "components": int(np.unique(lab).size)}
    if algorithm == "pagerank":
        y, t = timed(pagerank, a, iterations, damping)
        return {"load_s": load_s, "runtime_s": t, "pagerank_sum": float(y.sum())}
    raise ValueError(f"no in-memory reference for algorithm {algorithm!r} (bfs, wcc, pagerank)")
