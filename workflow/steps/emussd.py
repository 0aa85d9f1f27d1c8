"""Steps of emussd's rules (workflow/rules/emussd.smk): build it, and its saturation benchmark
(a fio thread sweep on an emulated device, beside the declared model)."""

from __future__ import annotations

import math
from pathlib import Path

from emussd import harness
from pio import fio
from pio.bench import TIME_COLUMNS
from pio.sweep import prepare_sparse_files, run_sweep
from ssdartifact import devices, provenance
from ssdartifact.tidy import write_csv

from .runtime import config_hashes, in_image, open_device


@in_image()
def build_emussd(*, binary: str, log: str) -> None:
    built = harness.build(Path(binary).parent, targets=harness.PROGRAMS)
    Path(log).write_text(f"built {built}\n", encoding="utf-8")


DECLARED_COLUMNS = {
    "declared_read_latency_us": "the emulated device's declared service time of one page read",
    "declared_alpha": "the emulated device's declared write/read asymmetry",
    "declared_k": "declared concurrency of this operation (k_r for reads, k_w for writes)",
    "declared_iops": "declared k / service time of one request: the most the device can serve",
}


@in_image(devices=("/dev/fuse",), capabilities=("SYS_ADMIN",))
def emussd_saturation(*, saturation: dict, binary: str, csv: str, device_stats: str, raw: str, fio_point: dict,
                      log: str) -> None:
    """fio thread sweep on emussd's benchmark device (`saturation`: configs/experiments/emussd.yaml's);
    each row also carries the declared model."""
    started = provenance.now()
    experiment = saturation
    device = devices.declaration(experiment["device"])
    model = devices.emulated_model(device)
    points = [fio.FioPoint(op, "random", experiment["block_size"], threads, 1, experiment["engine"],
                           fio_point["runtime_ms"], fio_point["ramp_ms"], experiment["file_size"])
              for op, key in (("read", "read_threads"), ("write", "write_threads")) for threads in experiment[key]]
    needed = max(p.threads for p in points) * experiment["file_size"]
    with open(log, "w", encoding="utf-8") as progress, \
            open_device(device["name"], needed, emussd_binary=binary, stats_out=device_stats,
                        saturating=True) as opened:
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
    columns = {**fio.TIDY_COLUMNS, **DECLARED_COLUMNS, **devices.TIME_DILATION_COLUMN}
    write_csv(csv, columns, rows)
    provenance.write_sidecar(csv, produced_by="steps.emussd.emussd_saturation", inputs=sorted(Path(raw).glob("*.json")),
                             configs=config_hashes("experiments/emussd.yaml", "devices.yaml"),
                             device=opened.provenance(), started=started, columns=columns,
                             tools={"fio": fio.version()})
