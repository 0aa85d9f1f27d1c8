"""What each workflow rule does, one function per rule, so the rules stay
declarations (inputs, outputs, logs) and the actions are plain, testable Python.

Where a step runs is decided here, once: each step names its system's image
(`@in_image`), and with `runtime: docker` the call is made again inside that
image (`python -m ssdartifact.steps NAME ARGS-AS-JSON`), with only the repository
and the declared devices mounted. Snakemake has no Docker runtime of its own.

Commands run through `run_logged`, the one place that decides how a tool is
started: with the environment that makes generated PDFs reproducible, from the
repository root, its output in the rule's log, and on failure an error that
quotes the end of that log.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from . import REPO_ROOT, claims, config, devices, files, paper, provenance
from .tidy import write_csv

# Generated PDFs (R figures, LaTeX) carry this fixed date, so their bytes depend only on their inputs.
REPRODUCIBLE_ENV = {"SOURCE_DATE_EPOCH": "1735689600", "FORCE_SOURCE_DATE": "1"}


class StepFailed(RuntimeError):
    """A tool exited non-zero; the message quotes the end of its log."""


# How this run executes its steps; set once by the workflow (configure) from the profile.
RUNTIME = {"kind": "native"}
IN_CONTAINER = provenance.RUNTIME_ENV  # set inside a step's container: its image tag and id
STEPS = {}


def configure(runtime: str) -> None:
    RUNTIME["kind"] = runtime


def in_image(image: str, devices: tuple[str, ...] = (), capabilities: tuple[str, ...] = (),
             block_devices: bool = False):
    """Run the step in `image` when the runtime is docker (devices and capabilities it needs, e.g. FUSE).

    With block_devices, the declared raw block devices are passed in too, after their safety
    checks ran here on the host: inside the container the host's mounts are not visible."""
    def wrap(function):
        STEPS[function.__name__] = function

        @functools.wraps(function)
        def step(*args, **kwargs):
            if RUNTIME["kind"] == "native" or os.environ.get(IN_CONTAINER):
                return function(*args, **kwargs)
            passed = (*devices, *(d["path"] for d in declared_block_devices())) if block_devices else devices
            return _run_in_container(image, function.__name__, args, kwargs, passed, capabilities)
        return step
    return wrap


def declared_block_devices() -> list[dict]:
    # in_image's parameter `devices` hides the module of that name inside its closure
    return devices.declared_block_devices()


def _run_in_container(image: str, name: str, args: tuple, kwargs: dict, devices, capabilities) -> None:
    from . import containers  # noqa: PLC0415 (only the docker runtime needs it)

    tag = containers.ensure_image(image)
    identity = f"{tag}@{containers.image_id(tag)}"
    call = json.dumps({"args": [_plain(a) for a in args], "kwargs": {k: _plain(v) for k, v in kwargs.items()}})
    command = containers.docker_run_command(
        tag, ["python", "-m", "ssdartifact.steps", name, call], repo_root=REPO_ROOT,
        bind_paths=devices_bind_paths(), devices=devices, cap_add=capabilities, env={IN_CONTAINER: identity})
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise StepFailed(f"step {name} in image {tag} exited with {result.returncode}:\n"
                         f"{(result.stdout + result.stderr)[-3000:]}")


def _plain(value):
    """Snakemake's file lists are list subclasses with extra state: pass plain lists and strings
    (a list of records, such as ACE's run points, stays a list of records)."""
    return [v if isinstance(v, dict) else str(v) for v in value] if isinstance(value, list) else value


def devices_bind_paths() -> list[Path]:
    """Declared file-device directories outside the repository (the repository itself is always
    mounted). Each is created first: `docker run -v` must not create it, as root, itself."""
    paths = []
    for device in config.load("devices.yaml")["devices"]:
        if device["kind"] == "file":
            path = (REPO_ROOT / device["path"]).resolve()
            if REPO_ROOT not in path.parents:
                path.mkdir(parents=True, exist_ok=True)
                paths.append(path)
    return paths


def run_logged(command: list[str], log: str) -> None:
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as handle:
        result = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, cwd=REPO_ROOT,
                                env={**os.environ, **REPRODUCIBLE_ENV})
    if result.returncode != 0:
        tail = "\n".join(Path(log).read_text(encoding="utf-8", errors="replace").splitlines()[-30:])
        raise StepFailed(f"{' '.join(command)} exited with {result.returncode}; end of {log}:\n{tail}")


@in_image("pio")
def pio_model_curve(curve: str, csv: str, log: str) -> None:
    run_logged([sys.executable, "-m", "pio.curves", curve, csv], log)


@in_image("report")
def draw_figure(script: str, theme: str, data: list[str], pdf: str, log: str) -> None:
    started = provenance.now()
    run_logged(["Rscript", script, *data, pdf], log)
    provenance.write_sidecar(pdf, produced_by=script, inputs=[script, theme, *data], started=started)


@in_image("report")
def typeset_table(script: str, data: list[str], tex: str, log: str) -> None:
    started = provenance.now()
    run_logged([sys.executable, script, *data, tex], log)
    provenance.write_sidecar(tex, produced_by=script, inputs=[script, *data], started=started)


@in_image("report")
def check_claims(data: list[str], profile: str, csv: str, markdown: str, html: str, log: str) -> None:
    """Check every claim on the CSVs this profile produced (`data`); the others are 'not run'."""
    rows = claims.evaluate_all(config.load("claims.yaml")["claims"], available=set(data), profile=profile)
    claims.write_report(rows, Path(csv), Path(markdown), Path(html))
    Path(log).write_text(f"claims: {claims.summary(rows)}\n", encoding="utf-8")


@in_image("report")
def write_document_sources(claims_csv: str, out_dir: str, built: list[str], log: str) -> None:
    written = paper.write_document(config.load("inventory.yaml"), Path(claims_csv), Path(out_dir), set(built))
    Path(log).write_text("".join(f"wrote {path}\n" for path in written), encoding="utf-8")


@in_image("report")
def build_document(main: str, pdf: str, log: str) -> None:
    out_dir = str(Path(pdf).parent)
    run_logged(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", f"-outdir={out_dir}", main], log)
    built = Path(out_dir) / (Path(main).stem + ".pdf")
    if built != Path(pdf):
        built.replace(pdf)


def build_image(name: str, identity: str, log: str) -> None:
    from . import containers  # noqa: PLC0415

    tag = containers.ensure_image(name)
    Path(identity).write_text(f"{tag}@{containers.image_id(tag)}\n", encoding="utf-8")
    Path(log).write_text(f"image {name}: {tag}\n", encoding="utf-8")


def list_outputs(paths: list[str], listing: str) -> None:
    Path(listing).write_text("".join(f"{path}\n" for path in paths), encoding="utf-8")


@in_image("emussd")
def build_emussd(binary: str, log: str) -> None:
    from emussd.harness import build  # noqa: PLC0415 (only this rule needs CMake)

    built = build(Path(binary).parent)
    Path(log).write_text(f"built {built}\n", encoding="utf-8")


def fetch_postgresql_source(tarball: str, log: str) -> None:
    """On the host (an image build or step has no network): the source the ACE patches apply to."""
    from ace.build import fetch_source  # noqa: PLC0415

    fetched = fetch_source()
    if fetched.resolve() != Path(tarball).resolve():
        raise StepFailed(f"fetched {fetched}, but the workflow expects {tarball}")
    Path(log).write_text(f"{fetched}: sha256 as in systems/ace/source.yaml\n", encoding="utf-8")


@in_image("ace")
def build_ace_server(record: str, jobs: int, log: str) -> None:
    """The patched PostgreSQL (release build, `make -j jobs`) and a record of where it is and what
    it is built from."""
    from ace import build as ace_build  # noqa: PLC0415

    started = provenance.now()
    with open(log, "w", encoding="utf-8") as progress:
        install = ace_build.build("release", jobs=jobs,
                                  progress=lambda message: print(message, file=progress, flush=True))
    built = json.loads((install.parent / "built.json").read_text(encoding="utf-8"))
    Path(record).parent.mkdir(parents=True, exist_ok=True)
    Path(record).write_text(json.dumps({"install": str(install.relative_to(REPO_ROOT)), **built}, indent=2) + "\n",
                            encoding="utf-8")
    provenance.write_sidecar(record, produced_by="ssdartifact.steps.build_ace_server",
                             inputs=[ace_build.SOURCE_LOCK, *ace_build.patch_series()], started=started)


ACE_TEMPLATES = REPO_ROOT / "scratch" / "ace" / "templates"  # loaded databases, copied onto a device per run


@in_image("ace")
def load_ace_templates(points: list[dict], profile_ace: dict, server_record: str, record: str, log: str) -> None:
    """Every database Chapter 4's campaigns run on (`points`: every device's), loaded once into a
    template cluster, off the devices. Its own job, so that no campaign loads one (PostgreSQL and
    pgbench busy on both cores for half a minute or more) beside a measurement on another device
    when measurements run side by side."""
    from ace import experiment, plan  # noqa: PLC0415

    started = provenance.now()
    install = REPO_ROOT / json.loads(Path(server_record).read_text(encoding="utf-8"))["install"]
    fillfactor = config.load("experiments/ace.yaml")["fillfactor"]
    with open(log, "w", encoding="utf-8") as progress:
        loaded = [experiment.template_facts(experiment.ensure_template(
                      install, database, ACE_TEMPLATES, lambda message: print(message, file=progress, flush=True)))
                  for database in plan.databases(points, profile_ace, fillfactor)]
    files.atomic_write_text(Path(record), json.dumps(loaded, indent=1) + "\n")
    provenance.write_sidecar(record, produced_by="ssdartifact.steps.load_ace_templates", inputs=[server_record],
                             started=started)


def device_facts(name: str, alpha_k: list[str], block_size: int) -> dict:
    """A device's alpha, k_r and k_w at one block size: measured when this profile characterizes
    the device (alpha_k: its alpha_k.csv), else declared (an emulated device)."""
    from pio.characterize import measured_device  # noqa: PLC0415

    device = devices.declaration(name)
    facts = {"device_kind": device["kind"], "device_preset": device.get("preset")}
    if alpha_k:
        measured = measured_device(alpha_k[0], name, block_size=block_size)
        return {**facts, **{k: measured[k] for k in ("alpha", "k_r", "k_w")}, "source": "measured"}
    if device["kind"] != "emulated":
        raise StepFailed(f"device {name!r}: its alpha and k are measured by the characterization, which this "
                         "profile does not run on it; add the device to the profile's characterize.devices")
    return {**facts, **{k: device[k] for k in ("alpha", "k_r", "k_w")}, "source": "declared"}


def ace_device_facts(name: str, alpha_k: list[str]) -> dict:
    """The device's k_w, which ACE's n_w defaults to, and its alpha, at 8 KiB (PostgreSQL's page)."""
    facts = device_facts(name, alpha_k, block_size=8192)
    return {"device_kind": facts["device_kind"], "device_preset": facts["device_preset"],
            "device_k_w": facts["k_w"], "device_alpha": facts["alpha"], "k_w_source": facts["source"]}


def _device_written_pages(opened: devices.OpenDevice):
    """How the device's written pages are read during a run: emussd's counters, else nothing."""
    if opened.declaration["kind"] == "emulated":
        from emussd.harness import STATS_NAME  # noqa: PLC0415

        stats = opened.io_dir.parent / STATS_NAME
        return (lambda: json.loads(stats.read_text(encoding="utf-8"))["ops"]["write"]["pages"]), "emussd counters"
    return (lambda: None), "not measured"


@in_image("ace", devices=("/dev/fuse",), capabilities=("SYS_ADMIN",))
def run_ace_experiments(name: str, points: list[dict], profile_ace: dict, server_record: str, alpha_k: list[str],
                        binary: list[str], raw: str, csv_out: str, log: str) -> None:
    """Chapter 4's runs on one device (`points`: ace.plan.device_points). Each finished run is
    kept in `raw` as JSON (with the server's log), so an interrupted campaign resumes."""
    from ace import experiment, plan  # noqa: PLC0415
    from ace.results import RUN_COLUMNS  # noqa: PLC0415

    started = provenance.now()
    ace_config = config.load("experiments/ace.yaml")
    install = REPO_ROOT / json.loads(Path(server_record).read_text(encoding="utf-8"))["install"]
    facts = ace_device_facts(name, alpha_k)
    runs = plan.runs(points, profile_ace, ace_config["fillfactor"], facts["device_k_w"])
    # A kept run is reused only under the same server, settings, device and driver (its code and
    # the workloads' files: a change in how a run is measured measures every run again).
    driver = [files.sha256_file(path) for path in experiment.DRIVER_SOURCES]
    context = hashlib.sha256(json.dumps([str(install), ace_config["server"], ace_config["wal_device"],
                                         devices.declaration(name), driver],
                                        sort_keys=True).encode()).hexdigest()[:10]
    raw_dir = Path(raw)
    raw_dir.mkdir(parents=True, exist_ok=True)
    kept = [raw_dir / f"{context}-{run.key()}.json" for run in runs]
    pending = [(index, run) for index, run in enumerate(runs) if not kept[index].exists()]
    with open(log, "w", encoding="utf-8") as progress:
        def say(message):
            print(message, file=progress, flush=True)

        if pending:
            # Every template first, off the devices; then both devices stay open for the whole
            # campaign, and each run rewrites the last run's cluster in place (experiment.mirror).
            templates = {run.database: experiment.ensure_template(install, run.database, ACE_TEMPLATES, say)
                         for _, run in pending}
            needed = 2 * max(experiment.template_facts(template)["bytes"] for template in templates.values())
            with devices.opened(ace_config["wal_device"], needed) as wal, \
                    devices.opened(name, needed, emussd_binary=Path(binary[0]) if binary else None) as opened:
                written_pages, source = _device_written_pages(opened)
                for index, run in pending:
                    opened.refresh()  # the last run's files are about to change behind the mount's back
                    say(f"[{index + 1}/{len(runs)}] {run.workload} {run.policy} {run.variant} n_w={run.n_w} "
                        f"pool={run.pool_fraction} repetition {run.repetition}")
                    measured = experiment.measure(
                        install, run, templates[run.database], data_dir=opened.io_dir / "data",
                        wal_dir=wal.io_dir / f"wal-{name}", placed_data_dir=opened.prepare_dir / "data",
                        settings=ace_config["server"], written_pages=written_pages, keep=kept[index].with_suffix(""))
                    row = {"device": name, **facts,
                           "database_kind": run.database.kind, "database_size": run.database.size,
                           **{k: v for k, v in run.plain().items() if k != "database"}, **measured,
                           "device_writes_source": source}
                    files.atomic_write_text(kept[index], json.dumps(row, indent=1) + "\n")
                    say(f"    runtime {row['runtime_s']:.3f} s, {row['misses']} misses, {row['logical_writes']} writes")
    rows = [{**json.loads(path.read_text(encoding="utf-8")), **facts} for path in kept]
    write_csv(csv_out, RUN_COLUMNS, rows)
    provenance.write_sidecar(csv_out, produced_by="ssdartifact.steps.run_ace_experiments",
                             inputs=[server_record, *alpha_k, *kept],
                             configs={f"configs/{c}": config.config_hash(c) for c in ("experiments/ace.yaml",
                                                                                      "devices.yaml")},
                             device=devices.declaration(name), started=started, columns=RUN_COLUMNS)


def gather_ace_results(per_device: list[str], grids: dict, profile_ace: dict, runs_csv: str, figure_csvs: dict,
                       log: str) -> None:
    """Every run in one CSV, and one CSV per figure with the means, speedups and deltas."""
    import pandas as pd  # noqa: PLC0415
    from ace.results import FIGURE_COLUMNS, RUN_COLUMNS, figure_rows, summarize  # noqa: PLC0415

    started = provenance.now()
    experiment = config.load("experiments/ace.yaml")
    runs = pd.concat([pd.read_csv(path) for path in per_device], ignore_index=True)
    write_csv(runs_csv, RUN_COLUMNS, runs.to_dict("records"))
    provenance.write_sidecar(runs_csv, produced_by="ssdartifact.steps.gather_ace_results", inputs=per_device,
                             started=started, columns=RUN_COLUMNS)
    for figure, path in figure_csvs.items():
        rows = summarize(figure_rows(runs, experiment, figure, grids[figure], profile_ace))
        write_csv(path, FIGURE_COLUMNS, rows.to_dict("records"))
        provenance.write_sidecar(path, produced_by="ssdartifact.steps.gather_ace_results", inputs=[runs_csv],
                                 started=started, columns=FIGURE_COLUMNS)
    Path(log).write_text(f"{len(runs)} runs on {len(per_device)} devices\n", encoding="utf-8")


@in_image("ace")
def build_ace_simulator(binary: str, log: str) -> None:
    from ace import sim  # noqa: PLC0415

    built = sim.build(Path(binary).parent)
    Path(log).write_text(f"built {built}\n", encoding="utf-8")


@in_image("ace")
def simulate_ideal_speedup(figure: str, binary: str, csv_out: str, log: str) -> None:
    """Figure 4.2 or 4.14A's points from the bufferpool simulator (deterministic)."""
    from ace import ideal  # noqa: PLC0415

    started = provenance.now()
    simulator = config.load("experiments/ace.yaml")["simulator"]
    if figure == "fig_4_2":
        presets = config.load("emussd_presets.yaml")["presets"]
        missing = [name for name in simulator["fig_4_2"]["presets"] if name not in presets]
        if missing:
            raise StepFailed(f"configs/experiments/ace.yaml: key simulator.fig_4_2.presets: {', '.join(missing)} "
                             f"not in configs/emussd_presets.yaml ({', '.join(presets)})")
        rows = ideal.figure_4_2(Path(binary), simulator, presets)
    else:
        rows = ideal.figure_4_14a(Path(binary), simulator)
    write_csv(csv_out, ideal.COLUMNS, rows)
    provenance.write_sidecar(csv_out, produced_by="ssdartifact.steps.simulate_ideal_speedup", inputs=[binary],
                             configs={f"configs/{c}": config.config_hash(c)
                                      for c in ("experiments/ace.yaml", "emussd_presets.yaml")},
                             started=started, columns=ideal.COLUMNS)
    Path(log).write_text(f"{len(rows)} points\n", encoding="utf-8")


DECLARED_COLUMNS = {
    "declared_read_latency_us": "the emulated device's declared service time of one page read",
    "declared_alpha": "the emulated device's declared write/read asymmetry",
    "declared_k": "declared concurrency of this operation (k_r for reads, k_w for writes)",
    "declared_iops": "declared k / service time of one request: the most the device can serve",
}


@in_image("emussd", devices=("/dev/fuse",), capabilities=("SYS_ADMIN",))
def emussd_saturation(binary: str, csv: str, device_stats: str, raw: str, fio_point: dict, log: str) -> None:
    """fio thread sweep on emussd's benchmark device; each row also carries the declared model."""
    from pio.bench import TIME_COLUMNS  # noqa: PLC0415
    from pio.fio import TIDY_COLUMNS, FioPoint  # noqa: PLC0415
    from pio.sweep import prepare_sparse_files, run_sweep  # noqa: PLC0415

    started = provenance.now()
    experiment = config.load("experiments/emussd.yaml")["saturation"]
    device = devices.declaration(experiment["device"])
    model = devices.emulated_model(device)
    points = [FioPoint(op, "random", experiment["block_size"], threads, 1, experiment["engine"],
                       fio_point["runtime_ms"], fio_point["ramp_ms"], experiment["file_size"])
              for op, key in (("read", "read_threads"), ("write", "write_threads")) for threads in experiment[key]]
    needed = max(p.threads for p in points) * experiment["file_size"]
    with open(log, "w", encoding="utf-8") as progress, \
            devices.opened(device["name"], needed, emussd_binary=Path(binary),
                           stats_out=Path(device_stats), saturating=True) as opened:
        prepare_sparse_files(points, opened.prepare_dir)
        rows = run_sweep(points, opened.io_dir, Path(raw), opened.name, progress)
    rows = devices.to_declared_time(rows, opened.time_dilation, *TIME_COLUMNS["sweeps"])
    pages = math.ceil(experiment["block_size"] / model["page_size"])
    for row in rows:
        write = row["op"] == "write"
        service_us = model["read_latency_us"] * pages * (model["alpha"] if write else 1)
        row.update(declared_read_latency_us=model["read_latency_us"], declared_alpha=model["alpha"],
                   declared_k=model["k_w"] if write else model["k_r"])
        row["declared_iops"] = row["declared_k"] * 1e6 / service_us
    columns = {**TIDY_COLUMNS, **DECLARED_COLUMNS, **devices.TIME_DILATION_COLUMN}
    write_csv(csv, columns, rows)
    raw_files = sorted(Path(raw).glob("*.json"))
    provenance.write_sidecar(csv, produced_by="ssdartifact.steps.emussd_saturation", inputs=raw_files,
                             configs={f"configs/{c}": config.config_hash(c)
                                      for c in ("experiments/emussd.yaml", "devices.yaml")},
                             device=opened.provenance(), started=started, columns=columns,
                             tools={"fio": subprocess.run(["fio", "--version"], capture_output=True,
                                                          text=True).stdout.strip()})


CHARACTERIZATION_DECLARED = {
    "kind": "the device's kind (file, block or emulated)",
    "medium": "declared storage medium (flash, optane, hdd, virtual, unknown; emulated for emussd)",
    "declared_alpha": "emulated devices: the declared write/read cost ratio (empty for real devices)",
    "declared_k_r": "emulated devices: the declared read concurrency",
    "declared_k_w": "emulated devices: the declared write concurrency",
}


def characterization_outputs(directory: str) -> dict[str, Path]:
    return {name: Path(directory) / f"{name}.csv" for name in ("sweeps", "alpha_k", "interference", "writeback")}


@in_image("pio", devices=("/dev/fuse",), capabilities=("SYS_ADMIN",), block_devices=True)
def characterize_device(name: str, binary: list[str], raw: str, fio_point: dict, profile: dict, log: str) -> None:
    """Thesis Chapter 2 on one declared device: every CSV of results/pio/devices/<name>/
    (`binary`: emussd's, for an emulated device, else empty; `profile`: the profile's `characterize`)."""
    from pio import bench, characterize, fio, sweep, writeback_app  # noqa: PLC0415

    started = provenance.now()
    out_dir = f"results/pio/devices/{name}"
    experiment = config.load("experiments/pio.yaml")
    if "random_block_sizes" in profile:
        experiment["characterization"]["random_block_sizes"] = profile["random_block_sizes"]
    max_threads = profile["max_threads"]
    device = devices.declaration(name)
    needed = bench.needed_bytes(experiment, max_threads)
    with open(log, "w", encoding="utf-8") as progress, \
            devices.opened(name, needed, emussd_binary=Path(binary[0]) if binary else None,
                           stats_out=Path(out_dir) / "device_stats.json", saturating=True) as opened:
        target = (fio.Target(block_device=opened.block_path) if opened.block_path
                  else fio.Target(directory=opened.io_dir))
        emulated = device["kind"] == "emulated"
        results = bench.run(bench.OpenedTarget(name, target, opened.prepare_dir if emulated else None,
                                               bool(device.get("precondition"))),
                            experiment, fio_point, max_threads, Path(raw), progress)
    model = devices.emulated_model(device) if emulated else {}
    declared = {"kind": device["kind"], "medium": "emulated" if emulated else device.get("medium", "unknown"),
                "declared_alpha": model.get("alpha"), "declared_k_r": model.get("k_r"), "declared_k_w": model.get("k_w")}
    for row in results.alpha_k + results.writeback:
        row.update(declared)
    tables = {"sweeps": (bench.SWEEP_COLUMNS, results.sweeps),
              "alpha_k": ({**characterize.ALPHA_K_COLUMNS, **CHARACTERIZATION_DECLARED}, results.alpha_k),
              "interference": (sweep.INTERFERENCE_COLUMNS, results.interference),
              "writeback": ({**writeback_app.COLUMNS, **CHARACTERIZATION_DECLARED}, results.writeback)}
    raw_files = sorted(Path(raw).glob("*.json"))
    for table, path in characterization_outputs(out_dir).items():
        columns, rows = tables[table]
        rows = devices.to_declared_time(rows, opened.time_dilation, *bench.TIME_COLUMNS[table])
        columns = {**columns, **devices.TIME_DILATION_COLUMN}
        write_csv(path, columns, rows)
        provenance.write_sidecar(path, produced_by="ssdartifact.steps.characterize_device", inputs=raw_files,
                                 configs={f"configs/{c}": config.config_hash(c)
                                          for c in ("experiments/pio.yaml", "devices.yaml")},
                                 device=opened.provenance(), started=started, columns=columns,
                                 tools={"fio": fio.version()})


def gather_characterization(per_device: list[str], out_dir: str, log: str) -> None:
    """One CSV per table over every characterized device (the figures and claims read these)."""
    import pandas as pd  # noqa: PLC0415

    started = provenance.now()
    for table, path in characterization_outputs(out_dir).items():
        parts = [Path(directory) / path.name for directory in per_device]
        frames = [pd.read_csv(part, keep_default_na=False, dtype=str) for part in parts]
        described = json.loads(Path(f"{parts[0]}.json").read_text(encoding="utf-8"))["columns"]
        columns = {name: described[name] for name in frames[0].columns}  # the per-device CSVs' order
        frame = pd.concat(frames)
        write_csv(path, columns, frame.to_dict("records"))
        provenance.write_sidecar(path, produced_by="ssdartifact.steps.gather_characterization", inputs=parts,
                                 started=started, columns=columns)
    Path(log).write_text(f"gathered {len(per_device)} devices into {out_dir}\n", encoding="utf-8")


RAW_VS_FS_COLUMNS = {
    "ssd": "the raw block device's name: both rows of a pair describe this SSD",
    "access": "without file system (the raw block device) or with file system (its file_system_twin)",
}


def pair_raw_and_file_system(sweeps: str, csv_out: str, pairs: dict[str, str], log: str) -> None:
    """Thread-search rows of every raw device and its file-system twin (thesis Figure 2.7)."""
    started = provenance.now()
    with open(sweeps, newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["sweep"] == "threads" and row["pattern"] == "random"]
    described = json.loads(Path(f"{sweeps}.json").read_text(encoding="utf-8"))["columns"]
    paired = [{"ssd": raw, "access": access, **row}
              for raw, twin in sorted(pairs.items())
              for device, access in ((raw, "without file system"), (twin, "with file system"))
              for row in rows if row["device"] == device]
    columns = {**RAW_VS_FS_COLUMNS, **{name: described[name] for name in rows[0]}} if rows else RAW_VS_FS_COLUMNS
    write_csv(csv_out, columns, paired)
    provenance.write_sidecar(csv_out, produced_by="ssdartifact.steps.pair_raw_and_file_system", inputs=[sweeps],
                             started=started, columns=columns)
    Path(log).write_text(f"paired {len(pairs)} raw devices with their file-system twins\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    """Inside a step's container: python -m ssdartifact.steps NAME '{"args": [...], "kwargs": {...}}'."""
    name, call = argv
    # CAVE's and ReStore's steps register themselves in ssdartifact.steps.STEPS, which under
    # `python -m` is another module object than this __main__: merge that registry into this one.
    from . import cave_steps, restore_steps  # noqa: F401, PLC0415
    from .steps import STEPS as registered  # noqa: PLC0415

    STEPS.update(registered)
    arguments = json.loads(call)
    STEPS[name](*arguments["args"], **arguments["kwargs"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
