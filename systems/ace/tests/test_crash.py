"""Crash safety: SIGKILL every server process in the middle of a write-heavy pgbench run
(ACE writing batches all the while), restart, and check that nothing committed is lost
and nothing is corrupt: pgbench's balances against its history, every heap and B-tree
with amcheck, and every page's checksum with pg_checksums."""

from __future__ import annotations

import subprocess
import time

import pytest

from ace.server import Server, as_server_user
from ace_cases import combinations, policy_settings

pytestmark = pytest.mark.e2e

SCALE = 4  # 400,000 accounts, about 60 MB: 60 times the 1 MB pool
CLIENTS = 4
CRASH_AFTER_S = 8


def balances(server: Server) -> dict[str, int]:
    """Each table's sum of balances, and the sum of the history's deltas: every pgbench
    transaction adds the same delta to one account, teller and branch and logs it once."""
    row = server.sql("SELECT (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts),"
                     " (SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers),"
                     " (SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches),"
                     " (SELECT coalesce(sum(delta), 0) FROM pgbench_history),"
                     " (SELECT count(*) FROM pgbench_history)")
    accounts, tellers, branches, history, transactions = map(int, row.split("|"))
    return {"accounts": accounts, "tellers": tellers, "branches": branches, "history": history,
            "transactions": transactions}


def corruption(server: Server) -> list[str]:
    """amcheck's findings: every heap relation (verify_heapam) and every B-tree, including
    whether each heap tuple has its index entry (bt_index_check with heapallindexed)."""
    server.sql("CREATE EXTENSION IF NOT EXISTS amcheck")
    heap = server.sql(
        "SELECT c.relname || ' block ' || v.blkno || ': ' || v.msg FROM pg_class c,"
        " LATERAL verify_heapam(c.oid, on_error_stop => false) v"
        " WHERE c.relkind IN ('r', 'm', 't') AND c.relpersistence = 'p'")
    # bt_index_check raises an error on corruption (psql then fails the test with its message)
    checked = server.sql(
        "SELECT count(bt_index_check(c.oid, true)) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'btree' AND c.relpersistence = 'p' AND i.indisvalid")
    assert int(checked) > 0
    return [line for line in heap.splitlines() if line]


@pytest.mark.parametrize("policy,ace", combinations())
def test_no_committed_transaction_lost_after_sigkill(install, server_root, policy, ace):
    settings = {**policy_settings(policy, ace), "fsync": True, "synchronous_commit": True,
                "checkpoint_timeout": "30s", "max_wal_size": "64MB"}
    server = Server(install, server_root / "pg", settings).initdb().start()
    try:
        server.client(["pgbench", "-i", "-q", "-s", str(SCALE), "postgres"])
        server.sql("CREATE EXTENSION pg_ace; SELECT pg_ace_reset()")
        # a write-heavy run, longer than we let it live
        run = subprocess.Popen([str(install / "bin/pgbench"), "-c", str(CLIENTS), "-j", "2", "-T", "600", "-n",
                                "postgres"], env=server.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
        time.sleep(CRASH_AFTER_S)
        before = server.counters()
        killed = server.crash()
        run.wait(timeout=60)  # its connections broke
        assert killed >= 1 + CLIENTS
        # the pool was busy evicting dirty pages, in batches when ACE is on
        assert before["dirty_victims"] > 0
        assert (before["ace_batches"] > 0) == ace

        server.start()  # crash recovery replays the WAL
        after = balances(server)
        assert after["transactions"] > 0
        assert after["accounts"] == after["tellers"] == after["branches"] == after["history"], after
        assert corruption(server) == []
    finally:
        server.stop()
    checksums = subprocess.run(as_server_user([str(install / "bin/pg_checksums"), "--check", "-D",
                                               str(server.data)]), capture_output=True, text=True)
    assert checksums.returncode == 0, checksums.stdout + checksums.stderr
    assert "Bad checksums:  0" in checksums.stdout
