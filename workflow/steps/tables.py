"""Steps of the tables that describe a setup rather than measure it (workflow/rules/tables.smk):
the configuration or the systems' declarations as tidy CSVs, which the tables' scripts typeset
like any other result. Deterministic: the same configuration gives the same bytes; but the devices
of Tables 4.1 and 6.2 are measured where the profile characterizes them (their alpha_k.csv)."""

from __future__ import annotations

from pathlib import Path

from pio import bench, characterize
from restore import tables as restore_tables
from ssdartifact import provenance
from ssdartifact.devices import declaration
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


@in_image()
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


TABLE_6_2_COLUMNS = {
    "thesis_device": "the thesis's device this row stands for, as Table 6.2 prints it "
                     "(configs/experiments/restore.yaml)",
    "device": "the declared device measured for it (configs/devices.yaml)",
    "device_preset": "the emulated device's preset (configs/emussd_presets.yaml), NA otherwise",
    "declared_read_latency_us": "an emulated device's declared 4 KiB read latency: the time scale its latencies are "
                                "measured at; NA for a real device (its own)",
    "status": "measured, or not run (this profile leaves the device out)",
    "reason": "why this profile leaves the device out (its table_6_2.not_run); empty when measured",
    "read_lat_1_us": "mean 4 KiB random read latency of one thread at queue depth 1, microseconds, on the declared "
                     "time scale",
    "write_lat_1_us": "mean 4 KiB random write latency of one thread at queue depth 1, microseconds, on the declared "
                      "time scale",
    "alpha": "a 4 KiB write's cost over a read's at k_w and k_r (alpha_cost: Chapter 6's alpha, write latency over "
             "read latency, L1991, and emussd's)",
    "k_r": "4 KiB read concurrency (a lower bound when read_saturated is false)",
    "k_w": "4 KiB write concurrency (a lower bound when write_saturated is false)",
    "read_saturated": "whether the read search found a plateau below the profile's max_threads",
    "write_saturated": "whether the write search found a plateau below the profile's max_threads",
    "time_dilation": "the factor emussd ran the device slower by (the latencies are divided by it); 1 for a real "
                     "device",
    "measured_by": "the alpha_k.csv the row comes from: the whole characterization's or the 4 KiB searches' alone",
}


@in_image()
def describe_restore_devices(*, rows: list[dict], alpha_k: dict, not_run: dict, csv_out: str, log: str) -> None:
    """Table 6.2: for each of its devices (`rows`: configs/experiments/restore.yaml's table_6_2), one
    thread's 4 KiB latencies, alpha and k from `alpha_k` (device -> its alpha_k.csv), or the reason
    in `not_run` (device -> why this profile leaves it out)."""
    started = provenance.now()
    table = []
    for row in rows:
        name = row["device"]
        device = declaration(name)
        facts = {"thesis_device": row["thesis_device"], "device": name, "device_preset": device.get("preset"),
                 "declared_read_latency_us": device.get("read_latency_us") if device["kind"] == "emulated" else None}
        if name in not_run:
            table.append({**facts, "status": "not run", "reason": not_run[name]})
            continue
        if name not in alpha_k:
            raise StepFailed(f"Table 6.2's device {name!r} is neither measured nor left out with a reason; add it "
                             "to the profile's table_6_2.not_run or measure it (workflow/rules/pio.smk)")
        try:
            measured = characterize.alpha_k_row(alpha_k[name], name, block_size=bench.PAGE_SIZE)
        except (OSError, LookupError) as error:
            raise StepFailed(f"Table 6.2's device {name!r}: {error}") from None
        copied = ("read_lat_1_us", "write_lat_1_us", "k_r", "k_w", "read_saturated", "write_saturated", "time_dilation")
        table.append({**facts, "status": "measured", "reason": "", "alpha": measured["alpha_cost"],
                      **{key: measured[key] for key in copied}, "measured_by": alpha_k[name]})
    write_csv(csv_out, TABLE_6_2_COLUMNS, table)
    provenance.write_sidecar(csv_out, produced_by="steps.tables.describe_restore_devices",
                             inputs=list(alpha_k.values()), started=started, columns=TABLE_6_2_COLUMNS,
                             configs=config_hashes("experiments/restore.yaml", "devices.yaml", "emussd_presets.yaml"))
    _logged(log, csv_out, table)


@in_image()
def describe_ace_workloads(*, workloads: dict, scale: int | None, csv_out: str, log: str) -> None:
    """Table 4.2: the synthetic workloads of configs/experiments/ace.yaml at this profile's scale."""
    rows = [{"workload": name, **{k: spec[k] for k in ("read_pct", "hot_ops_pct", "hot_pages_pct")},
             "pgbench_scale": scale} for name, spec in workloads.items()]
    if not rows:
        raise StepFailed("configs/experiments/ace.yaml: key synthetic_workloads is empty; Table 4.2 would be empty")
    write_csv(csv_out, TABLE_4_2_COLUMNS, rows)
    _logged(log, csv_out, rows)


@in_image()
def describe_restore_policies(*, policies: list[str], csv_out: str, log: str) -> None:
    """Table 6.1: the features each of the experiment's policies captures (restore.tables)."""
    _logged(log, csv_out, restore_tables.write_table_6_1(csv_out, policies))


@in_image()
def describe_restore_workloads(*, workloads: list[str], csv_out: str, log: str) -> None:
    """Table 6.4: the synthetic workloads the experiment runs, with restore-sim's phases for each."""
    try:
        _logged(log, csv_out, restore_tables.write_table_6_4(csv_out, workloads))
    except ValueError as error:
        raise StepFailed(f"configs/experiments/restore.yaml: {error}") from None
