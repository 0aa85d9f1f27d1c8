"""The baselines' points on one device (cave.plan.device_points(..., baselines=True)), as CAVE's own
campaign runs its points (cave.campaign): each point kept in `raw_dir` as it finishes, so that an
interrupted campaign resumes, and reused only under the same builds, device and settings.

A point is kept under its system's build (its key has the build's): a rebuilt system measures its
points again. A baseline point (kind "baseline") runs one system on one graph with the device's k_r threads and a
memory budget of the point's cache share of CAVE's file: the system's files are made in the device's
backing folder (preprocessing is not timed by the device's model), evicted from the page cache, and
the measured run reads them through the device inside a memory cgroup of the budget plus the
allowance (cave.baselines.case). Its answer is checked vertex by vertex against the reference; a
wrong answer fails the campaign. A case the system cannot run by design, one that needs more than
its memory limit and one that runs past the time limit are rows too, with their status and reason,
and no time.

A preprocessing point (kind "preprocess", Table 5.2) times CAVE's own conversion of the same edge
list GraphChi gets (text, one edge per line) into its block file, in the same backing folder.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Callable

from ssdartifact import devices, files
from ssdartifact.kept import KeptRuns, key_of

from .. import engine, experiment, plan, reference
from ..datasets import GRAPHS
from . import build, case, edges, runner

# How each point ended (column `status`); only "ran" has times.
STATUSES = {"ran": "measured, its answer checked against the reference",
            "cannot_run": "the system cannot run this case by its own design (see reason)",
            "over_budget": "the kernel stopped it at its memory limit: it needs more memory than its budget",
            "timed_out": "it ran past the campaign's time limit (configs/experiments/cave.yaml: baselines.timeout_s)"}


def run(*, device: str, points: list[dict], device_labels: dict, k_r: int, binary: Path, settings: dict,
        raw_dir: Path, open_device: Callable, say: Callable[[str], None]) -> tuple[list[dict], list[Path]]:
    """(the rows, the files they are kept in) of every baseline point on `device`. `settings`:
    configs/experiments/cave.yaml's `baselines` (allowance_mib, timeout_s)."""
    systems = sorted({point["system"] for point in points if point["kind"] == "baseline"})
    builds = {system: build.build_key(system) for system in systems}
    kept_runs = KeptRuns(raw_dir, [files.sha256_file(binary), devices.declaration(device), device_labels, settings])
    # a point is measured again when its system's build changed, not when another system's did
    keys = [key_of({**plan.resolve(point, k_r), "build": builds.get(point["system"])}) for point in points]
    pending = [index for index, key in enumerate(keys) if kept_runs.get(key) is None]
    if pending:
        trees = {system: build.build(system) for system in systems}  # built by the workflow's rule already
        _measure([points[index] for index in pending], [keys[index] for index in pending], trees, device,
                 device_labels, k_r, binary, settings, kept_runs, open_device, say)
    kept = [kept_runs.get(key) for key in keys]
    return [row for point in kept for row in point["rows"]], [kept_runs.path(key) for key in keys]


def _measure(points: list[dict], keys: list[str], trees: dict, device: str, device_labels: dict, k_r: int,
             binary: Path, settings: dict, kept_runs: KeptRuns, open_device: Callable,
             say: Callable[[str], None]) -> None:
    graphs = {}
    for point in points:
        graphs.setdefault(point["spec"]["name"], experiment.prepare_graph(binary, point["spec"], GRAPHS)[0])
    # a system's files: GridGraph's grid is about 3 x its int32 input, GraphChi's shards about 2 x; one
    # case's files at a time (each case starts from an empty folder)
    needed = 8 * max(path.stat().st_size for path in graphs.values()) + (64 << 20)
    with open_device(needed) as opened:
        if opened.io_dir is None:
            raise case.runner.BaselineRunError(
                f"device {device!r} is a raw block device: the baselines read files, and need a file system")
        for index, (point, key) in enumerate(zip(points, keys)):
            point = plan.resolve(point, k_r)
            graph = graphs[point["spec"]["name"]]
            labels = {"device": device, "dataset": point["spec"]["name"], "graph": point["graph"],
                      "graph_size": point["spec"]["name"].removeprefix(f"{point['graph']}-"),
                      "repetition": point["repetition"], "file_bytes": graph.stat().st_size, **device_labels}
            folder = f"baselines/{point['system']}"
            work, prepare_in = opened.io_dir / folder, opened.prepare_dir / folder
            if point["kind"] == "preprocess":
                say(f"[{index + 1}/{len(points)} to measure] CAVE's preprocessing of {labels['dataset']}")
                row = {**labels, **_cave_preprocessing(binary, graph, prepare_in)}
            else:
                say(f"[{index + 1}/{len(points)} to measure] {plan.BASELINE_NAMES[point['system']]} "
                    f"{point['algorithm']} on {labels['dataset']}: {point['io_threads']} threads, "
                    f"cache {point['cache_fraction']}")
                row = {**labels, **_baseline(point, graph, work, prepare_in, settings)}
                say(f"    {row['status']}: " + (f"{row['runtime_s']:.3f} s" if row["status"] == "ran"
                                                 else row["reason"]))
            opened.refresh()  # the case's files changed through the backing folder
            shutil.rmtree(prepare_in, ignore_errors=True)
            kept_runs.keep(key, {"rows": [row]})


def _baseline(point: dict, graph: Path, work: Path, prepare_in: Path, settings: dict) -> dict:
    budget = max(1, int(point["cache_fraction"] * graph.stat().st_size))
    limit = settings.get("timeout_s_by_system", {}).get(point["system"], settings["timeout_s"])
    row = {"experiment": "baseline", "system": plan.BASELINE_NAMES[point["system"]], "algorithm": point["algorithm"],
           "io_threads": point["io_threads"], "cache_fraction": point["cache_fraction"], "budget_bytes": budget,
           "time_limit_s": limit}
    try:
        options = point["options"]
        ran = case.run(point["system"], graph, work, algorithm=point["algorithm"], root=options.get("source", 0),
                       iterations=options.get("iterations", 10), damping=options.get("damping", 0.85),
                       budget_bytes=budget, threads=point["io_threads"],
                       timeout_s=limit, memory_limit=budget + (settings["allowance_mib"] << 20),
                       prepare_in=prepare_in)
    except runner.CannotRun as error:
        return {**row, "status": "cannot_run", "reason": str(error)}
    except runner.BudgetExceeded as error:
        return {**row, "status": "over_budget", "reason": str(error).splitlines()[0]}
    except runner.TimedOut as error:
        return {**row, "status": "timed_out", "reason": str(error)}
    return {**row, "status": "ran", "reason": "", "runtime_s": ran["seconds"], "reported_s": ran["reported_s"],
            "preprocess_s": ran["preprocess_s"], "disk_bytes": ran["disk_bytes"],
            "memory_limit": ran["memory_limit"], "peak_bytes": ran["peak_bytes"],
            "vertices": ran["vertices"], "edges": ran["edges"], "io_threads": ran["threads"], **ran["answer"]}


def _cave_preprocessing(binary: Path, graph: Path, folder: Path) -> dict:
    """CAVE's conversion of the graph's edge list (as GraphChi gets it) into its block file, timed;
    the converted file must hold the same graph."""
    a = reference.load_cave(graph)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    edge_list = edges.write_text(a, folder / "graph.edges")
    out = folder / "graph.cave"
    start = time.perf_counter()
    engine.convert(binary, edge_list, out, format="snap", undirected=False, renumber=False)
    seconds = time.perf_counter() - start
    converted = reference.load_cave(out)
    if converted.shape != a.shape or (converted != a).nnz:
        raise case.answers.WrongAnswer(f"CAVE's conversion of {graph.name}'s edge list gave another graph")
    return {"experiment": "preprocess", "system": "CAVE", "status": "ran", "reason": "", "preprocess_s": seconds,
            "disk_bytes": out.stat().st_size, "vertices": a.shape[0], "edges": a.nnz}
