"""Steps of PIO's rules (workflow/rules/pio_model.smk, pio.smk): the model's curves (Chapter 3),
and Chapter 2's characterization of each declared device, gathered over devices."""

from __future__ import annotations

import copy
import csv
import json
import sys
from pathlib import Path

import pandas as pd
from pio import bench, characterize, fio, sweep, writeback_app
from ssdartifact import devices, provenance
from ssdartifact.tidy import write_csv

from .runtime import config_hashes, in_image, open_device, run_logged


@in_image()
def pio_model_curve(*, curve: str, csv: str, log: str) -> None:
    run_logged([sys.executable, "-m", "pio.curves", curve, csv], log)


CHARACTERIZATION_DECLARED = {
    "kind": "the device's kind (file, block or emulated)",
    "medium": "declared storage medium (flash, optane, hdd, virtual, unknown; emulated for emussd)",
    "declared_alpha": "emulated devices: the declared write/read cost ratio (empty for real devices)",
    "declared_k_r": "emulated devices: the declared read concurrency",
    "declared_k_w": "emulated devices: the declared write concurrency",
}


def characterization_outputs(directory: str, tables=("sweeps", "alpha_k", "interference", "writeback")
                             ) -> dict[str, Path]:
    return {name: Path(directory) / f"{name}.csv" for name in tables}


@in_image(devices=("/dev/fuse",), capabilities=("SYS_ADMIN",), block_devices=True)
def characterize_device(*, name: str, experiment: dict, binary: list[str], raw: str, fio_point: dict, profile: dict,
                        log: str) -> None:
    """Thesis Chapter 2 on one declared device: every CSV of results/pio/devices/<name>/
    (`experiment`: configs/experiments/pio.yaml's; `binary`: emussd's, for an emulated device, else
    empty; `profile`: the profile's `characterize`)."""
    experiment = copy.deepcopy(experiment)  # sized for this device below; the caller's stays as given
    if "random_block_sizes" in profile:
        experiment["characterization"]["random_block_sizes"] = profile["random_block_sizes"]
    _characterize(name, binary, raw, fio_point, profile["max_threads"], experiment, f"results/pio/devices/{name}",
                  log, searches_only=False)


@in_image(devices=("/dev/fuse",), capabilities=("SYS_ADMIN",), block_devices=True)
def search_device_threads(*, name: str, experiment: dict, binary: list[str], raw: str, fio_point: dict,
                          max_threads: int, block_sizes: list[int], log: str) -> None:
    """Thesis Table 6.2 or Figure 2.7 on a device Chapter 2 does not characterize: the random thread
    searches alone at `block_sizes` (one thread's latency, alpha and k; no other block size, no
    sequential, queue-depth, interference or write-back run), in results/pio/searches/<name>/{sweeps,alpha_k}.csv."""
    experiment = copy.deepcopy(experiment)
    experiment["characterization"].update(random_block_sizes=list(block_sizes), sequential_block_sizes=[])
    _characterize(name, binary, raw, fio_point, max_threads, experiment, f"results/pio/searches/{name}", log,
                  searches_only=True)


def _characterize(name: str, binary: list[str], raw: str, fio_point: dict, max_threads: int, experiment: dict,
                  out_dir: str, log: str, *, searches_only: bool) -> None:
    started = provenance.now()
    device = devices.declaration(name)
    if device["kind"] == "emulated":
        # emussd serves every offset alike (no read-ahead, no mapping unit): a sequential sweep would
        # measure the random one again (13-15 % of an emulated device's characterization time, 2026-11-28)
        experiment["characterization"]["sequential_block_sizes"] = []
    needed = bench.needed_bytes(experiment, max_threads)
    with open(log, "w", encoding="utf-8") as progress, \
            open_device(name, needed, emussd_binary=binary[0] if binary else None,
                        stats_out=Path(out_dir) / "device_stats.json", saturating=True) as opened:
        target = (fio.Target(block_device=opened.block_path) if opened.block_path
                  else fio.Target(directory=opened.io_dir))
        emulated = device["kind"] == "emulated"
        prepared = bench.OpenedTarget(name, target, opened.prepare_dir if emulated else None,
                                      bool(device.get("precondition")))
        if searches_only:
            results = bench.Results(*bench.thread_searches(prepared, experiment, fio_point, max_threads, Path(raw),
                                                           progress), [], [])
        else:
            results = bench.run(prepared, experiment, fio_point, max_threads, Path(raw), progress)
    model = devices.emulated_model(device) if emulated else {}
    declared = {"kind": device["kind"], "medium": "emulated" if emulated else device.get("medium", "unknown"),
                "declared_alpha": model.get("alpha"), "declared_k_r": model.get("k_r"),
                "declared_k_w": model.get("k_w")}
    for row in results.alpha_k + results.writeback:
        row.update(declared)
    tables = {"sweeps": (bench.SWEEP_COLUMNS, results.sweeps),
              "alpha_k": ({**characterize.ALPHA_K_COLUMNS, **CHARACTERIZATION_DECLARED}, results.alpha_k),
              "interference": (sweep.INTERFERENCE_COLUMNS, results.interference),
              "writeback": ({**writeback_app.COLUMNS, **CHARACTERIZATION_DECLARED}, results.writeback)}
    raw_files = sorted(Path(raw).glob("*.json"))
    written = ("sweeps", "alpha_k") if searches_only else tuple(tables)
    step = "search_device_threads" if searches_only else "characterize_device"
    for table, path in characterization_outputs(out_dir, written).items():
        columns, rows = tables[table]
        rows = devices.to_declared_time(rows, opened.time_dilation, *bench.TIME_COLUMNS[table])
        columns = {**columns, **devices.TIME_DILATION_COLUMN}
        write_csv(path, columns, rows)
        provenance.write_sidecar(path, produced_by=f"steps.pio.{step}", inputs=raw_files,
                                 configs=config_hashes("experiments/pio.yaml", "devices.yaml"),
                                 device=opened.provenance(), started=started, columns=columns,
                                 tools={"fio": fio.version()})


def gather_characterization(*, per_device: list[str], out_dir: str, log: str) -> None:
    """One CSV per table over every characterized device (the figures and claims read these)."""
    started = provenance.now()
    for table, path in characterization_outputs(out_dir).items():
        parts = [Path(directory) / path.name for directory in per_device]
        frames = [pd.read_csv(part, keep_default_na=False, dtype=str) for part in parts]
        described = json.loads(Path(f"{parts[0]}.json").read_text(encoding="utf-8"))["columns"]
        columns = {name: described[name] for name in frames[0].columns}  # the per-device CSVs' order
        frame = pd.concat(frames)
        write_csv(path, columns, frame.to_dict("records"))
        provenance.write_sidecar(path, produced_by="steps.pio.gather_characterization", inputs=parts,
                                 started=started, columns=columns)
    Path(log).write_text(f"gathered {len(per_device)} devices into {out_dir}\n", encoding="utf-8")


RAW_VS_FS_COLUMNS = {
    "ssd": "the raw block device's name: both rows of a pair describe this SSD",
    "access": "without file system (the raw block device) or with file system (its file_system_twin)",
}


def pair_raw_and_file_system(*, sweeps: list[str], csv_out: str, pairs: dict[str, str], log: str) -> None:
    """Thread-search rows of every raw device and its file-system twin (thesis Figure 2.7), from
    each device's sweeps (its characterization's or its searches alone)."""
    started = provenance.now()
    rows = []
    for path in sweeps:
        with open(path, newline="", encoding="utf-8") as handle:
            rows += [row for row in csv.DictReader(handle) if row["sweep"] == "threads" and row["pattern"] == "random"]
    described = json.loads(Path(f"{sweeps[0]}.json").read_text(encoding="utf-8"))["columns"]
    paired = [{"ssd": raw, "access": access, **row}
              for raw, twin in sorted(pairs.items())
              for device, access in ((raw, "without file system"), (twin, "with file system"))
              for row in rows if row["device"] == device]
    columns = {**RAW_VS_FS_COLUMNS, **{name: described[name] for name in rows[0]}} if rows else RAW_VS_FS_COLUMNS
    write_csv(csv_out, columns, paired)
    provenance.write_sidecar(csv_out, produced_by="steps.pio.pair_raw_and_file_system", inputs=sweeps,
                             started=started, columns=columns)
    Path(log).write_text(f"paired {len(pairs)} raw devices with their file-system twins\n", encoding="utf-8")
