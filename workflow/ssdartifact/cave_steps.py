"""Steps of CAVE's rules (workflow/rules/cave.smk): build the engine, describe the graphs (Table
5.1), run Chapter 5's points on one device, and gather them per figure. See steps.py for the
contract every step follows (in_image, tidy CSV + provenance sidecar)."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from pathlib import Path

from . import REPO_ROOT, config, devices, files, provenance
from .steps import StepFailed, device_facts, in_image, write_csv

CAVE_GRAPHS = REPO_ROOT / "scratch" / "cave" / "graphs"  # generated graphs, converted once per spec
TABLE_5_1_COLUMNS = ["dataset", "graph_size", "stands_for", "source", "vertices", "edges", "stored_edges",
                     "estimated_diameter", "file_bytes", "size_mib"]


@in_image("cave")
def build_cave(binary: str, log: str) -> None:
    from cave import engine  # noqa: PLC0415

    built = engine.build(Path(binary).parent)
    Path(log).write_text(f"built {built}\n", encoding="utf-8")


CAVE_DOWNLOADS = REPO_ROOT / "scratch" / "cave" / "downloads"  # the real datasets' edge lists


def fetch_cave_dataset(name: str, record: str, log: str) -> None:
    """One real dataset of configs/datasets.yaml's downloads, fetched and checked against its
    sha256 when pinned. An unreachable source is not an error: the record says so, and Table 5.1
    leaves the dataset out with that message. A pinned sha256 that does not match is."""
    import urllib.error  # noqa: PLC0415
    import urllib.request  # noqa: PLC0415

    entry = config.load("datasets.yaml")["downloads"][name]
    target = CAVE_DOWNLOADS / Path(entry["url"]).name
    target.parent.mkdir(parents=True, exist_ok=True)
    result = {"name": name, "url": entry["url"], "format": entry["format"], "path": os.path.relpath(target, REPO_ROOT)}
    try:
        if not target.exists():
            partial = target.with_suffix(".part")
            with urllib.request.urlopen(entry["url"], timeout=60) as response, open(partial, "wb") as out:
                shutil.copyfileobj(response, out, 1 << 20)
            partial.replace(target)
    except (urllib.error.URLError, OSError) as error:
        message = (f"dataset {name}: {entry['url']} is not reachable ({error}); Table 5.1 leaves it out. "
                   f"Download it by hand to {result['path']} and rerun to include it.")
        print(message, file=sys.stderr)
        result.update(status="unreachable", message=message)
    else:
        digest = files.sha256_file(target)
        if entry["sha256"] and digest != entry["sha256"]:
            raise StepFailed(f"dataset {name}: {target} has sha256 {digest}, but configs/datasets.yaml pins "
                             f"{entry['sha256']}: refusing to use it (delete the file to download it again)")
        result.update(status="fetched", sha256=digest, pinned=bool(entry["sha256"]),
                      message="" if entry["sha256"] else f"dataset {name}: sha256 {digest}, not pinned in "
                                                         "configs/datasets.yaml yet: pin it there")
    files.atomic_write_text(record, json.dumps(result, indent=1) + "\n")
    Path(log).write_text((result["message"] or f"dataset {name}: {result['status']}") + "\n", encoding="utf-8")


@in_image("cave")
def describe_cave_datasets(binary: str, graphs: list[str], size: str, downloads: list[str], csv_out: str,
                           log: str) -> None:
    """Table 5.1: the generated graphs (vertices, edges, a double-sweep lower bound of the
    diameter, the block file's size; deterministic, the graphs come from seeds) and the real
    datasets this profile fetched (`downloads`: their fetch records)."""
    from cave import experiment, plan  # noqa: PLC0415

    started = provenance.now()
    datasets = config.load("datasets.yaml")
    specs = [plan.graph_spec(datasets, name, size) for name in graphs]
    rows = experiment.dataset_table({"datasets": specs, "graph_dir": CAVE_GRAPHS}, Path(binary))
    for row, name in zip(rows, graphs):
        row.update(graph_size=size, stands_for=" ".join(datasets["generated"][name]["stands_for"]),
                   source=f"generated: {datasets['generated'][name]['generator']}, seed "
                          f"{datasets['generated'][name]['seed']}", dataset=name)
    messages = []
    for path in downloads:
        fetched = json.loads(Path(path).read_text(encoding="utf-8"))
        if fetched["status"] != "fetched":
            messages.append(fetched["message"])
            continue
        edges = _gunzipped(REPO_ROOT / fetched["path"])
        spec = {"name": fetched["name"], "edge_list": str(edges), "format": fetched["format"]}
        row = experiment.dataset_table({"datasets": [spec], "graph_dir": CAVE_GRAPHS}, Path(binary))[0]
        rows.append({**row, "graph_size": "real", "stands_for": fetched["name"], "source": fetched["url"]})
    for row in rows:
        del row["convert_s"]  # a time: the table is deterministic without it
    write_csv(csv_out, TABLE_5_1_COLUMNS, rows)
    provenance.write_sidecar(csv_out, produced_by="ssdartifact.cave_steps.describe_cave_datasets",
                             inputs=[binary, *downloads],
                             configs={"configs/datasets.yaml": config.config_hash("datasets.yaml")},
                             started=started, columns=TABLE_5_1_COLUMNS)
    Path(log).write_text("\n".join([f"{len(rows)} graphs", *messages]) + "\n", encoding="utf-8")


def _gunzipped(path: Path) -> Path:
    """The edge list beside its .gz, decompressed once."""
    import gzip  # noqa: PLC0415

    text = path.with_suffix("")
    if not text.exists():
        partial = text.with_suffix(".part")
        with gzip.open(path, "rb") as source, open(partial, "wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
        partial.replace(text)
    return text


@in_image("cave", devices=("/dev/fuse",), capabilities=("SYS_ADMIN",))
def run_cave_experiments(name: str, points: list[dict], alpha_k: list[str], binary: str, emussd: list[str],
                         runs_out: str, timeline_out: str, log: str) -> None:
    """Chapter 5's points on one device (cave.plan.device_points): each graph is copied onto the
    device outside the timed part (through an emulated SSD's backing store), then every run reads
    it with O_DIRECT. Timelines (Figure 5.9B) are sampled every 100 ms, beside fio's random-read
    bandwidth at the same concurrency on the same device."""
    from cave import engine, experiment, plan, reference  # noqa: PLC0415
    from cave.results import RUN_COLUMNS, TIMELINE_COLUMNS  # noqa: PLC0415

    started = provenance.now()
    cave_config = config.load("experiments/cave.yaml")
    facts = device_facts(name, alpha_k, block_size=4096)
    device = {"device_kind": facts["device_kind"], "device_k_r": facts["k_r"], "k_r_source": facts["source"]}
    binary_path = Path(binary)
    graphs = {}
    for point in points:
        graphs.setdefault(point["spec"]["name"], experiment.prepare_graph(binary_path, point["spec"], CAVE_GRAPHS)[0])
    needed = 2 * sum(path.stat().st_size for path in graphs.values()) + (64 << 20)
    rows, samples, references = [], [], set()
    with open(log, "w", encoding="utf-8") as progress, \
            devices.opened(name, needed, emussd_binary=Path(emussd[0]) if emussd else None) as opened:
        def say(message):
            print(message, file=progress, flush=True)

        placed = {graph: experiment.place_on_device(path, opened.prepare_dir).name for graph, path in graphs.items()}
        for index, point in enumerate(points):
            point = plan.resolve(point, facts["k_r"])
            graph = opened.io_dir / placed[point["spec"]["name"]]
            labels = {"device": name, "dataset": point["spec"]["name"], "graph": point["graph"],
                      "graph_size": point["spec"]["name"].removeprefix(f"{point['graph']}-"), **device}
            say(f"[{index + 1}/{len(points)}] {point['algorithm']} {point['variant']} on {labels['dataset']}: "
                f"{point['io_threads']} concurrent I/Os, cache {point['cache_fraction']}")
            options = {"graph": graph, "algorithm": point["algorithm"], "variant": point["variant"],
                       "io_threads": point["io_threads"], "io_engine": point["io_engine"], **point["options"],
                       **_cache(point, graphs[labels["dataset"]].stat().st_size)}
            if point["kind"] == "timeline":
                samples += _timeline(binary_path, cave_config, options, point, labels, opened)
            else:
                run = engine.run(binary_path, **options)
                rows.append({**{c: run.get(c) for c in RUN_COLUMNS}, **labels, "experiment": "run",
                             "system": experiment.SYSTEM_NAMES[point["variant"]], "repetition": point["repetition"],
                             "cache_fraction": point["cache_fraction"]})
                say(f"    {run['runtime_s']:.3f} s, {run['block_reads']} reads, lock wait {run['lock_wait_pct']:.2f} %")
            ref_key = (labels["dataset"], point["algorithm"], point["repetition"])
            if point["algorithm"] in ("bfs", "wcc", "pagerank") and point["kind"] == "run" and ref_key not in references:
                references.add(ref_key)
                measured = reference.run_reference(graphs[labels["dataset"]], point["algorithm"],
                                                   **{k: v for k, v in point["options"].items()
                                                      if k in ("source", "iterations", "damping")})
                rows.append({**{c: measured.get(c) for c in RUN_COLUMNS}, **labels, "experiment": "run",
                             "system": experiment.REFERENCE_SYSTEM, "algorithm": point["algorithm"],
                             "repetition": point["repetition"]})
    write_csv(runs_out, RUN_COLUMNS, rows)
    write_csv(timeline_out, TIMELINE_COLUMNS, samples)
    for path, columns in ((runs_out, RUN_COLUMNS), (timeline_out, TIMELINE_COLUMNS)):
        provenance.write_sidecar(path, produced_by="ssdartifact.cave_steps.run_cave_experiments", inputs=[binary, *alpha_k],
                                 configs={f"configs/{c}": config.config_hash(c)
                                          for c in ("experiments/cave.yaml", "datasets.yaml", "devices.yaml")},
                                 device=devices.declaration(name), started=started, columns=columns)


def _cache(point: dict, file_bytes: int) -> dict:
    """The cache option of a run: its share of the file, or as many blocks as that share but at
    least the point's floor (cave.plan: a concurrency sweep's largest number of threads)."""
    if "cache_floor_blocks" not in point:
        return {"cache_fraction": point["cache_fraction"]}
    return {"cache_blocks": max(math.ceil(point["cache_fraction"] * file_bytes / 4096), point["cache_floor_blocks"])}


def _timeline(binary: Path, cave_config: dict, options: dict, point: dict, labels: dict, opened) -> list[dict]:
    """One sampled run, and fio's random-read bandwidth and CPU at its concurrency on the same device."""
    from cave import engine, experiment  # noqa: PLC0415

    sampled = Path(opened.prepare_dir).parent / f"timeline-{os.getpid()}.csv"
    try:
        engine.run(binary, **options, timeline_out=sampled, timeline_ms=100)
        samples = engine.read_timeline(sampled)
    finally:
        sampled.unlink(missing_ok=True)
    fio = experiment.fio_randread(options["graph"], point["io_threads"], runtime_s=cave_config["fio_reference"]["seconds"])
    return [{**sample, **labels, "experiment": "timeline", "algorithm": point["algorithm"],
             "variant": point["variant"], "io_threads": point["io_threads"], "cache_fraction": point["cache_fraction"],
             "fio_read_mib_s": fio["read_mib_s"], "fio_cpu_pct": fio["cpu_pct"],
             "bandwidth_util_pct": 100.0 * sample["read_mib_s"] / fio["read_mib_s"]}
            for sample in samples]


def gather_cave_results(per_device: list[str], timelines: list[str], grids: dict, runs_csv: str,
                        figure_csvs: dict, log: str) -> None:
    """Every run in one CSV, and one CSV per figure: the means over repetitions, with the speedup
    over one concurrent I/O (Figures 5.5, 5.8, 5.13) or per cache share (5.6, 5.10, 5.12); the
    timeline of Figure 5.9B as sampled."""
    import pandas as pd  # noqa: PLC0415
    from cave import plan  # noqa: PLC0415
    from cave.results import FIGURE_COLUMNS, RUN_COLUMNS, TIMELINE_COLUMNS, summarize  # noqa: PLC0415

    started = provenance.now()
    frames = [pd.read_csv(path) for path in per_device]
    runs = pd.concat([f for f in frames if not f.empty], ignore_index=True) if any(not f.empty for f in frames) \
        else pd.DataFrame(columns=RUN_COLUMNS)
    write_csv(runs_csv, RUN_COLUMNS, runs.to_dict("records"))
    provenance.write_sidecar(runs_csv, produced_by="ssdartifact.cave_steps.gather_cave_results", inputs=per_device,
                             started=started, columns=RUN_COLUMNS)
    samples = pd.concat([pd.read_csv(path) for path in timelines], ignore_index=True)
    for name, path in figure_csvs.items():
        panels = plan.FIGURE_CSVS[name]
        if panels[0] in plan.TIMELINE_FIGURES:
            grid = grids[panels[0]]
            rows = samples[samples["device"].isin(grid["devices"])]
            write_csv(path, TIMELINE_COLUMNS, rows.to_dict("records"))
            columns, inputs = TIMELINE_COLUMNS, timelines
        else:
            selected = [plan.figure_rows(runs, panel, grids[panel]) for panel in panels if panel in grids]
            letters = {panel: panel.removeprefix(name) for panel in panels}
            rows = summarize(pd.concat(selected, ignore_index=True), letters)
            write_csv(path, FIGURE_COLUMNS, rows.to_dict("records"))
            columns, inputs = FIGURE_COLUMNS, [runs_csv]
        provenance.write_sidecar(path, produced_by="ssdartifact.cave_steps.gather_cave_results", inputs=inputs,
                                 started=started, columns=columns)
    if not len(runs) and not len(samples):
        raise StepFailed("no CAVE run produced a row: see results/logs/run_cave_experiments/")
    Path(log).write_text(f"{len(runs)} runs and {len(samples)} timeline samples on {len(per_device)} devices\n",
                         encoding="utf-8")
