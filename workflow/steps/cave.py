"""Steps of CAVE's rules (workflow/rules/cave.smk): build the engine and the baselines, fetch and
describe the graphs (Table 5.1, cave.datasets), run Chapter 5's points on one device (cave.campaign)
and the baselines' (cave.baselines.campaign), and gather them per figure (cave.plan, cave.results)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd
from cave import campaign, datasets, engine, plan
from cave.baselines import build as baseline_build
from cave.baselines import campaign as baseline_campaign
from cave.results import RUN_COLUMNS, TIMELINE_COLUMNS, figure_table
from ssdartifact import config, devices, files, provenance, sources
from ssdartifact.tidy import write_csv

from .runtime import StepFailed, config_hashes, device_facts, in_image, open_device, run_logged

# What CAVE's steps write besides their outputs in docker mode: the graphs (scratch/cave) and the
# baselines' builds.
CAVE_SCRATCH = datasets.GRAPHS.parent
BASELINE_BUILDS = baseline_build.BUILD_ROOT


@in_image()
def build_cave(*, binary: str, log: str) -> None:
    built = engine.build(Path(binary).parent, targets=engine.PROGRAMS)
    Path(log).write_text(f"built {built}\n", encoding="utf-8")


@in_image()
def trace_cave_toy_graph(*, binary: str, scene: str, csv_out: str, log: str) -> None:
    """The engine's traversals and cache pool on Figures 5.2-5.4's toy graph (cave-trace); its
    graphs are written beside the output (O_DIRECT needs a real file system) and removed."""
    out = Path(csv_out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".cave-trace-") as work:
        run_logged([binary, scene, "--workdir", work, "--out", csv_out], log)


def fetch_cave_dataset(*, name: str, record: str, log: str) -> None:
    """One real dataset of configs/datasets.yaml's downloads, fetched on the host (a step in an
    image has no network); an unreachable one is recorded as such, not an error."""
    try:
        fetched = datasets.fetch(name)
    except datasets.DatasetError as error:
        raise StepFailed(str(error)) from None
    files.atomic_write_text(record, json.dumps(fetched, indent=1) + "\n")
    Path(log).write_text((fetched["message"] or f"dataset {name}: {fetched['status']}") + "\n", encoding="utf-8")


@in_image(writes=(CAVE_SCRATCH,))
def describe_cave_datasets(*, binary: str, graphs: list[str], size: str, downloads: list[str], csv_out: str,
                           log: str) -> None:
    """Table 5.1 over the generated `graphs` and the real datasets this profile fetched
    (`downloads`: their fetch records)."""
    started = provenance.now()
    fetched = [json.loads(Path(path).read_text(encoding="utf-8")) for path in downloads]
    rows, messages = datasets.table_5_1(Path(binary), graphs, size, fetched)
    write_csv(csv_out, datasets.TABLE_5_1_COLUMNS, rows)
    provenance.write_sidecar(csv_out, produced_by="steps.cave.describe_cave_datasets",
                             inputs=[binary, *downloads], configs=config_hashes("datasets.yaml"),
                             started=started, columns=datasets.TABLE_5_1_COLUMNS)
    Path(log).write_text("\n".join([f"{len(rows)} graphs", *messages]) + "\n", encoding="utf-8")


@in_image(devices=("/dev/fuse",), capabilities=("SYS_ADMIN",), writes=(CAVE_SCRATCH,), kept=("raw",))
def run_cave_experiments(*, name: str, points: list[dict], fio_seconds: float, alpha_k: list[str], binary: str,
                         emussd: list[str], raw: str, runs_out: str, timeline_out: str, log: str) -> None:
    """Chapter 5's points on one device (`emussd`: emussd's binary, for an emulated device; `fio_seconds`:
    configs/experiments/cave.yaml's fio_reference), each kept in `raw` as it finishes so that an
    interrupted campaign resumes."""
    started = provenance.now()
    facts = device_facts(name, alpha_k, block_size=4096)
    with open(log, "w", encoding="utf-8") as progress:
        rows, samples, kept = campaign.run(
            device=name, points=points, k_r=facts["k_r"], binary=Path(binary),
            device_labels={"device_kind": facts["device_kind"], "device_k_r": facts["k_r"],
                           "k_r_source": facts["source"]},
            fio_seconds=fio_seconds, raw_dir=Path(raw),
            open_device=lambda needed: open_device(name, needed, emussd_binary=emussd[0] if emussd else None),
            say=lambda message: print(message, file=progress, flush=True))
    write_csv(runs_out, RUN_COLUMNS, rows)
    write_csv(timeline_out, TIMELINE_COLUMNS, samples)
    for path, columns in ((runs_out, RUN_COLUMNS), (timeline_out, TIMELINE_COLUMNS)):
        provenance.write_sidecar(path, produced_by="steps.cave.run_cave_experiments", inputs=[binary, *alpha_k, *kept],
                                 configs=config_hashes("experiments/cave.yaml", "datasets.yaml", "devices.yaml"),
                                 device=devices.declaration(name), started=started, columns=columns)


@in_image(devices=("/dev/fuse",), capabilities=("SYS_ADMIN",), writes=(CAVE_SCRATCH, BASELINE_BUILDS),
          kept=("raw",))
def run_cave_baselines(*, name: str, points: list[dict], alpha_k: list[str], binary: str, emussd: list[str],
                       built: list[str], settings: dict, raw: str, runs_out: str, log: str) -> None:
    """The baselines' points on one device (GraphChi, GridGraph: cave.baselines.campaign), each kept
    in `raw` as it finishes; `built`: the baselines' build records; `settings`: the experiment's
    `baselines` with the profile's time limit."""
    started = provenance.now()
    facts = device_facts(name, alpha_k, block_size=4096)
    with open(log, "w", encoding="utf-8") as progress:
        rows, kept = baseline_campaign.run(
            device=name, points=points, k_r=facts["k_r"], binary=Path(binary),
            device_labels={"device_kind": facts["device_kind"], "device_k_r": facts["k_r"],
                           "k_r_source": facts["source"]},
            settings=settings, raw_dir=Path(raw),
            open_device=lambda needed: open_device(name, needed, emussd_binary=emussd[0] if emussd else None),
            say=lambda message: print(message, file=progress, flush=True))
    write_csv(runs_out, RUN_COLUMNS, rows)
    provenance.write_sidecar(runs_out, produced_by="steps.cave.run_cave_baselines",
                             inputs=[binary, *built, *alpha_k, *kept],
                             configs=config_hashes("experiments/cave.yaml", "datasets.yaml", "devices.yaml",
                                                   "sources.yaml"),
                             device=devices.declaration(name), started=started, columns=RUN_COLUMNS)


# The baselines the workflow's main process found unreachable, for each job's process: Snakemake
# loads the workflow again in each job, which must neither ask the network again nor answer otherwise.
UNREACHABLE_ENV = "SSD_ARTIFACT_UNREACHABLE_BASELINES"


def unreachable_baselines_of_this_run(profile_cave: dict, main_process: bool) -> dict[str, str]:
    """`unreachable_baselines`, found by the workflow's main process and handed to its jobs."""
    if not main_process and UNREACHABLE_ENV in os.environ:
        return json.loads(os.environ[UNREACHABLE_ENV])
    unreachable = unreachable_baselines(profile_cave)
    os.environ[UNREACHABLE_ENV] = json.dumps(unreachable)
    return unreachable


def unreachable_baselines(profile_cave: dict) -> dict[str, str]:
    """The baselines the profile's `cave` runs that cannot be built here, each with where its
    pinned source was looked for: not built already, and its tarball neither downloaded, nor in the
    local folder, nor at its address (no network, say). Checked before a run starts."""
    unreachable = {}
    for system in plan.baseline_systems(config.load("experiments/cave.yaml"), profile_cave):
        if (baseline_build.build_dir(system) / "built.json").exists():
            continue
        found, why = sources.where_from(system, baseline_build.DOWNLOADS)
        if found is None:
            unreachable[system] = why
    return unreachable


def without_baselines(profile_cave: dict, unreachable: list[str], profile: str) -> tuple[dict, dict[str, dict]]:
    """The profile's `cave` without the figures that run a baseline of `unreachable`, and the CSVs
    those figures would have made, each with why it is not run and the command that runs it (the
    claims report and the document say both). A figure runs with all its baselines or not at all:
    without them it is not the thesis's comparison."""
    if not unreachable:
        return profile_cave, {}
    grids = plan.figure_grids(config.load("experiments/cave.yaml"), profile_cave)
    dropped = {figure for figure, grid in grids.items() if set(grid.get("baselines", [])) & set(unreachable)}
    names = ", ".join(plan.BASELINE_NAMES[system] for system in unreachable)
    reason = {"why": f"pinned sources unreachable ({names})", "fix": sources.how_to_supply(profile)}
    # a CSV of two panels is not made when neither is run
    not_run = {f"results/cave/{name}.csv": reason for name, panels in plan.FIGURE_CSVS.items()
               if dropped & set(panels) and not set(panels) & set(grids) - dropped}
    kept = {figure: placed for figure, placed in profile_cave["figures"].items() if figure not in dropped}
    return {**profile_cave, "figures": kept}, not_run


def build_cave_baseline(*, system: str, record: str, log: str) -> None:
    """One baseline built from its pinned source with its patch series (cave.baselines.build). The
    source is fetched here, on the host, first: in docker mode the build's container has no network
    (and sees no SSD_SOURCES folder), and finds it in the build's downloads folder."""
    try:
        sources.fetch(system, baseline_build.DOWNLOADS, say=lambda message: print(message, file=sys.stderr, flush=True))
    except sources.SourceError as error:
        raise StepFailed(str(error)) from None
    folder = baseline_build.system_root(system)
    folder.mkdir(parents=True, exist_ok=True)  # a container is given only folders that exist
    build_cave_baseline_from_its_download(system=system, record=record, log=log, folder=str(folder))


# `folder`: the system's own builds, the one folder its container writes. With all the builds
# writable, two builds side by side (a root host's steps run as nobody) each gave back to root,
# when it ended, the files of the other's build still running; that build's linker could then not
# make its program executable, and the run failed with EACCES (CI, 2026-11-28).
@in_image(kept=("folder",))
def build_cave_baseline_from_its_download(*, system: str, record: str, log: str, folder: str) -> None:
    try:
        baseline_build.build(system, progress=lambda message: print(message, file=sys.stderr, flush=True))
    except (baseline_build.BaselineBuildError, sources.SourceError) as error:
        raise StepFailed(str(error)) from None
    files.atomic_write_text(record, json.dumps(baseline_build.built_record(system), indent=1) + "\n")
    Path(log).write_text(f"built {baseline_build.build_dir(system)}\n", encoding="utf-8")


def gather_cave_results(*, per_device: list[str], timelines: list[str], grids: dict, runs_csv: str,
                        figure_csvs: dict, log: str) -> None:
    """Every run (CAVE's and the baselines') in one CSV, and one CSV per figure (cave.results.figure_table):
    the means over repetitions, with the speedup over one concurrent I/O (Figures 5.5, 5.8, 5.13) or
    per cache share (5.6, 5.7, 5.10, 5.12); CAVE's speedup over each baseline (5.1B, 5.9A, 5.11);
    each system's preprocessing (Table 5.2); the timeline of Figure 5.9B as sampled."""
    started = provenance.now()
    frames = [pd.read_csv(path) for path in per_device]
    runs = pd.concat([f for f in frames if not f.empty], ignore_index=True) if any(not f.empty for f in frames) \
        else pd.DataFrame(columns=RUN_COLUMNS)
    write_csv(runs_csv, RUN_COLUMNS, runs.to_dict("records"))
    provenance.write_sidecar(runs_csv, produced_by="steps.cave.gather_cave_results", inputs=per_device,
                             started=started, columns=RUN_COLUMNS)
    samples = pd.concat([pd.read_csv(path) for path in timelines], ignore_index=True)
    for name, path in figure_csvs.items():
        rows, columns = figure_table(name, runs, samples, grids)
        write_csv(path, columns, rows.to_dict("records"))
        provenance.write_sidecar(path, produced_by="steps.cave.gather_cave_results",
                                 inputs=timelines if columns is TIMELINE_COLUMNS else [runs_csv],
                                 started=started, columns=columns)
    if not len(runs) and not len(samples):
        raise StepFailed("no CAVE run produced a row: see results/logs/run_cave_experiments/")
    Path(log).write_text(f"{len(runs)} runs and {len(samples)} timeline samples on {len(per_device)} devices\n",
                         encoding="utf-8")
