"""The page-access trace (buffer_trace_file): every shared-buffer request of every
process, in the documented format, for the ReStore chapter's TPC-C trace."""

from __future__ import annotations

import re

import pytest

from ace.server import Server

pytestmark = pytest.mark.e2e

LINE = re.compile(r"^(\d+),(\d+),(\d+),(\d+),(\d+),(\d+),([RW])$")
FIRST_USER_OID = 16384  # relations below it are the catalog's


def test_the_trace_records_reads_and_writes_of_each_relation(install, server_root):
    trace = server_root / "pg" / "trace.csv"  # in the cluster's directory: the server's user writes it
    with Server(install, server_root / "pg", {"buffer_trace_file": str(trace)}) as server:
        server.client(["pgbench", "-i", "-q", "-s", "1", "postgres"])
        server.client(["pgbench", "-n", "-t", "200", "postgres"])
        accounts = int(server.sql("SELECT relfilenode FROM pg_class WHERE relname = 'pgbench_accounts'"))
        blocks = int(server.sql("SELECT pg_relation_size('pgbench_accounts') / 8192"))
    # every process flushed its buffer when it exited (the server is stopped)
    lines = trace.read_text().splitlines()
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), [line for line, match in zip(lines, parsed) if not match][:5]
    on_accounts = [m for m in parsed if int(m.group(4)) == accounts]
    ops = {m.group(7) for m in on_accounts}
    assert ops == {"R", "W"}
    assert all(int(m.group(6)) < blocks for m in on_accounts)
    assert len({m.group(1) for m in parsed}) > 2  # several processes wrote to it


def test_tpccs_trace_for_chapter_6_asks_for_the_same_table_pages_every_time(install, server_root, tmp_path):
    """ace.trace: one client, pgbench's seed fixed and no autovacuum, so that two recordings from the
    same template read the same pages of TPC-C's relations in the same order. The whole trace is
    not the same: the catalog's lookups and the background writes follow timing, so Chapter 6's
    results on it are measured ones, not checksummed (restore.plan.outputs)."""
    from ace import experiment, trace  # noqa: PLC0415

    reads = []
    for attempt in (1, 2):
        raw = tmp_path / f"buffer-{attempt}.trace"
        facts = trace.record_tpcc(install, warehouses=1, transactions=100, work=server_root / "run", out=raw,
                                  say=lambda message: None)
        assert facts["bytes"] == raw.stat().st_size > 0 and not (server_root / "run").exists()
        parsed = [LINE.match(line) for line in raw.read_text().splitlines()]
        assert all(parsed)
        reads.append([m.groups()[1:6] for m in parsed if int(m.group(4)) >= FIRST_USER_OID and m.group(7) == "R"])
    assert reads[0] == reads[1]
    assert len(reads[0]) > 100 * 10 and len(set(reads[0])) > 100  # tens of pages per transaction
    with pytest.raises(experiment.ExperimentError, match="at least 1 warehouse and 1 transaction"):
        trace.record_tpcc(install, warehouses=1, transactions=0, work=server_root / "run", out=tmp_path / "x")
