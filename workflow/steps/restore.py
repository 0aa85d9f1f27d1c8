"""Steps of ReStore's rules (workflow/rules/restore.smk): build the simulator, convert real traces,
and run Chapter 6's figures and tables (restore.plan says which and with what parameters,
restore.experiment runs them, restore.results shapes their CSVs)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from restore import engine, experiment, original, plan, results, traces
from restore.plan import EXPERIMENT, figure_csv
from ssdartifact import claims, provenance, sources
from ssdartifact.tidy import write_csv

from .runtime import StepFailed, config_hashes, in_image


@in_image()
def build_restore_simulator(*, binary: str, log: str) -> None:
    try:
        built = engine.build(Path(binary).parent, targets=engine.PROGRAMS)
    except engine.RestoreError as error:
        raise StepFailed(f"building ReStore's simulator failed (systems/restore/README.md):\n{error}") from None
    Path(log).write_text(f"built {built}\n", encoding="utf-8")


@in_image()
def convert_restore_trace(*, name: str, source: str, trace_format: str, csv_out: str, log: str) -> None:
    """One real workload's trace in restore-sim's page-trace format (configs/experiments/restore.yaml, traces)."""
    if not Path(source).exists():
        raise StepFailed(f"configs/experiments/restore.yaml: key traces.{name}.path: {source} does not exist; "
                         "record or download the trace there, or remove it from `traces`")
    Path(csv_out).parent.mkdir(parents=True, exist_ok=True)
    started = provenance.now()
    try:
        if trace_format == "page":
            # read (and refused, when it is not a page trace) before anything is written
            stats = {**traces.trace_stats(source), "trace": Path(csv_out).name}
            tmp = Path(csv_out + ".tmp")
            shutil.copyfile(source, tmp)
            tmp.replace(csv_out)
        else:
            stats = {"postgres": traces.convert_postgres, "snia": traces.convert_snia,
                     "thesios": traces.convert_thesios}[trace_format](source, csv_out)
    except traces.TraceFormatError as error:
        raise StepFailed(f"configs/experiments/restore.yaml: key traces.{name}: {error}") from None
    provenance.write_sidecar(csv_out, produced_by="steps.restore.convert_restore_trace", inputs=[source],
                             started=started, columns={"page": "dense page id (order of first use)",
                                                       "op": "R or W"})
    Path(log).write_text(f"{name}: {stats}\n", encoding="utf-8")


def _write_figure(figure: str, binary: str, params: dict, csv_out: str | Path, jobs: int) -> tuple[list, dict]:
    """One figure's (or table's) runs with restore.experiment, written as its tidy CSV; `jobs`
    restore-sim processes unless the profile sets `jobs` (the rows do not depend on it).
    Returns the rows and the documented columns."""
    params = {"jobs": jobs, **params, "binary": binary}
    try:
        rows = results.shape(figure, getattr(experiment, figure)(params))
    except engine.RestoreError as error:
        raise StepFailed(f"{figure}: {error}") from None
    columns = results.columns(results.csv_columns(figure))
    write_csv(csv_out, columns, ({c: r.get(c) for c in columns} for r in rows))
    return rows, columns


def _run_figure(figure: str, binary: str, params: dict, csv_out: str, jobs: int = 1,
                pairs_out: str | None = None) -> str:
    """One figure's (or table's) tidy CSV with its sidecar. Returns a line for the log."""
    started = provenance.now()
    rows, columns = _write_figure(figure, binary, params, csv_out, jobs)
    configs = config_hashes(EXPERIMENT, "emussd_presets.yaml", "devices.yaml")  # the tiers' device models
    inputs = [binary, *(spec["path"] for spec in params.get("traces", {}).values())]
    provenance.write_sidecar(csv_out, produced_by=f"steps.restore ({figure})",
                             inputs=inputs, configs=configs, started=started, columns=columns)
    message = f"{figure}: {len(rows)} rows ({started} to {provenance.now()})\n"
    if figure == "crosscheck" and pairs_out:
        tolerance = params.get("tolerance", 0.05)
        pair_columns = results.columns(results.CROSSCHECK_PAIR_COLUMNS)
        write_csv(pairs_out, pair_columns, results.crosscheck_pairs(rows, tolerance))
        provenance.write_sidecar(pairs_out, produced_by="steps.restore (crosscheck)",
                                 inputs=[csv_out], configs=configs, started=started, columns=pair_columns)
        summary = experiment.rank_agreement([r for r in rows if r["seed"] == params["seeds"][0]], tolerance)
        message += f"rank agreement of the engines (all policies, seed {params['seeds'][0]}): {summary}\n"
    return message


@in_image()
def simulate_restore_figures(*, figures: list[str], binary: str, params: dict, csvs: list[str], log: str,
                             jobs: int) -> None:
    """Every deterministic Chapter 6 CSV of the profile, one after the other (one workflow job: each
    figure's runs are spread over `jobs` processes), in virtual time with the CPU timing off."""
    messages = [_run_figure(figure, binary, params[figure], csv, jobs) for figure, csv in zip(figures, csvs)]
    Path(log).write_text("".join(messages), encoding="utf-8")


@in_image()
def measure_restore_overhead(*, binary: str, params: dict, csv_out: str, log: str) -> None:
    """Table 6.6: CPU time per access (measured: one process, nothing beside it) and memory."""
    Path(log).write_text(_run_figure("table_6_6", binary, params, csv_out, 1), encoding="utf-8")


@in_image()
def crosscheck_restore_emulator(*, binary: str, params: dict, csv_out: str, pairs_out: str, log: str) -> None:
    """The simulator and the real-time emulator on the same small runs, and every pair's agreement."""
    Path(log).write_text(_run_figure("crosscheck", binary, params, csv_out, 1, pairs_out), encoding="utf-8")


def say_unreachable_original(profile_restore: dict, profile: str) -> None:
    """check-config's lines when the profile runs the authors' programs and their source is not here."""
    if plan.ORIGINAL not in profile_restore.get("figures", {}):
        return
    why = original.unreachable()
    _, not_run = plan.without_original(profile_restore, why, sources.how_to_supply(profile))
    if not_run:
        reason = next(iter(not_run.values()))
        print(f"Not run: {reason['why']}: {', '.join(Path(path).stem for path in not_run)} (the claims report and "
              f"the document mark Figure S6, Table S7 and their claims so); the rest runs.\n  {why}\n"
              f"To run them: {reason['fix']}")


def run_restore_original(*, binary: str, params: dict, csv_out: str, summary_out: str, log: str) -> None:
    """The authors' released programs (restore.original) beside ours on the same streams. Their pinned
    source is fetched here, on the host, first: in docker mode the container has no network and no
    SSD_SOURCES folder, and finds it in the build's downloads folder."""
    try:
        sources.fetch(original.SOURCE, original.DOWNLOADS, say=lambda message: print(message, flush=True))
    except sources.SourceError as error:
        raise StepFailed(str(error)) from None
    original.BUILD_ROOT.mkdir(parents=True, exist_ok=True)  # a container is given only folders that exist
    run_restore_original_in_image(binary=binary, params=params, csv_out=csv_out, summary_out=summary_out, log=log,
                                  folder=str(original.BUILD_ROOT))


# `folder`: their builds (one per key), the one folder besides the outputs its container writes
@in_image(kept=("folder",))
def run_restore_original_in_image(*, binary: str, params: dict, csv_out: str, summary_out: str, log: str,
                                  folder: str) -> None:
    started = provenance.now()
    messages = []
    try:
        programs = original.build(say=messages.append)
        with tempfile.TemporaryDirectory(prefix="restore-original-") as scratch:
            rows = original.campaign(params, Path(binary), programs, Path(scratch), say=messages.append)
    except (original.OriginalError, engine.RestoreError) as error:
        raise StepFailed(f"the authors' ReStore (configs/sources.yaml, restore_original): {error}") from None
    record = original.build_record()
    tools = {"restore_original": f"{record['repository']}@{record['commit'][:12]} patched "
                                 f"({', '.join(record['patches'])}), {record['compiler']} {' '.join(record['flags'])}"}
    configs = config_hashes(EXPERIMENT, "emussd_presets.yaml", "devices.yaml", "sources.yaml")
    inputs = [binary, *programs.values(), *original.patch_series()]
    for path, names, out in ((csv_out, original.RUN_COLUMNS, rows),
                             (summary_out, original.SUMMARY_COLUMNS, original.summary(rows))):
        columns = original.columns(names)
        write_csv(path, columns, out)
        provenance.write_sidecar(path, produced_by="steps.restore.run_restore_original", inputs=inputs,
                                 configs=configs, started=started, columns=columns, tools=tools)
    Path(log).write_text("\n".join([*messages, f"{len(rows)} runs ({started} to {provenance.now()})"]) + "\n",
                         encoding="utf-8")


def sensitivity_claims(claims_list: list[dict], figures: list[str]) -> list[dict]:
    """Chapter 6's claims that read only the swept figures' CSVs."""
    csvs = {figure_csv(figure) for figure in figures}
    return [c for c in claims_list if c["id"].startswith("restore-6.") and claims.data_files(c) <= csvs]


def sensitivity_verdicts(binary: str, params: dict, points: list[dict], claims_list: list[dict],
                         jobs: int) -> list[dict]:
    """Each grid point's runs (`params`: each swept figure's restore.experiment parameters, the
    point's options replacing the chapter's), written as the figures' CSVs into a scratch tree
    and checked there by the claims report's own checker (ssdartifact.claims.evaluate). One row per
    point and claim (results.SENSITIVITY_COLUMNS); points with the same options run once."""
    verdicts = {}  # the options of a point -> {claim id: Outcome}
    rows = []
    for point in points:
        key = json.dumps(point["options"], sort_keys=True)
        if key not in verdicts:
            with tempfile.TemporaryDirectory(prefix="restore-sensitivity-") as tmp:
                for figure, figure_params in params.items():
                    run = {**figure_params, "options": {**figure_params["options"], **point["options"]}}
                    csv_out = Path(tmp) / figure_csv(figure)
                    csv_out.parent.mkdir(parents=True, exist_ok=True)
                    _write_figure(figure, binary, run, csv_out, jobs)
                verdicts[key] = {c["id"]: claims.evaluate(c, root=Path(tmp)) for c in claims_list}
        for claim_id, outcome in verdicts[key].items():
            rows.append({**{k: point[k] for k in ("parameter", "value", "position", "is_default")},
                         "claim": claim_id, "status": outcome.status,
                         "holds": None if outcome.status == claims.NOT_RUN else outcome.status == claims.PASS,
                         "score": outcome.score, "measured": outcome.measured})
    return rows


@in_image()
def simulate_restore_sensitivity(*, claims_list: list[dict], binary: str, params: dict, points: list[dict],
                                 csv_out: str, summary_out: str, log: str, jobs: int) -> None:
    """The sensitivity study: every Chapter 6 claim on the swept figures at each grid point, and per
    claim the share of the points where it holds (virtual time: deterministic)."""
    started = provenance.now()
    checked = sensitivity_claims(claims_list, list(params))
    rows = sensitivity_verdicts(binary, params, points, checked, jobs)
    configs = config_hashes(EXPERIMENT, "emussd_presets.yaml", "devices.yaml", "claims")
    for path, names, out in ((csv_out, results.SENSITIVITY_COLUMNS, rows),
                             (summary_out, results.SENSITIVITY_SUMMARY_COLUMNS, results.sensitivity_summary(rows))):
        columns = results.columns(names)
        write_csv(path, columns, out)
        provenance.write_sidecar(path, produced_by="steps.restore (sensitivity)", inputs=[binary], configs=configs,
                                 started=started, columns=columns)
    runs = len({json.dumps(p["options"], sort_keys=True) for p in points})
    Path(log).write_text(f"sensitivity: {runs} grid points x {len(params)} figures, {len(checked)} claims "
                         f"({started} to {provenance.now()})\n", encoding="utf-8")
