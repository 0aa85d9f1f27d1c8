"""Steps of the tables that describe a setup rather than measure it (workflow/rules/tables.smk):
the configuration or the systems' declarations as tidy CSVs, which the tables' scripts typeset
like any other result. Deterministic: the same configuration gives the same bytes."""

from __future__ import annotations

from pathlib import Path

from restore import tables as restore_tables
from ssdartifact import provenance
from ssdartifact.tidy import write_csv

from .runtime import StepFailed, config_hashes, device_facts, in_image

def _logged(log: str, csv_out: str, rows: list) -> None:
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    Path(log).write_text(f"{csv_out}: {len(rows)} rows\n", encoding="utf-8")


TABLE_4_1_COLUMNS = {
    "device": "the declared device (configs/devices.yaml) Chapter 4 runs on in this profile",
    "device_kind": "emulated, file or block",
    "device_preset": "the emulated device's preset (configs/emussd_presets.yaml), NA otherwise",
    "alpha": "write cost over read cost at 8 KiB (PostgreSQL's page), as ACE uses it",
    "k_r": "read concurrency at 8 KiB",
    "k_w": "write concurrency at 8 KiB: ACE's n_w",
    "source": "measured (this run's characterization) or declared (an emulated device)",
}
TABLE_4_2_COLUMNS = {
    "workload": "the synthetic workload's name (configs/experiments/ace.yaml, synthetic_workloads)",
    "read_pct": "share of the transactions that only read, %",
    "hot_ops_pct": "locality: share of the operations on the hot pages, %",
    "hot_pages_pct": "locality: share of the pages that are hot, %",
    "pgbench_scale": "the database's pgbench scale in this profile (NA: the profile runs no Chapter 4 experiment)",
}


@in_image("report")
def describe_ace_devices(*, devices: list[str], alpha_k: dict, csv_out: str, log: str) -> None:
    """Table 4.1: alpha and k of each device Chapter 4 runs on (`alpha_k`: device -> its
    characterization's alpha_k.csv, when this profile measures it; else its declaration)."""
    started = provenance.now()
    rows = []
    for name in devices:
        facts = device_facts(name, [alpha_k[name]] if name in alpha_k else [], block_size=8192)
        rows.append({"device": name, **{k: facts[k] for k in ("device_kind", "device_preset", "alpha", "k_r", "k_w",
                                                               "source")}})
    write_csv(csv_out, TABLE_4_1_COLUMNS, rows)
    provenance.write_sidecar(csv_out, produced_by="steps.tables.describe_ace_devices", inputs=list(alpha_k.values()),
                             started=started, configs=config_hashes("devices.yaml", "emussd_presets.yaml"))
    _logged(log, csv_out, rows)


@in_image("report")
def describe_ace_workloads(*, workloads: dict, scale: int | None, csv_out: str, log: str) -> None:
    """Table 4.2: the synthetic workloads of configs/experiments/ace.yaml at this profile's scale."""
    rows = [{"workload": name, **{k: spec[k] for k in ("read_pct", "hot_ops_pct", "hot_pages_pct")},
             "pgbench_scale": scale} for name, spec in workloads.items()]
    if not rows:
        raise StepFailed("configs/experiments/ace.yaml: key synthetic_workloads is empty; Table 4.2 would be empty")
    write_csv(csv_out, TABLE_4_2_COLUMNS, rows)
    _logged(log, csv_out, rows)


@in_image("report")
def describe_restore_policies(*, policies: list[str], csv_out: str, log: str) -> None:
    """Table 6.1: the features each of the experiment's policies captures (restore.tables)."""
    _logged(log, csv_out, restore_tables.write_table_6_1(csv_out, policies))


@in_image("report")
def describe_restore_workloads(*, workloads: list[str], csv_out: str, log: str) -> None:
    """Table 6.4: the synthetic workloads the experiment runs, with restore-sim's phases for each."""
    try:
        _logged(log, csv_out, restore_tables.write_table_6_4(csv_out, workloads))
    except ValueError as error:
        raise StepFailed(f"configs/experiments/restore.yaml: {error}") from None
