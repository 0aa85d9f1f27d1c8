"""One measured run of Chapter 4's driver on an emulated SSD: the cluster on the device with
its WAL elsewhere, the same work for every configuration, and what a run records."""

from __future__ import annotations

import json
import os

import pytest

from ace import experiment
from ace.experiment import Database, Run

pytestmark = pytest.mark.e2e

emussd = pytest.importorskip("emussd.harness")
if not emussd.fuse_available():
    pytest.skip("/dev/fuse is absent: the run needs emussd", allow_module_level=True)


def _run(variant: str, **fields) -> Run:
    values = {"database": Database("synthetic", 1), "workload": "WIS", "policy": "lru", "variant": variant,
              "n_w": 4, "n_e": 4, "pool_fraction": 0.1, "clients": 1, "transactions": 600, "warmup_transactions": 300,
              "seed": 5, "repetition": 0, "read_pct": 10, "hot_ops_pct": 90, "hot_pages_pct": 10}
    return Run(**{**values, **fields})


@pytest.mark.wall_clock  # ACE must be faster than the baseline
def test_a_run_on_an_emulated_ssd(install, server_root):
    binary = emussd.build(emussd.DEFAULT_BUILD_DIR)
    templates, wal = server_root / "templates", server_root / "wal"
    template = experiment.ensure_template(install, Database("synthetic", 1), templates, progress=lambda _: None)
    assert experiment.ensure_template(install, Database("synthetic", 1), templates) == template  # loaded once
    settings = {"synchronous_commit": False, "autovacuum": False}
    rows = {}
    for variant in ("baseline", "ace"):
        device = emussd.Mount(binary, server_root / f"dev-{variant}", read_latency_us=500, alpha=3, k_r=8, k_w=4,
                              page_size=8192)
        with device:
            stats = device.mountpoint / emussd.STATS_NAME
            rows[variant] = experiment.measure(
                install, _run(variant), template, data_dir=device.mountpoint / "data",
                placed_data_dir=device.backing / "data", wal_dir=wal / variant, settings=settings,
                written_pages=lambda: json.loads(stats.read_text())["ops"]["write"]["pages"],
                keep=server_root / variant)
            # the WAL lived off the device, behind the pg_wal link
            assert os.readlink(device.backing / "data" / "pg_wal") == str((wal / variant).resolve())
            assert list((wal / variant).glob("0000000*"))
    baseline, ace = rows["baseline"], rows["ace"]
    for row in rows.values():
        assert row["measured_transactions"] == 600 and row["pool_pages"] >= experiment.MIN_POOL_PAGES
        assert row["device_written_pages"] > 0 and row["logical_writes"] > 0
        assert row["runtime_s"] > 0 and row["dirty_pages_after"] >= 0
        assert (server_root / "baseline.pgbench.txt").read_text().startswith("$ pgbench")
    assert baseline["ace_batches"] == 0 and ace["ace_batches"] > 0
    # one client, the same seed: the same requests (but for a few by background processes), and
    # ACE's Writer never changes what is resident under LRU
    assert ace["hits"] + ace["misses"] == pytest.approx(baseline["hits"] + baseline["misses"], rel=0.005)
    assert ace["misses"] == pytest.approx(baseline["misses"], rel=0.01)
    assert ace["runtime_s"] < baseline["runtime_s"]  # write-heavy, alpha 3, k_w 4: batching pays



def test_a_session_answers_as_sql_does_and_reports_an_error(install, server_root):
    from ace.server import Server, ServerError

    with Server(install, server_root) as pg, pg.session() as session:
        assert session.sql("SELECT 1, 'a';") == pg.sql("SELECT 1, 'a'") == "1|a"
        assert session.sql("SELECT generate_series(1, 3)") == "1\n2\n3"
        with pytest.raises(ServerError, match='column "nosuch" does not exist'):
            session.sql("SELECT nosuch")
