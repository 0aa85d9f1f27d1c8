"""Steps of ACE's rules (workflow/rules/ace.smk): the patched PostgreSQL (its source, its build,
the loaded databases), Chapter 4's campaign on each device (ace.campaign), the figures' CSVs
(ace.results), and the bufferpool simulator's ideal speedups (ace.ideal)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from ace import build as ace_build
from ace import campaign, ideal, plan, sim, trace
from ace.results import FIGURE_COLUMNS, RUN_COLUMNS, figure_rows, summarize
from ssdartifact import REPO_ROOT, devices, files, provenance
from ssdartifact.tidy import write_csv

from .runtime import StepFailed, config_hashes, device_facts, in_image, open_device, run_logged

# What ACE's steps write besides their outputs in docker mode: the loaded databases and the TPC-C
# trace's work (scratch/ace), and the patched PostgreSQL's build cache.
ACE_SCRATCH = campaign.TEMPLATES.parent


def fetch_postgresql_source(*, tarball: str, log: str) -> None:
    """On the host (an image build or step has no network): the source the ACE patches apply to."""
    fetched = ace_build.fetch_source()
    if fetched.resolve() != Path(tarball).resolve():
        raise StepFailed(f"fetched {fetched}, but the workflow expects {tarball}")
    Path(log).write_text(f"{fetched}: sha256 as in systems/ace/source.yaml\n", encoding="utf-8")


@in_image(writes=(ace_build.BUILD_ROOT,))
def build_ace_server(*, record: str, jobs: int, log: str) -> None:
    """The patched PostgreSQL (release build, `make -j jobs`) and a record of where it is and what
    it is built from."""
    started = provenance.now()
    with open(log, "w", encoding="utf-8") as progress:
        install = ace_build.build("release", jobs=jobs,
                                  progress=lambda message: print(message, file=progress, flush=True))
    built = json.loads((install.parent / "built.json").read_text(encoding="utf-8"))
    Path(record).parent.mkdir(parents=True, exist_ok=True)
    Path(record).write_text(json.dumps({"install": str(install.relative_to(REPO_ROOT)), **built}, indent=2) + "\n",
                            encoding="utf-8")
    provenance.write_sidecar(record, produced_by="steps.ace.build_ace_server",
                             inputs=[ace_build.SOURCE_LOCK, *ace_build.patch_series()], started=started)


def _install(server_record: str) -> Path:
    return REPO_ROOT / json.loads(Path(server_record).read_text(encoding="utf-8"))["install"]


@in_image(writes=(ACE_SCRATCH,))
def load_ace_templates(*, points: list[dict], profile_ace: dict, experiment: dict, server_record: str, record: str,
                       log: str) -> None:
    """Every database Chapter 4's campaigns run on (`points`: every device's), loaded once into a
    template cluster, off the devices. Its own job, so that loading one (PostgreSQL and pgbench
    busy on both cores for half a minute or more) is never part of a campaign's measured time."""
    started = provenance.now()
    with open(log, "w", encoding="utf-8") as progress:
        loaded = campaign.load_templates(_install(server_record), points, profile_ace, experiment["fillfactor"],
                                         lambda message: print(message, file=progress, flush=True))
    files.atomic_write_text(Path(record), json.dumps(loaded, indent=1) + "\n")
    provenance.write_sidecar(record, produced_by="steps.ace.load_ace_templates", inputs=[server_record],
                             started=started)


@in_image(writes=(ACE_SCRATCH,))
def record_tpcc_trace(*, server_record: str, warehouses: int, transactions: int, trace_out: str, log: str) -> None:
    """TPC-C's page-access trace on our PostgreSQL (ace.trace), for Chapter 6's TPC-C rows; off the
    devices, alone (a computation: its time is not measured)."""
    started = provenance.now()
    out = Path(trace_out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")  # a stopped job leaves no trace that looks complete
    with open(log, "w", encoding="utf-8") as progress:
        facts = trace.record_tpcc(_install(server_record), warehouses=warehouses, transactions=transactions,
                                  work=REPO_ROOT / "scratch" / "ace" / "tpcc-trace-run", out=partial,
                                  say=lambda message: print(message, file=progress, flush=True))
        print(f"{facts}", file=progress)
    partial.replace(out)
    provenance.write_sidecar(str(out), produced_by="steps.ace.record_tpcc_trace", inputs=[server_record],
                             started=started)


def ace_device_facts(name: str, alpha_k: list[str]) -> dict:
    """The device's k_w, which ACE's n_w defaults to, and its alpha, at 8 KiB (PostgreSQL's page)."""
    facts = device_facts(name, alpha_k, block_size=8192)
    return {"device_kind": facts["device_kind"], "device_preset": facts["device_preset"],
            "device_k_w": facts["k_w"], "device_alpha": facts["alpha"], "k_w_source": facts["source"]}


@in_image(devices=("/dev/fuse",), capabilities=("SYS_ADMIN",), writes=(ACE_SCRATCH,), kept=("raw",))
def run_ace_experiments(*, name: str, points: list[dict], profile_ace: dict, experiment: dict, server_record: str,
                        alpha_k: list[str], binary: list[str], raw: str, csv_out: str, log: str) -> None:
    """Chapter 4's runs on one device (`points`: ace.plan.device_points; `binary`: emussd's, for an
    emulated device), kept in `raw` so that an interrupted campaign resumes."""
    started = provenance.now()
    facts = ace_device_facts(name, alpha_k)
    runs = plan.runs(points, profile_ace, experiment["fillfactor"], facts["device_k_w"])

    def open_on_this_machine(device: str, needed: int):
        return open_device(device, needed, emussd_binary=binary[0] if binary and device == name else None)

    with open(log, "w", encoding="utf-8") as progress:
        rows, kept = campaign.run(device=name, facts=facts, runs=runs, install=_install(server_record),
                                  settings=experiment, raw_dir=Path(raw), open_device=open_on_this_machine,
                                  say=lambda message: print(message, file=progress, flush=True))
    write_csv(csv_out, RUN_COLUMNS, rows)
    provenance.write_sidecar(csv_out, produced_by="steps.ace.run_ace_experiments",
                             inputs=[server_record, *alpha_k, *kept],
                             configs=config_hashes("experiments/ace.yaml", "devices.yaml"),
                             device=devices.declaration(name), started=started, columns=RUN_COLUMNS)


def gather_ace_results(*, per_device: list[str], grids: dict, profile_ace: dict, experiment: dict, runs_csv: str,
                       figure_csvs: dict, log: str) -> None:
    """Every run in one CSV, and one CSV per figure with the means, speedups and deltas."""
    started = provenance.now()
    runs = pd.concat([pd.read_csv(path) for path in per_device], ignore_index=True)
    write_csv(runs_csv, RUN_COLUMNS, runs.to_dict("records"))
    provenance.write_sidecar(runs_csv, produced_by="steps.ace.gather_ace_results", inputs=per_device,
                             started=started, columns=RUN_COLUMNS)
    for figure, path in figure_csvs.items():
        rows = summarize(figure_rows(runs, experiment, figure, grids[figure], profile_ace))
        write_csv(path, FIGURE_COLUMNS, rows.to_dict("records"))
        provenance.write_sidecar(path, produced_by="steps.ace.gather_ace_results", inputs=[runs_csv],
                                 started=started, columns=FIGURE_COLUMNS)
    Path(log).write_text(f"{len(runs)} runs on {len(per_device)} devices\n", encoding="utf-8")


@in_image()
def build_ace_simulator(*, binary: str, log: str) -> None:
    built = sim.build(Path(binary).parent, targets=sim.PROGRAMS)
    Path(log).write_text(f"built {built}\n", encoding="utf-8")


@in_image()
def simulate_ideal_speedup(*, figure: str, simulator: dict, binary: str, csv_out: str, log: str) -> None:
    """Figure 4.2 or 4.14A's points from the bufferpool simulator (deterministic; `simulator`:
    configs/experiments/ace.yaml's)."""
    started = provenance.now()
    if figure == "fig_4_2":
        rows = ideal.figure_4_2(Path(binary), simulator,
                                {name: devices.model(name) for name in simulator["fig_4_2"]["presets"]})
    else:
        rows = ideal.figure_4_14a(Path(binary), simulator, devices.model(simulator["fig_4_14a"]["device"]))
    write_csv(csv_out, ideal.COLUMNS, rows)
    provenance.write_sidecar(csv_out, produced_by="steps.ace.simulate_ideal_speedup", inputs=[binary],
                             configs=config_hashes("experiments/ace.yaml", "emussd_presets.yaml", "devices.yaml"),
                             started=started, columns=ideal.COLUMNS)
    Path(log).write_text(f"{len(rows)} points\n", encoding="utf-8")


@in_image()
def trace_bufferpool_scene(*, binary: str, scene: str, csv_out: str, log: str) -> None:
    """A toy example stepped through the simulator: Figures 4.4 and 4.6's pools (ace-sim-scene),
    Figure 4.7's history prefetcher (ace-sim-history); the tools take the same arguments."""
    Path(csv_out).parent.mkdir(parents=True, exist_ok=True)
    run_logged([binary, scene, "--out", csv_out], log)
