"""A page-access trace of TPC-C on our PostgreSQL, for Chapter 6's TPC-C rows (Figures 6.7, 6.13 and
Table 6.5: ReStore's policies replayed on it).

    from ace import trace
    facts = trace.record_tpcc(install, warehouses=1, transactions=2000, work=Path("scratch/tpcc-trace"),
                              out=Path("buffer.trace"))

The TPC-C template cluster of `warehouses` (the one Chapter 4's runs copy, loaded once) is copied
and run by one client for `transactions` of the standard mix with `buffer_trace_file` on: every
shared-buffer request of every backend, a line `pid,tablespace,database,relfilenode,fork,block,op`
(restore.traces.convert_postgres turns it into page requests). One client, a fixed pgbench seed and
no autovacuum, so that the same build and template give the same requests; the pool is the thesis's
6 % of the database, which decides when a request is a write-back but not which pages are asked
for."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Callable

from . import experiment, tpcc
from .campaign import TEMPLATES
from .server import Server, check_reachable, hand_over

POOL_FRACTION = 0.06  # the thesis's default pool (Chapter 4)
SEED = 1


def record_tpcc(install: Path, *, warehouses: int, transactions: int, work: Path, out: Path,
                say: Callable[[str], None] = print) -> dict:
    """Write the trace of `transactions` TPC-C transactions to `out`; its facts (requests, bytes)."""
    if warehouses < 1 or transactions < 1:
        raise experiment.ExperimentError(f"a TPC-C trace needs at least 1 warehouse and 1 transaction, not "
                                         f"{warehouses} and {transactions}")
    template = experiment.ensure_template(install, experiment.Database("tpcc", warehouses, 100, SEED), TEMPLATES,
                                          say)
    work = Path(work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    check_reachable(work)  # the server's unprivileged user must reach its cluster there
    hand_over(work)
    experiment.place_cluster(template, work / "data", work / "wal")
    traced = work / "buffer.trace"
    root = Path(tempfile.mkdtemp(prefix="ace-trace-", dir="/tmp"))  # the socket: short, local
    hand_over(root)
    try:
        pg = Server(install, root, data=work / "data")
        pg.configure({**pg.connection_settings(), "autovacuum": False,
                      "shared_buffers": f"{experiment.pool_pages(template, POOL_FRACTION) * 8}kB",
                      "buffer_trace_file": str(traced.resolve())})
        pg.start()
        try:
            scripts = root / "scripts"
            scripts.mkdir()
            say(f"TPC-C, {warehouses} warehouse(s): {transactions} transactions of the mix, one client, traced")
            experiment.pgbench(pg, ["--no-vacuum", *tpcc.pgbench_variables(warehouses),
                                    *tpcc.write_scripts(scripts, "mix")], 1, transactions, SEED)
        finally:
            pg.stop()  # a clean stop: the trace file is complete and closed
    finally:
        shutil.rmtree(root, ignore_errors=True)
    shutil.move(traced, out)
    shutil.rmtree(work, ignore_errors=True)
    return {"warehouses": warehouses, "transactions": transactions, "bytes": Path(out).stat().st_size}
