"""A baseline's answer against the reference (cave.reference, scipy): a mismatch raises
WrongAnswer, so that a wrong answer never becomes a time in a figure."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class WrongAnswer(RuntimeError):
    pass


def _padded(values: np.ndarray, n: int, fill) -> np.ndarray:
    """A system that numbers vertices up to the largest id in an edge leaves out the isolated
    vertices above it: they are unreached by BFS and their own component."""
    values = np.asarray(values, dtype=np.int64)
    if values.size > n:
        raise WrongAnswer(f"{values.size} vertices in the answer, the graph has {n}")
    tail = np.arange(values.size, n, dtype=np.int64) if fill == "own id" else np.full(n - values.size, fill)
    return np.concatenate([values, tail])


def _first_differences(found: np.ndarray, expected: np.ndarray, what: str) -> str:
    wrong = np.flatnonzero(found != expected)
    shown = ", ".join(f"vertex {v}: {found[v]} instead of {expected[v]}" for v in wrong[:5])
    return f"{wrong.size} of {expected.size} {what} differ ({shown})"


def check_levels(system: str, levels: np.ndarray, expected: np.ndarray) -> None:
    """BFS levels (-1: not reached) equal the reference's, vertex by vertex."""
    found = _padded(levels, expected.size, -1)
    if not np.array_equal(found, expected):
        raise WrongAnswer(f"{system}'s BFS: " + _first_differences(found, expected, "levels"))


def check_parents(system: str, parents: np.ndarray, a: sp.csr_matrix, root: int, expected: np.ndarray) -> None:
    """A BFS tree (parent of each reached vertex, -1: not reached): the same vertices reached as
    the reference, and every parent an in-neighbour one level closer to the root."""
    n = expected.size
    parents = _padded(parents, n, -1)
    reached, should = parents >= 0, expected >= 0
    if not np.array_equal(reached, should):
        raise WrongAnswer(f"{system}'s BFS: " + _first_differences(reached, should, "reached flags"))
    if parents[root] != root:
        raise WrongAnswer(f"{system}'s BFS: the root {root} has parent {parents[root]}")
    children = np.flatnonzero(reached & (np.arange(n) != root))
    parent = parents[children]
    if np.any(parent >= n):
        raise WrongAnswer(f"{system}'s BFS: a parent id is not below the vertex count {n}")
    not_one_closer = expected[parent] != expected[children] - 1
    not_an_edge = ~_has_edges(a, parent, children)
    bad = np.flatnonzero(not_one_closer | not_an_edge)
    if bad.size:
        v = children[bad[0]]
        u = parents[v]
        raise WrongAnswer(f"{system}'s BFS: {bad.size} parents are not in-neighbours one level closer to the root "
                          f"(vertex {v} at level {expected[v]} has parent {u} at level {expected[u]})")


def _has_edges(a: sp.csr_matrix, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Whether each sources[i] -> targets[i] is a stored edge: every edge as the key u * n + v, which
    sorted lists give in order, and one binary search per query."""
    a = a.tocsr()
    a.sort_indices()
    n = np.int64(a.shape[0])
    keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(a.indptr)) * n + a.indices.astype(np.int64)
    wanted = np.asarray(sources, dtype=np.int64) * n + np.asarray(targets, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, wanted), max(keys.size - 1, 0))
    return (keys[at] == wanted) if keys.size else np.zeros(wanted.size, dtype=bool)


def check_components(system: str, labels: np.ndarray, expected: np.ndarray) -> None:
    """WCC labels (each vertex's smallest id in its component) equal the reference's."""
    found = _padded(labels, expected.size, "own id")
    if not np.array_equal(found, expected):
        raise WrongAnswer(f"{system}'s WCC: " + _first_differences(found, expected, "labels"))


# PageRank's values are single-precision sums in the baselines (double in the reference): equal within this.
PAGERANK_RELATIVE_TOLERANCE = 1e-3


def check_pagerank(system: str, values: np.ndarray, expected: np.ndarray) -> None:
    """PageRank values equal the reference's within PAGERANK_RELATIVE_TOLERANCE, vertex by vertex (a
    vertex above the largest id in an edge, which the system may not number, keeps the start value
    0.15 + 0.85 x 0)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size > expected.size:
        raise WrongAnswer(f"{values.size} vertices in {system}'s PageRank, the graph has {expected.size}")
    found = np.concatenate([values, expected[values.size:]])
    close = np.isclose(found, expected, rtol=PAGERANK_RELATIVE_TOLERANCE, atol=0)
    if not close.all():
        wrong = np.flatnonzero(~close)
        shown = ", ".join(f"vertex {v}: {found[v]:.6g} instead of {expected[v]:.6g}" for v in wrong[:5])
        raise WrongAnswer(f"{system}'s PageRank: {wrong.size} of {expected.size} values differ by more than "
                          f"{PAGERANK_RELATIVE_TOLERANCE:g} of the reference's ({shown})")
