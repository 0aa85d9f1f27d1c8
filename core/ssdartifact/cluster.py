"""Running the workflow on a SLURM cluster (workflow/profiles/slurm, docs/cluster.md).

Snakemake's SLURM executor submits the jobs; this module only says where a measurement must
go and what a job asks for, in the executor's own resource names: a device's declaration
(configs/devices.yaml, key `cluster`) names the node that holds it, a node feature or a
partition, and those are checked against the running cluster (sinfo) before anything runs. A
job's memory comes from what the same rule used on this machine (results/benchmarks/).
"""

from __future__ import annotations

import csv
import math
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

# Every SLURM job runs a Snakemake process beside the step (the executor's jobstep): with memory
# limits enforced, 100 MB for it was too little and 500 MB enough (measured on a test cluster, 2026-11-25).
SNAKEMAKE_IN_JOB_MB = 500
# A step's measured peak (max_rss) times this: the same rule at another size or on another node
# needs somewhat more, and a job over its --mem is killed where memory is enforced.
MEMORY_MARGIN = 1.5


@dataclass
class Node:
    name: str
    features: set[str] = field(default_factory=set)
    partitions: set[str] = field(default_factory=set)


def placement(declaration: dict) -> dict[str, str | None]:
    """The executor's resources that send a job on this device to the node that holds it and give
    it that node to itself (a measurement runs alone): `constraint` (sbatch -C), `slurm_partition`
    (-p), `slurm_extra` (--nodelist, --exclusive). None: not asked for."""
    where = declaration.get("cluster", {})
    extra = [*([f"--nodelist={where['node']}"] if "node" in where else []), "--exclusive"]
    return {"constraint": where.get("feature"), "slurm_partition": where.get("partition"),
            "slurm_extra": " ".join(extra) or None}


def cluster_nodes(env: dict | None = None) -> dict[str, Node]:
    """The running cluster's nodes with their features and partitions (sinfo)."""
    if shutil.which("sinfo") is None:
        raise ClusterError("sinfo is not installed: run from a machine that can submit to the SLURM cluster "
                           "(Debian: slurm-client)")
    shown = subprocess.run(["sinfo", "-h", "-N", "-o", "%N|%f|%P"], capture_output=True, text=True, env=env)
    if shown.returncode != 0:
        raise ClusterError(f"sinfo failed, so the cluster's nodes are unknown: {shown.stderr.strip()}")
    nodes: dict[str, Node] = {}
    for line in shown.stdout.splitlines():
        if not line.strip():
            continue
        name, features, partition = line.split("|")
        node = nodes.setdefault(name, Node(name))
        node.features |= {f for f in features.split(",") if f and f != "(null)"}
        node.partitions.add(partition.rstrip("*"))  # sinfo marks the default partition with *
    return nodes


class ClusterError(RuntimeError):
    """The cluster cannot run the profile as declared."""


def placement_problems(declarations: list[dict], nodes: dict[str, Node]) -> list[str]:
    """What keeps a profile's devices from running on this cluster, one line each: a node,
    feature or partition the cluster does not have, a combination no node satisfies, and a real
    device (file, block) whose node is not declared. An emulated device needs no declaration:
    emussd mounts it on whichever node runs the measurement."""
    problems = []
    for device in declarations:
        where = device.get("cluster")
        shown = f"configs/devices.yaml: device {device['name']!r}: key cluster"
        if where is None:
            if device["kind"] != "emulated":
                problems.append(f"configs/devices.yaml: device {device['name']!r} is a {device['kind']} device "
                                "but does not say where it is on the cluster: add cluster: {node: ...} "
                                "(or feature: or partition:)")
            continue
        if "node" in where and where["node"] not in nodes:
            problems.append(f"{shown}.node: {where['node']!r} is not a node of this cluster "
                            f"(sinfo -N: {', '.join(sorted(nodes)) or 'none'})")
            continue
        known = {"feature": set().union(*(n.features for n in nodes.values())),
                 "partition": set().union(*(n.partitions for n in nodes.values()))}
        unknown = [key for key in ("feature", "partition") if key in where and where[key] not in known[key]]
        for key in unknown:
            problems.append(f"{shown}.{key}: {where[key]!r} is not a {key} of this cluster "
                            f"(sinfo: {', '.join(sorted(known[key])) or 'none'})")
        if unknown:
            continue
        fits = [n for n in nodes.values()
                if where.get("node", n.name) == n.name and where.get("feature", "") in n.features | {""}
                and where.get("partition", "") in n.partitions | {""}]
        if not fits:
            problems.append(f"{shown}: no node is {', '.join(f'{k} {v!r}' for k, v in where.items())} at once")
    return problems


def profile_default(profile: Path, resource: str) -> int | None:
    """A resource's value in a Snakemake profile's default-resources (`- mem_mb=2000`), None if unset."""
    entries = yaml.safe_load((profile / "config.yaml").read_text(encoding="utf-8")).get("default-resources", [])
    values = dict(str(entry).split("=", 1) for entry in entries if "=" in str(entry))
    return int(values[resource]) if resource in values else None


def memory_mb(benchmarks: list[Path]) -> int | None:
    """The memory (MB) to ask for a job whose rule used these benchmarks' peaks on this machine
    (Snakemake's benchmark files, column max_rss in MB); None when none was measured."""
    peaks = []
    for path in benchmarks:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                try:
                    peaks.append(float(row["max_rss"]))
                except (KeyError, ValueError):  # "NA" when the step ended before the first sample
                    pass
    if not peaks:
        return None
    return SNAKEMAKE_IN_JOB_MB + 100 * math.ceil(max(peaks) * MEMORY_MARGIN / 100)
