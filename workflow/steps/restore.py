"""Steps of ReStore's rules (workflow/rules/restore.smk): build the simulator, convert real traces,
and run Chapter 6's figures and tables (restore.plan says which and with what parameters,
restore.experiment runs them, restore.results shapes their CSVs)."""

from __future__ import annotations

import shutil
from pathlib import Path

from restore import engine, experiment, results, traces
from restore.plan import EXPERIMENT
from ssdartifact import provenance
from ssdartifact.tidy import write_csv

from .runtime import StepFailed, config_hashes, in_image


@in_image("restore")
def build_restore_simulator(*, binary: str, log: str) -> None:
    try:
        built = engine.build(Path(binary).parent)
    except engine.RestoreError as error:
        raise StepFailed(f"building ReStore's simulator failed (systems/restore/README.md):\n{error}") from None
    Path(log).write_text(f"built {built}\n", encoding="utf-8")


@in_image("restore")
def convert_restore_trace(*, name: str, source: str, trace_format: str, csv_out: str, log: str) -> None:
    """One real workload's trace in restore-sim's page-trace format (configs/experiments/restore.yaml, traces)."""
    if not Path(source).exists():
        raise StepFailed(f"configs/experiments/restore.yaml: key traces.{name}.path: {source} does not exist; "
                         "record or download the trace there, or remove it from `traces`")
    Path(csv_out).parent.mkdir(parents=True, exist_ok=True)
    started = provenance.now()
    try:
        if trace_format == "page":
            tmp = Path(csv_out + ".tmp")
            shutil.copyfile(source, tmp)
            tmp.replace(csv_out)
            stats = traces.trace_stats(csv_out)
        else:
            stats = {"postgres": traces.convert_postgres, "snia": traces.convert_snia,
                     "thesios": traces.convert_thesios}[trace_format](source, csv_out)
    except traces.TraceFormatError as error:
        raise StepFailed(f"configs/experiments/restore.yaml: key traces.{name}: {error}") from None
    provenance.write_sidecar(csv_out, produced_by="steps.restore.convert_restore_trace", inputs=[source],
                             started=started, columns={"page": "dense page id (order of first use)",
                                                       "op": "R or W"})
    Path(log).write_text(f"{name}: {stats}\n", encoding="utf-8")


def _run_figure(figure: str, binary: str, params: dict, csv_out: str, jobs: int = 1,
                pairs_out: str | None = None) -> str:
    """One figure's (or table's) runs with restore.experiment, as a tidy CSV with its sidecar;
    `jobs` restore-sim processes unless the profile sets `jobs` (the rows do not depend on it).
    Returns a line for the log."""
    started = provenance.now()
    params = {"jobs": jobs, **params, "binary": binary}
    try:
        rows = results.shape(figure, getattr(experiment, figure)(params))
    except engine.RestoreError as error:
        raise StepFailed(f"{figure}: {error}") from None
    columns = results.columns(results.csv_columns(figure))
    write_csv(csv_out, columns, ({c: r.get(c) for c in columns} for r in rows))
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


@in_image("restore")
def simulate_restore_figures(*, figures: list[str], binary: str, params: dict, csvs: list[str], log: str,
                             jobs: int) -> None:
    """Every deterministic Chapter 6 CSV of the profile, one after the other (one workflow job: each
    figure's runs are spread over `jobs` processes), in virtual time with the CPU timing off."""
    messages = [_run_figure(figure, binary, params[figure], csv, jobs) for figure, csv in zip(figures, csvs)]
    Path(log).write_text("".join(messages), encoding="utf-8")


@in_image("restore")
def measure_restore_overhead(*, binary: str, params: dict, csv_out: str, log: str) -> None:
    """Table 6.6: CPU time per access (measured: one process, nothing beside it) and memory."""
    Path(log).write_text(_run_figure("table_6_6", binary, params, csv_out, 1), encoding="utf-8")


@in_image("restore")
def crosscheck_restore_emulator(*, binary: str, params: dict, csv_out: str, pairs_out: str, log: str) -> None:
    """The simulator and the real-time emulator on the same small runs, and every pair's agreement."""
    Path(log).write_text(_run_figure("crosscheck", binary, params, csv_out, 1, pairs_out), encoding="utf-8")
