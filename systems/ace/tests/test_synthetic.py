"""The synthetic workloads of thesis Table 4.2: the pgbench scripts, and the mix they produce
at the page level, read from the patched server's own buffer trace."""

from __future__ import annotations

import collections

import pytest

from ace import synthetic
from ace.server import Server

MS = synthetic.SyntheticWorkload(read_pct=50, hot_ops_pct=90, hot_pages_pct=10)


def test_the_script_splits_keys_at_the_hot_set():
    script = MS.script(scale=2)
    assert "\\set aid random(1, 20000)" in script          # the first 10 % of 200,000 accounts
    assert "\\set aid random(20001, 200000)" in script
    assert "\\if :where <= 90" in script and "\\if :op <= 50" in script
    assert script.count("SELECT abalance") == 1 and script.count("UPDATE pgbench_accounts") == 1


@pytest.mark.parametrize("fields, message", [
    ({"read_pct": 101, "hot_ops_pct": 90, "hot_pages_pct": 10}, "read_pct must be between 0 and 100"),
    ({"read_pct": 50, "hot_ops_pct": 90, "hot_pages_pct": 100}, "hot_pages_pct must be strictly between"),
])
def test_bad_workloads_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        synthetic.SyntheticWorkload(**fields)


def test_the_load_generates_rows_in_the_server_with_the_fill_factor():
    arguments = synthetic.load_arguments(scale=3, fillfactor=90)
    assert arguments[arguments.index("-s") + 1] == "3" and arguments[arguments.index("-F") + 1] == "90"
    assert "G" in arguments[arguments.index("-I") + 1]  # server-side generation: accounts in key order


@pytest.mark.e2e
@pytest.mark.parametrize("workload", [MS, synthetic.SyntheticWorkload(10, 90, 10),
                                      synthetic.SyntheticWorkload(50, 50, 50)], ids=["MS", "WIS", "MU"])
def test_pages_see_the_declared_mix(install, server_root, workload):
    """On pgbench_accounts' heap: the share of requests on the first hot_pages_pct % of its pages
    is hot_ops_pct %, and modified pages per transaction are the write share."""
    transactions, scale = 4000, 2
    trace = server_root / "trace.csv"
    settings = {"shared_buffers": "16MB", "autovacuum": False}
    pg = Server(install, server_root, settings)
    with pg:
        pg.client(["pgbench", *synthetic.load_arguments(scale, 90)])
        filenode = pg.sql("SELECT pg_relation_filenode('pgbench_accounts')")
        pages = int(pg.sql("SELECT pg_relation_size('pgbench_accounts')")) // 8192
    pg.configure({"buffer_trace_file": str(trace)})  # set at server start
    with pg:
        pg.client(["pgbench", "-n", "-c", "1", "-t", str(transactions), "--random-seed=3",
                   *workload.pgbench_arguments(server_root, scale)])
        updates = int(pg.sql("SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'pgbench_accounts'"))
        pages_after = int(pg.sql("SELECT pg_relation_size('pgbench_accounts')")) // 8192
    # Page requests (R; a modification, W, is not one per update: pruning a page marks it too).
    requests = collections.Counter()
    for line in trace.read_text().splitlines():
        _, _, _, relfilenode, fork, block, op = line.split(",")
        if relfilenode == filenode and fork == "0" and op == "R":
            requests[int(block) < pages * workload.hot_pages_pct / 100] += 1
    hot_share = requests[True] / (requests[True] + requests[False])
    assert hot_share == pytest.approx(workload.hot_ops_pct / 100, abs=0.03)
    assert updates / transactions == pytest.approx(1 - workload.read_pct / 100, abs=0.03)
    # updates stay on their pages (HOT, thanks to the fill factor): the table did not grow,
    # so the hot pages stay the hot ones for the whole run
    assert pages_after == pages
