"""The graph CAVE runs on, as the edge lists the baselines read: the same edges and the same
vertex ids (a stored list of v holding u is the edge v -> u)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp


def of(a: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(sources, targets) of every stored edge, in the order of the lists."""
    sources = np.repeat(np.arange(a.shape[0], dtype=np.int64), np.diff(a.indptr))
    return sources, a.indices.astype(np.int64)


def symmetric(a: sp.csr_matrix) -> bool:
    return (a != a.T).nnz == 0


def symmetrized(a: sp.csr_matrix) -> sp.csr_matrix:
    both = ((a + a.T) > 0).astype(np.float64).tocsr()
    both.sort_indices()
    return both


def write_text(a: sp.csr_matrix, path: Path) -> Path:
    """'v u' per line (GraphChi's edgelist)."""
    sources, targets = of(a)
    np.savetxt(path, np.column_stack([sources, targets]), fmt="%d", delimiter=" ")
    return path


def write_int32_pairs(a: sp.csr_matrix, path: Path) -> Path:
    """Little-endian int32 (source, target) pairs, no header (GridGraph's input)."""
    sources, targets = of(a)
    np.column_stack([sources, targets]).astype("<i4").tofile(path)
    return path
