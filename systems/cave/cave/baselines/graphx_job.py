"""GraphX's connected components on an edge list, as a Spark job in local mode (cave.baselines.graphx
runs it with the pinned Spark on its path): the thesis's single-node GraphX (T1590-1595).

    python graphx_job.py EDGES OUT_DIR --threads N --memory-mib M

GraphX has no Python API; its library is called through the JVM gateway of PySpark:
GraphLoader.edgeListFile, then lib.ConnectedComponents.run (undirected: each component's label is
its smallest vertex id). Writes OUT_DIR/labels.npy (int64 per vertex id up to the largest in an
edge; -1 where GraphX has no vertex: ids in no edge) and OUT_DIR/times.json: `load_s` (the edges
read and partitioned into GraphX's in-memory graph) and `wcc_s` (the components computed and
materialized), both after the JVM and the SparkContext are up, as on a running Spark installation.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np


def _class(jvm, dotted: str):
    """A JVM class by its dotted name (getattr: names such as scala.reflect.ClassTag$ are not Python's)."""
    node = jvm
    for part in dotted.split("."):
        node = getattr(node, part)
    return node


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("edges", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--memory-mib", type=int, required=True)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = args.out / "spark-local"
    scratch.mkdir()

    from pyspark import SparkConf, SparkContext  # noqa: PLC0415 (on the path only inside this job)

    conf = (SparkConf().setMaster(f"local[{args.threads}]").setAppName("cave-baseline-graphx")
            .set("spark.driver.memory", f"{args.memory_mib}m")
            .set("spark.local.dir", str(scratch))           # shuffle files in the run's folder only
            # and written by plain writes: its FileChannel.transferTo copies fail on an emulated SSD's
            # FUSE files (direct I/O), where the shuffle of 2 partitions first ran
            .set("spark.file.transferTo", "false")
            # and the JVM's temporary files too; no performance-data file in /tmp
            .set("spark.driver.extraJavaOptions", f"-XX:-UsePerfData -Djava.io.tmpdir={scratch}")
            .set("spark.ui.enabled", "false").set("spark.ui.showConsoleProgress", "false")
            .set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1")
            .set("spark.default.parallelism", str(args.threads)))
    context = SparkContext(conf=conf)
    context.setLogLevel("ERROR")
    version = context.version
    try:
        jvm = context._jvm
        class_tag = getattr(_class(jvm, "scala.reflect.ClassTag$"), "MODULE$")
        memory_only = jvm.org.apache.spark.storage.StorageLevel.MEMORY_ONLY()
        started = time.perf_counter()
        graph = jvm.org.apache.spark.graphx.GraphLoader.edgeListFile(
            context._jsc.sc(), str(args.edges.resolve()), False, args.threads, memory_only, memory_only)
        graph.edges().count()
        loaded = time.perf_counter()
        components = jvm.org.apache.spark.graphx.lib.ConnectedComponents.run(
            graph, 2**31 - 1, class_tag.Int(), class_tag.Int())
        vertices = components.vertices()
        vertices.count()
        finished = time.perf_counter()
        text = args.out / "components"
        vertices.saveAsTextFile(str(text.resolve()))
    finally:
        context.stop()
    pairs = []
    for part in sorted(text.glob("part-*")):
        for line in part.read_text().splitlines():  # "(vertex,label)"
            vertex, label = line.strip("()").split(",")
            pairs.append((int(vertex), int(label)))
    found = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    labels = np.full(int(found[:, 0].max()) + 1 if len(found) else 0, -1, dtype=np.int64)
    labels[found[:, 0]] = found[:, 1]
    np.save(args.out / "labels.npy", labels)
    (args.out / "times.json").write_text(json.dumps({"load_s": loaded - started, "wcc_s": finished - loaded,
                                                     "spark_version": version,
                                                     "java_home": os.environ.get("JAVA_HOME", "")}))


if __name__ == "__main__":
    main()
