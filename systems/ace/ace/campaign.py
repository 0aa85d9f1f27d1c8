"""Chapter 4's campaign on one device: every run of the plan measured once on the patched
PostgreSQL, each finished run kept as JSON (with the server's log), so an interrupted campaign
resumes where it stopped. A kept run is reused only under the same server, settings, device and
driver (its code and the workloads' files): a change in how a run is measured measures every run
again.

The device and the WAL device are opened by the caller's `open_device(name, needed_bytes)` (a
context manager yielding an ssdartifact.devices.OpenDevice), so the campaign runs on any kind
of declared device.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ssdartifact import REPO_ROOT, devices, files
from ssdartifact.kept import KeptRuns

from . import experiment, plan

TEMPLATES = REPO_ROOT / "scratch" / "ace" / "templates"  # loaded databases, copied onto a device per run


def load_templates(install: Path, points: list[dict], profile_ace: dict, fillfactor: int,
                   say: Callable[[str], None]) -> list[dict]:
    """Every database the campaigns of `points` run on, loaded once into a template cluster, off
    the devices; the facts of each."""
    return [experiment.template_facts(experiment.ensure_template(install, database, TEMPLATES, say))
            for database in plan.databases(points, profile_ace, fillfactor)]


def run(*, device: str, facts: dict, runs: list[experiment.Run], install: Path, settings: dict, raw_dir: Path,
        open_device: Callable, say: Callable[[str], None]) -> tuple[list[dict], list[Path]]:
    """Every run of `runs` on `device` (`settings`: configs/experiments/ace.yaml), kept in `raw_dir`:
    (the rows of all of them, measured now or kept from before, each with the device's `facts`;
    the files they are kept in)."""
    driver = [files.sha256_file(path) for path in experiment.DRIVER_SOURCES]
    kept_runs = KeptRuns(raw_dir, [str(install), settings["server"], settings["wal_device"],
                                   devices.declaration(device), driver])
    raw_dir.mkdir(parents=True, exist_ok=True)  # each run's server log is kept beside its row
    kept = [kept_runs.path(each.key()) for each in runs]
    pending = [(index, each) for index, each in enumerate(runs) if kept_runs.get(each.key()) is None]
    if pending:
        # Every template first, off the devices; then both devices stay open for the whole
        # campaign, and each run rewrites the last run's cluster in place (experiment.mirror).
        templates = {each.database: experiment.ensure_template(install, each.database, TEMPLATES, say)
                     for _, each in pending}
        needed = 2 * max(experiment.template_facts(template)["bytes"] for template in templates.values())
        with open_device(settings["wal_device"], needed) as wal, open_device(device, needed) as opened:
            for index, each in pending:
                opened.refresh()  # the last run's files are about to change behind the mount's back
                say(f"[{index + 1}/{len(runs)}] {each.workload} {each.policy} {each.variant} n_w={each.n_w} "
                    f"pool={each.pool_fraction} repetition {each.repetition}")
                measured = experiment.measure(
                    install, each, templates[each.database], data_dir=opened.io_dir / "data",
                    wal_dir=wal.io_dir / f"wal-{device}", placed_data_dir=opened.prepare_dir / "data",
                    settings=settings["server"], written_pages=opened.written_pages, keep=kept[index].with_suffix(""))
                row = {"device": device, **facts,
                       "database_kind": each.database.kind, "database_size": each.database.size,
                       **{k: v for k, v in each.plain().items() if k != "database"}, **measured,
                       "device_writes_source": opened.written_pages_source}
                kept_runs.keep(each.key(), row)
                say(f"    runtime {row['runtime_s']:.3f} s, {row['misses']} misses, {row['logical_writes']} writes")
    return [{**kept_runs.get(each.key()), **facts} for each in runs], kept
