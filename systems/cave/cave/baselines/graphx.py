"""GraphX (Apache Spark's graph library) on a CAVE graph, as the thesis ran it: one node, the whole
graph in memory, weakly connected components only (T1586-1595, Figure 5.11B).

The pinned Spark (PyPI's pyspark source, configs/sources.yaml: its jars, GraphX's among them, and
its Python side) runs the job graphx_job.py in local mode with `threads` cores, on Debian's
OpenJDK 17. The job loads the same edge list GraphChi gets (text, the same vertex ids) with
GraphLoader.edgeListFile and runs lib.ConnectedComponents; its shuffle files go to the run's
folder on the device. GraphX has no preprocessing of its own: it reads the text at every run.

The comparison's memory budget does not apply: GraphX is an in-memory system (the thesis: "all data
in memory while CAVE uses 3 %"), so the JVM gets `heap_mib` of heap and no memory cgroup, and the
row says so. Its seconds are the job's whole process, the JVM's and the SparkContext's start
included (about 10 s here), as every baseline's are its program's and as the time limit counts
them, so that a run stopped at the limit bounds GraphX's time from below; reported_s is what GraphX
itself took, the load and the components after Spark was up.

Its threads (Spark's local[n]) and edge partitions are the device's k_r, as every system's, but at
most the machine's cores: GraphX reads nothing from the device while it computes, so the device's
concurrency gives it nothing, and its Pregel supersteps schedule one task per partition, so more
partitions than cores only add scheduling (on 2 cores, 80 partitions took 102 s for the quick
social graph's components where 2 took 10 s, and over 300 s for the road grid where 2 took 24 s).
Spark's own default, local[*], is the machine's cores too."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import edges, runner

SYSTEM = "graphx"
EDGE_LIST = "graph.edges"
JOB = Path(__file__).with_name("graphx_job.py")
HEAP_MIB = 1024  # the driver's JVM heap: Spark's own default; the quick graphs take a few MiB
BYTES_PER_THREAD = 0
MEMORY = f"none: in memory, as the thesis ran GraphX (JVM heap {HEAP_MIB} MiB, no cgroup)"


def environment(tree: Path) -> dict:
    """Spark's home (its jars and launch scripts), its Python side and py4j: the pinned source's own
    layout (deps/, pyspark/, lib/py4j-*-src.zip), used in place, as a Spark distribution is."""
    py4j = sorted((tree / "lib").glob("py4j-*-src.zip"))
    if not py4j:
        raise runner.BaselineRunError(f"{tree}/lib has no py4j-*-src.zip: not the pinned pyspark source")
    return {"SPARK_HOME": str(tree / "deps"), "PYTHONPATH": os.pathsep.join([str(tree), str(py4j[-1])]),
            "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}


def prepare(tree: Path, a: sp.csr_matrix, work: Path, algorithm: str, *, threads: int, timeout_s: float) -> dict:
    if algorithm != "wcc":
        raise runner.CannotRun(f"the thesis ran GraphX for WCC only (Figure 5.11B), not {algorithm}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    listed = edges.write_text(a, work / EDGE_LIST)
    return {"preprocess_s": None, "disk_bytes": listed.stat().st_size}


def threads_used(threads: int) -> int:
    """GraphX's threads and edge partitions for a device's `threads`: at most the machine's cores."""
    return max(1, min(threads, os.cpu_count() or 1))


def wcc(tree: Path, work: Path, *, threads: int, timeout_s: float, memory_limit: int | None = None,
        budget_bytes: int | None = None, vertices: int) -> dict:
    """Labels per vertex (the smallest id of its component); a vertex in no edge, which GraphX's
    loader does not create, is its own component, as in the reference. `threads` in the result:
    those it ran with (threads_used)."""
    threads = threads_used(threads)
    out = work / "graphx-out"
    shutil.rmtree(out, ignore_errors=True)
    ran = runner.run([sys.executable, JOB, work / EDGE_LIST, out, "--threads", threads, "--memory-mib", HEAP_MIB],
                     work, threads=threads, timeout_s=timeout_s, env=environment(tree))
    times = json.loads((out / "times.json").read_text())
    found = np.load(out / "labels.npy")
    if len(found) > vertices:
        raise runner.BaselineRunError(f"GraphX reported vertex {len(found) - 1}, beyond the graph's {vertices}")
    labels = np.arange(vertices, dtype=np.int64)
    present = np.flatnonzero(found >= 0)
    labels[present] = found[present]
    shutil.rmtree(out, ignore_errors=True)
    return {"seconds": ran.seconds, "reported_s": times["load_s"] + times["wcc_s"], "labels": labels,
            "memory_limit": MEMORY, "peak_bytes": None, "threads": threads}
