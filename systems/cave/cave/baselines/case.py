"""One comparison case: a baseline system runs BFS, WCC or PageRank on a CAVE graph with a memory
budget and a thread count, and its answer is checked against the reference before its times are
returned. GraphX, an in-memory system, runs WCC only and without the budget, as the thesis ran it."""

from __future__ import annotations

from pathlib import Path

from ssdartifact import memlimit

from .. import reference
from . import answers, build, edges, graphchi, graphx, gridgraph, mosaic, runner

DRIVERS = {"graphchi": graphchi, "gridgraph": gridgraph, "mosaic": mosaic, "graphx": graphx}
ALGORITHMS = ("bfs", "wcc", "pagerank")


def run(system: str, graph: Path, work: Path, *, algorithm: str, root: int = 0, iterations: int = 10,
        damping: float = 0.85, budget_bytes: int, threads: int, timeout_s: float = 600.0,
        memory_limit: int | None = None, prepare_in: Path | None = None) -> dict:
    """A row: preprocessing seconds and bytes on disk, the run's wall seconds and the system's own
    reported seconds, and with `memory_limit` (bytes; a system's per-thread I/O buffers come on top)
    how it was enforced and the peak the kernel saw. The measured run starts with none of its files
    in the page cache. Raises answers.WrongAnswer when the answer differs from the reference,
    runner.BudgetExceeded when the system needs more memory than the limit, and runner.CannotRun
    when the system cannot run the case by design (the reason: shown as not run, never timed).
    The row's `answer` is what the checked answer found (BFS: reached and levels; WCC: components;
    PageRank, `iterations` of it with damping 0.85: the scores' sum).

    `prepare_in` is where the system's files are made when that is not `work` itself but the same
    folder seen another way: an emulated SSD's backing folder, so that preprocessing is not timed
    by the device's model (the measured runs read and write through the device)."""
    if system not in DRIVERS:
        raise ValueError(f"no baseline named {system!r}; known: {', '.join(DRIVERS)}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, not {algorithm!r}")
    for name, value in (("budget_bytes", budget_bytes), ("threads", threads)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")
    if algorithm == "pagerank" and damping != 0.85:
        raise runner.CannotRun(f"the baselines' PageRank programs have CAVE's default damping 0.85 built in, "
                               f"not {damping}")
    a = reference.load_cave(graph)
    if algorithm == "pagerank" and not edges.symmetric(a):
        raise runner.CannotRun("PageRank is compared on graphs whose lists are symmetric (CAVE's converted graphs "
                               "are): the reference's follows each vertex's list, the baselines' their in-edges")
    if not 0 <= root < a.shape[0]:
        raise ValueError(f"root {root} is not a vertex of {graph} ({a.shape[0]} vertices)")
    driver, tree, work = DRIVERS[system], build.build(system), Path(work)
    limits = {"threads": threads, "timeout_s": timeout_s}
    made_in = Path(prepare_in or work)
    if system == "graphchi":
        prepared = driver.prepare(tree, a, made_in, algorithm, budget_bytes=budget_bytes, **limits)
    else:
        prepared = driver.prepare(tree, a, made_in, algorithm, **limits)
    memlimit.evict([made_in])
    # the limit covers what a system allocates per thread whatever its budget (I/O buffers)
    limits["memory_limit"] = memory_limit and memory_limit + threads * driver.BYTES_PER_THREAD
    if system == "gridgraph":  # its mmap()ed vertex arrays where files can be mapped (patch 0005)
        limits["vertex_dir"] = made_in / "grid"
    if algorithm == "bfs":
        result = driver.bfs(tree, work, root, budget_bytes=budget_bytes, **limits)
        expected = reference.bfs_levels(a, root)
        if "levels" in result:
            answers.check_levels(system, result["levels"], expected)
        else:
            answers.check_parents(system, result["parents"], a, root, expected)
        answer = {"reached": int((expected >= 0).sum()), "levels": int(expected.max()) + 1}
    elif algorithm == "wcc":
        extra = {"vertices": a.shape[0]} if system == "graphx" else {}  # GraphX omits the ids in no edge
        result = driver.wcc(tree, work, budget_bytes=budget_bytes, **limits, **extra)
        expected = reference.wcc_labels(a)
        answers.check_components(system, result["labels"], expected)
        answer = {"components": len(set(expected.tolist()))}
    else:  # the damping is CAVE's and the reference's 0.85, built into both programs
        result = driver.pagerank(tree, work, iterations, budget_bytes=budget_bytes, **limits)
        expected = reference.pagerank(a, iterations, 0.85)
        answers.check_pagerank(system, result["values"], expected)
        answer = {"pagerank_sum": float(expected.sum())}
    return {"system": system, "algorithm": algorithm, "root": root if algorithm == "bfs" else None,
            "vertices": a.shape[0], "edges": a.nnz, "budget_bytes": budget_bytes,
            "threads": result.get("threads", threads),  # GraphX's: at most the cores (cave.baselines.graphx)
            "preprocess_s": prepared["preprocess_s"], "disk_bytes": prepared["disk_bytes"],
            "seconds": result["seconds"], "reported_s": result["reported_s"],
            "memory_limit": result.get("memory_limit", "none"), "peak_bytes": result.get("peak_bytes"),
            "answer": answer}
