"""The page-access trace (buffer_trace_file): every shared-buffer request of every
process, in the documented format, for the ReStore chapter's TPC-C trace."""

from __future__ import annotations

import re

import pytest

from ace.server import Server

pytestmark = pytest.mark.e2e

LINE = re.compile(r"^(\d+),(\d+),(\d+),(\d+),(\d+),(\d+),([RW])$")


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
